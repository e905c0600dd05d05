package transfer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/store/transfer"
	"github.com/convtrace/convtrace/viewer"
)

// get answers GET path from h, failing on anything but 200.
func get(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1:8080"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, rec.Code, body)
	}
	return string(body)
}

// answers returns every viewer API answer about conn's threads, by path:
// the threads list (archived too), each thread's page, turns, markdown,
// cost and context, each turn's whole content and attributes, each trace
// and each span's turns, and the cost report.
func answers(t *testing.T, conn *topology.Conn) map[string]string {
	t.Helper()
	h := viewer.New(conn).Handler()
	got := map[string]string{}
	read := func(path string) string {
		body := get(t, h, path)
		got[path] = body
		return body
	}
	var threads []string
	for _, list := range []string{"/api/threads?limit=200", "/api/threads?limit=200&archived=1"} {
		var a struct {
			Threads []struct {
				ID string `json:"thread_id"`
			} `json:"threads"`
		}
		if err := json.Unmarshal([]byte(read(list)), &a); err != nil {
			t.Fatal(err)
		}
		for _, th := range a.Threads {
			threads = append(threads, th.ID)
		}
	}
	if len(threads) == 0 {
		t.Fatal("no threads listed")
	}
	traces := map[string]bool{}
	for _, id := range threads {
		p := "/api/threads/" + url.PathEscape(id)
		read(p)
		read(p + "/markdown")
		read(p + "/cost")
		read(p + "/context")
		var turns struct {
			Turns []struct {
				TurnID  string `json:"turn_id"`
				TraceID string `json:"trace_id"`
				SpanID  string `json:"span_id"`
			} `json:"turns"`
		}
		if err := json.Unmarshal([]byte(read(p+"/turns?limit=1000&internal=1")), &turns); err != nil {
			t.Fatal(err)
		}
		read(p + "/turns?limit=1000")
		for _, tr := range turns.Turns {
			tp := p + "/turns/" + url.PathEscape(tr.TurnID)
			read(tp + "/content")
			read(tp + "/attributes")
			if !traces[tr.TraceID] {
				traces[tr.TraceID] = true
				read("/api/traces/" + url.PathEscape(tr.TraceID))
			}
			read("/api/traces/" + url.PathEscape(tr.TraceID) + "/spans/" + url.PathEscape(tr.SpanID) + "/turns")
		}
	}
	for _, q := range []string{"step", "한국어", "answer 2"} {
		read("/api/search?q=" + url.QueryEscape(q))
	}
	// A fixed range: a relative one is answered with the times it meant.
	r := "from=2025-06-01&to=" + time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	for _, q := range []string{r, r + "&by=model,phase,speaker", r + "&project=alpha"} {
		read("/api/cost?" + q)
	}
	return got
}

// tables dumps every table an export carries, one copy of each row, so
// that an import is seen to store every column as the source holds it:
// prompts split from their history as the writer splits them included.
func tables(t *testing.T, conn driver.Conn) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT * FROM conversations ORDER BY thread_id, turn_id, revision DESC LIMIT 1 BY thread_id, turn_id`,
		`SELECT thread_id, id, any(message) FROM messages GROUP BY thread_id, id ORDER BY thread_id, id`,
		`SELECT * FROM spans ORDER BY trace_id, span_id LIMIT 1 BY trace_id, span_id`,
		`SELECT thread_id, turn_id, argMax(starred, updated_ns), argMax(memo, updated_ns), max(updated_ns) FROM turn_notes GROUP BY thread_id, turn_id ORDER BY thread_id, turn_id`,
		`SELECT thread_id, argMax(title, updated_ns), argMax(archived, updated_ns), argMax(starred, updated_ns), max(updated_ns) FROM thread_meta GROUP BY thread_id ORDER BY thread_id`,
	} {
		b.WriteString(dump(t, conn, q))
	}
	return b.String()
}

// dump returns the rows of a query as text, a line each.
func dump(t *testing.T, conn driver.Conn, q string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var b strings.Builder
	cols := rows.ColumnTypes()
	for rows.Next() {
		vals := make([]any, len(cols))
		for i, c := range cols {
			vals[i] = newOf(c.ScanType())
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			fmt.Fprintf(&b, "%s=%v\t", cols[i].Name(), deref(v))
		}
		b.WriteString("\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// costTotals returns the README's cost SQL over cost_cells and the cost
// report's totals, as text.
func costTotals(t *testing.T, conn *topology.Conn) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	b.WriteString(dump(t, conn, `
SELECT project, day, model, provider, phase, speaker, agent, sum(calls), sum(tokens_in), sum(tokens_out),
       sum(tokens_cache_read), sum(tokens_cache_write), sum(tokens_reasoning), round(sum(cost_usd), 9), sum(unpriced)
