package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

func TestCostCommandErrors(t *testing.T) {
	tests := []struct {
		args     []string
		inStderr string
	}{
		{[]string{"cost", "--format", "xml"}, `--format: "xml" is not table, csv or json`},
		{[]string{"cost", "--by", "phase,colour"}, `--by: "colour" is not one of day, model`},
		{[]string{"cost", "--since", "last week"}, `--since: "last week" is not a time`},
		{[]string{"reprice", "--until", "soon"}, `--until: "soon" is not a time`},
		{[]string{"reprice", "--prices", "/nonexistent/prices.yaml"}, "read prices"},
	}
	for _, tt := range tests {
		code, _, stderr := runCapture(t, tt.args...)
		if code != 1 || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("convtrace %q: exit %d, stderr %q; want exit 1 and %q", tt.args, code, stderr, tt.inStderr)
		}
	}
}

// readmeCostQueries returns the SQL of the README's Cost section, on the
// test's database.
func readmeCostQueries(t *testing.T) []string {
	t.Helper()
	section := readmeSection(t, "Cost")
	block := regexp.MustCompile("(?s)```sql\n(.*?)```").FindStringSubmatch(section)
	if block == nil {
		t.Fatal("README has no SQL block in its Cost section")
	}
	var queries []string
	for _, q := range strings.Split(block[1], ";") {
		if q = strings.TrimSpace(q); q != "" {
			queries = append(queries, strings.ReplaceAll(q, "convtrace.conversations", "conversations"))
		}
	}
	return queries
}

// readmeSection returns the README's section headed "## title".
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile("(?s)\n## " + regexp.QuoteMeta(title) + "\n.*?\n## ").FindString(string(readme))
}

// queryText runs query and returns its rows as text.
func queryText(t *testing.T, conn driver.Conn, query string) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), query)
	if err != nil {
		t.Fatalf("%s\n: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := make([]any, len(rows.ColumnTypes()))
		for i, ct := range rows.ColumnTypes() {
			vals[i] = newScanTarget(ct.ScanType())
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatalf("scan %s: %v", query, err)
		}
		var line []string
		for _, v := range vals {
			line = append(line, fmt.Sprint(deref(v)))
		}
		out = append(out, strings.Join(line, " "))
	}
	return out
}

