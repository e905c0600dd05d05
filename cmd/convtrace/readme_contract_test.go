package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/topology"
)

// The README's curl example of the attribute contract, sent as it stands
// to a real receiver, stores a turn with the phase, round and speaker it
// sets: the documented contract is the one the collector reads.
func TestReadmeContractExample(t *testing.T) {
	section := readmeSection(t, "Attribute contract")
	m := regexp.MustCompile("(?s)```sh\ncurl -sS http://127.0.0.1:4318(/v1/traces) -H 'Content-Type: application/json' -d '(.*?)'\n```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("README's Attribute contract section has no curl example of OTLP/JSON")
	}
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	srv := httptest.NewServer(otlpreceiver.NewHTTPHandler(in))
	defer srv.Close()
	resp, err := http.Post(srv.URL+m[1], "application/json", strings.NewReader(m[2]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST the README's example: status %d", resp.StatusCode)
	}
	got := queryText(t, conn, `SELECT thread_id, project, phase, round, speaker, role, content, tokens_in
FROM conversations FINAL WHERE span_id = 'eee19b7ec3c1b174' ORDER BY seq`)
	want := []string{
		`issue-42 shipcode review 1 codex-critic prompt [{"role":"user","parts":[{"type":"text","content":"Review the plan"}]}] <nil>`,
		`issue-42 shipcode review 1 codex-critic response Approve, with one change 120`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's example stored:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The README's query that puts a thread's prompts back together from their
// stored history gives, for every prompt of the demo, what the viewer
// shows of it, byte for byte.
func TestReadmePromptQuery(t *testing.T) {
	section := readmeSection(t, "Query with SQL")
	m := regexp.MustCompile("(?s)```sql\n(-- Every prompt of one thread, whole.*?);\n```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("README's Query with SQL section has no query that puts prompts back together")
	}
	conn, thread, inDemo := readmeDemo(t)
	got := queryText(t, conn, strings.ReplaceAll(inDemo(m[1]), "'issue-42'", "'"+thread+"'"))

	reads := store.New(conn, 100, time.Minute)
	turns, err := reads.Turns(context.Background(), thread, store.TurnFilter{Role: schema.RolePrompt}, 1000, store.AllContent)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	repeats := 0
	for _, tu := range turns {
		want = append(want, tu.Speaker+" "+tu.Phase+" "+tu.Content)
		if strings.Contains(tu.Content, `"role":"assistant"`) {
			repeats++
		}
	}
	if repeats == 0 {
		t.Fatal("no prompt of the demo repeats history: the query is not put to the test")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's query gives:\n%s\nthe viewer:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The README's cost by phase reads the cost_cells view: on the demo, it
// gives what conversations FINAL gives.
func TestReadmeCostByPhase(t *testing.T) {
	section := readmeSection(t, "Query with SQL")
	m := regexp.MustCompile("(?s)```sql\n(-- Tokens and cost per phase.*?);\n").FindStringSubmatch(section)
	if m == nil || !strings.Contains(m[1], "cost_cells") {
		t.Fatal("README's Query with SQL section has no cost by phase over cost_cells")
	}
	conn, _, inDemo := readmeDemo(t)
	got := queryText(t, conn, inDemo(m[1]))
	want := queryText(t, conn, `SELECT phase, sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out, round(sum(cost_usd), 6) AS cost
FROM conversations FINAL WHERE cost_source != '' GROUP BY phase ORDER BY cost DESC`)
	if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's cost by phase gives:\n%s\nconversations FINAL:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// readmeDemo records the demo in a fresh database and returns a connection
// to it, the demo's thread, and what makes a README query (which names the
// convtrace database) read that database.
func readmeDemo(t *testing.T) (*topology.Conn, string, func(string) string) {
	t.Helper()
	conn, dsn := testkit.Open(t)
	code, out, stderr := runCapture(t, "demo", "--clickhouse", dsn)
	if code != 0 {
		t.Fatalf("demo: exit %d, stderr %q", code, stderr)
	}
	db := dsn[strings.LastIndex(dsn, "/")+1:]
	return conn, strings.TrimSpace(out), func(q string) string { return strings.ReplaceAll(q, "convtrace.", db+".") }
}