FROM cost_cells
GROUP BY project, day, model, provider, phase, speaker, agent
ORDER BY project, day, model, provider, phase, speaker, agent`))
	f, err := store.ParseCostRange("400d", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cells, err := store.New(conn, 0, 0).QueryCost(ctx, f, pricing.DefaultPrices())
	if err != nil {
		t.Fatal(err)
	}
	var total store.CostUsage
	for _, c := range cells {
		total.Add(c.CostUsage)
	}
	js, _ := json.Marshal(total)
	b.Write(js)
	return b.String()
}

// exportAll exports every thread of conn in format.
func exportAll(t *testing.T, conn *topology.Conn, format transfer.Format) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := transfer.Export(context.Background(), conn, &buf, store.ExportFilter{}, format); err != nil {
		t.Fatalf("export %s: %v", format, err)
	}
	return buf.Bytes()
}

func importBytes(t *testing.T, conn *topology.Conn, b []byte, format transfer.Format) transfer.Result {
	t.Helper()
	res, err := transfer.Import(context.Background(), conn, bytes.NewReader(b), "export."+string(format))
	if err != nil {
		t.Fatalf("import %s: %v", format, err)
	}
	return res
}

// diff reports the answers that differ between want and got.
func diff(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range slices.Compact(paths) {
		if want[p] != got[p] {
			t.Errorf("%s: GET %s differs:\nwant %s\n got %s", what, p, want[p], got[p])
		}
	}
}

// Export, then import into a fresh database: every API answer and every
// cost total is the same, and a second import stores nothing. For both
// formats.
func TestRoundTrip(t *testing.T) {
	src, _ := fixture(t)
	wantCost := costTotals(t, src)
	wantRows := tables(t, src)
	want := answers(t, src)
	for _, c := range []struct {
		format transfer.Format
		long   bool // every thread read as a long one, alone and a page at a time
	}{{transfer.JSON, false}, {transfer.JSONL, false}, {transfer.JSON, true}} {
		format := c.format
		t.Run(fmt.Sprintf("%s/long=%v", format, c.long), func(t *testing.T) {
			if c.long {
				transfer.SetGroupTurns(t, 1)
			}
			file := exportAll(t, src, format)
			dst, _ := testkit.Open(t)
			res := importBytes(t, dst, file, format)
			if res.Imported.Turns == 0 || res.Imported.Spans == 0 || res.Imported.Notes != 2 || res.Imported.Threads != 4 ||
				res.Skipped != (transfer.Counts{}) || res.BadLineCount != 0 {
				t.Errorf("first import: %+v", res)
			}
			// The README's cost SQL is exact before any viewer has looked.
			if got := costTotals(t, dst); got != wantCost {
				t.Errorf("cost totals differ:\nwant %s\n got %s", wantCost, got)
			}
			if got := tables(t, dst); got != wantRows {
				t.Errorf("tables differ:\nwant %s\n got %s", wantRows, got)
			}
			got := answers(t, dst)
			diff(t, "after import", want, got)
			if again := exportAll(t, dst, format); !sameExport(file, again) {
				t.Errorf("the imported database exports differently:\n%s\n---\n%s", file, again)
			}

			res2 := importBytes(t, dst, file, format)
			if res2.Imported != (transfer.Counts{}) || res2.Skipped != res.Imported {
				t.Errorf("second import: %+v, want nothing imported and %+v skipped", res2, res.Imported)
			}
			diff(t, "after a second import", want, answers(t, dst))
			if got := costTotals(t, dst); got != wantCost {
				t.Errorf("cost totals differ after a second import:\nwant %s\n got %s", wantCost, got)
			}
		})
	}
}

// sameExport compares two exports but for exportedAt.
func sameExport(a, b []byte) bool {
	strip := func(x []byte) string {
		s := string(x)
		i := strings.Index(s, `"exportedAt":`)
		j := i + strings.Index(s[i:], `Z"`)
		return s[:i] + s[j:]
	}
	return strip(a) == strip(b)
}