// The cost command, the README's cost queries and both of their totals are
// unchanged when the same batch is delivered twice.
func TestCostCommandAndReadmeQueries(t *testing.T) {
	dsn := testkit.DSN(t)
	if code, out, stderr := runCapture(t, "demo", "--clickhouse", dsn); code != 0 {
		t.Fatalf("demo: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	conn, err := ddl.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	queries := readmeCostQueries(t)
	if len(queries) != 5 {
		t.Fatalf("README Cost section has %d queries, want 5", len(queries))
	}
	for _, q := range queries {
		if strings.Contains(q, "hit_rate") {
			for _, row := range queryText(t, conn, "SELECT max(hit_rate) FROM ("+q+")") {
				if r, err := strconv.ParseFloat(row, 64); err != nil || r > 1 {
					t.Errorf("README cache hit rate %s, above 1:\n%s", row, q)
				}
			}
		}
	}

	snapshot := func() string {
		var b strings.Builder
		for _, format := range []string{"table", "csv", "json"} {
			code, out, stderr := runCapture(t, "cost", "--clickhouse", dsn, "--by", "phase,model", "--format", format)
			if code != 0 {
				t.Fatalf("cost --format %s: exit %d, stderr %q", format, code, stderr)
			}
			b.WriteString(out)
		}
		for _, q := range queries {
			rows := queryText(t, conn, q)
			if len(rows) == 0 {
				t.Errorf("README query returns no rows on the demo data:\n%s", q)
			}
			b.WriteString(strings.Join(rows, "\n") + "\n")
		}
		return b.String()
	}
	before := snapshot()

	code, table, _ := runCapture(t, "cost", "--clickhouse", dsn, "--by", "phase,model")
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	if code != 0 || !regexp.MustCompile(`^\s*PHASE\s+MODEL\s+CALLS\s+TOKENS IN`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^\s*TOTAL\s+13\s+`).MatchString(lines[len(lines)-1]) {
		t.Errorf("cost table: exit %d, want a PHASE MODEL … header and a TOTAL of the demo's 13 calls:\n%s", code, table)
	}
	for _, l := range lines[1:] {
		if len(l) != len(lines[0]) && !strings.Contains(l, "—") {
			t.Errorf("cost table line %q is not aligned with the header %q", l, lines[0])
		}
	}
	_, csvOut, _ := runCapture(t, "cost", "--clickhouse", dsn, "--by", "day", "--format", "csv")
	records, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil || len(records) != 2 || records[0][0] != "day" || records[1][1] != "13" {
		t.Errorf("cost --format csv = %q (%v), want a header and one day of 13 calls", records, err)
	}
	_, jsonOut, _ := runCapture(t, "cost", "--clickhouse", dsn, "--by", "model", "--format", "json")
	var report struct {
		By     []string `json:"by"`
		Totals struct {
			Calls   uint64   `json:"calls"`
			CostUSD *float64 `json:"cost_usd"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(jsonOut), &report); err != nil || report.Totals.Calls != 13 || report.Totals.CostUSD == nil {
		t.Errorf("cost --format json = %s (%v), want 13 calls with a cost", jsonOut, err)
	}
	// Every provider and phase, ollama's calls without usage and the failed
	// verify call included, counts its calls.
	_, byOut, _ := runCapture(t, "cost", "--clickhouse", dsn, "--by", "provider,phase", "--format", "csv")
	calls := map[string]string{}
	records, _ = csv.NewReader(strings.NewReader(byOut)).ReadAll()
	for _, r := range records[1:] {
		calls[r[0]+"/"+r[1]] = r[2]
	}
	for _, want := range []string{"ollama/review", "anthropic/verify"} {
		if calls[want] == "" || calls[want] == "0" {
			t.Errorf("cost --by provider,phase has no calls for %s:\n%s", want, byOut)
		}
	}

	// Deliver every turn again: a second copy of each row in a new part.
	turns := queryText(t, conn, "SELECT count() FROM conversations")
	cols := strings.Join(schema.TurnColumns, ", ")
	if err := conn.Exec(context.Background(), "INSERT INTO conversations ("+cols+") SELECT "+cols+" FROM conversations"); err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, conn, "SELECT count() / 2 FROM conversations"); fmt.Sprint(got) != fmt.Sprint(turns) {
		t.Fatalf("rows after the second delivery: twice %v, want twice %v", got, turns)
	}
	if after := snapshot(); after != before {
		t.Errorf("a second delivery changed the totals:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// newScanTarget returns a pointer to a new value of a column's scan type.
func newScanTarget(typ reflect.Type) any { return reflect.New(typ).Interface() }

// deref returns what a scan target holds: nil for a NULL.
func deref(p any) any {
	v := reflect.ValueOf(p).Elem()
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	return v.Interface()
}

// The README's cache hit rate stays at or under 1 on a row stored before
// input counted the cache: Claude Code's raw input 35 beside 13,700 read
// and 4,430 written gave 391.4.
func TestReadmeHitRateOnOldRows(t *testing.T) {
	conn, _ := testkit.Open(t)
	in, read, write := uint32(35), uint32(13_700), uint32(4_430)
	row := schema.Turn{TurnID: "s1:response:1", SpanID: "s1", ThreadID: "old", Role: schema.RoleResponse, Seq: 1,
		Model: "claude-sonnet-4-5", TokensIn: &in, TokensCacheRead: &read, TokensCacheWrite: &write, StartNS: 1, Status: schema.StatusOK}
	batch, err := conn.PrepareBatch(context.Background(), "INSERT INTO conversations ("+strings.Join(schema.TurnColumns, ", ")+")")
	if err != nil {
		t.Fatal(err)
	}
	if err := batch.Append(row.Values()...); err != nil {
		t.Fatal(err)
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	for _, q := range readmeCostQueries(t) {
		if strings.Contains(q, "hit_rate") {
			if got := queryText(t, conn, "SELECT hit_rate FROM ("+q+")"); strings.Join(got, ",") != "0.756" {
				t.Errorf("README hit rate on the old row = %v, want 0.756", got)
			}
		}
	}
}

// The demo counts calls as convtrace cost and the viewer's /cost do:
// provider calls, its tool runs apart; and a tool run whose writer gave it
// usage (and so a cost source) is still no call.
func TestDemoCountsCallsAsCostDoes(t *testing.T) {
	dsn := testkit.DSN(t)
	code, _, stderr := runCapture(t, "demo", "--clickhouse", dsn)
	m := regexp.MustCompile(`recorded demo thread (\S+): (\d+) calls, (\d+) tool runs, `).FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("demo: exit %d, stderr %q; want “recorded demo thread T: N calls, M tool runs, …”", code, stderr)
	}
	costCalls := func() uint64 {
		t.Helper()
		_, out, _ := runCapture(t, "cost", "--clickhouse", dsn, "--format", "json")
		var r struct {
			Totals struct {
				Calls uint64 `json:"calls"`
			} `json:"totals"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("cost --format json: %v\n%s", err, out)
		}
		return r.Totals.Calls
	}
	if got := costCalls(); m[2] != strconv.FormatUint(got, 10) || m[3] != "4" {
		t.Errorf("demo says %s calls and %s tool runs, convtrace cost %d calls; want the same calls and 4 tool runs", m[2], m[3], got)
	}

	conn, err := ddl.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var start uint64
	if err := conn.QueryRow(context.Background(), "SELECT max(start_ns) FROM conversations").Scan(&start); err != nil {
		t.Fatal(err)
	}
	in := uint32(12)
	tool := schema.Turn{TraceID: "t-tool", SpanID: "tool-1", TurnID: schema.TurnID("tool-1", schema.RoleToolResult, 1), Project: "demo",
		ThreadID: m[1], Role: schema.RoleToolResult, Seq: 1, Operation: schema.OperationExecuteTool, ToolName: "search",
		StartNS: start, TokensIn: &in} // no cost source: the writer's default makes it "unknown"
	before := costCalls()
	testkit.InsertTurns(t, conn, tool)
	if after := costCalls(); after != before {
		t.Errorf("a tool run with usage: convtrace cost counts %d calls, %d before it", after, before)
	}
}
