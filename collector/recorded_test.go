package collector

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/collector/otlpwire"
	"github.com/convtrace/convtrace/internal/testkit"
)

// Recorded sources under testdata/recorded/<kind>/<source>/ are what real
// third-party software sent over OTLP (internal/frameworks and
// internal/agentcheck record them): NAME.traces.json and NAME.logs.json,
// each every request of one run merged, and NAME.stored.json the calls
// they must be stored as. `go test -run RecordedSources -update` rewrites
// the stored calls; review the diff before keeping it.
//
// Each is stored twice, in databases of its own: sent whole (every span
// in one request, then every record in another), and torn apart (each
// span and record its own request, the spans shuffled among the records,
// spread over two collector instances, one restarted midway, some
// requests sent twice). Both must store the same calls, each turn once.

// storedTurn is what a recorded source's turns are compared on.
type storedTurn struct {
	TurnID     string `json:"turn_id"`
	Thread     string `json:"thread"`
	Role       string `json:"role"`
	Speaker    string `json:"speaker,omitempty"`
	Provider   string `json:"provider,omitempty"`
	Model      string `json:"model,omitempty"`
	Tool       string `json:"tool,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	Content    string `json:"content"`
	TokensIn   string `json:"tokens_in,omitempty"`
	TokensOut  string `json:"tokens_out,omitempty"`
	CacheRead  string `json:"cache_read,omitempty"`
	Reasoning  string `json:"reasoning,omitempty"`
	Cost       string `json:"cost,omitempty"`
	CostSource string `json:"cost_source,omitempty"`
	Status     string `json:"status"`
}

const selectStored = `
SELECT turn_id, thread_id, role, speaker, provider, model, tool_name, tool_call_id, content,
       ifNull(toString(tokens_in), ''), ifNull(toString(tokens_out), ''), ifNull(toString(tokens_cache_read), ''),
       ifNull(toString(tokens_reasoning), ''), ifNull(toString(round(cost_usd, 9)), ''), cost_source, status
FROM conversations FINAL
ORDER BY thread_id, start_ns, turn_id`

func readStored(t *testing.T, conn driver.Conn) []storedTurn {
	t.Helper()
	rows, err := conn.Query(context.Background(), selectStored)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storedTurn
	for rows.Next() {
		var s storedTurn
		if err := rows.Scan(&s.TurnID, &s.Thread, &s.Role, &s.Speaker, &s.Provider, &s.Model, &s.Tool, &s.ToolCallID, &s.Content,
			&s.TokensIn, &s.TokensOut, &s.CacheRead, &s.Reasoning, &s.Cost, &s.CostSource, &s.Status); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// recordedRun is one recorded source's requests, split into their spans
// and log records.
type recordedRun struct {
	spans []*tracepb.ResourceSpans // one span each
	logs  []*logspb.ResourceLogs   // one record each
}

func readRecorded(t *testing.T, base string) recordedRun {
	t.Helper()
	var run recordedRun
	if data, err := os.ReadFile(base + ".traces.json"); err == nil {
		var req coltracepb.ExportTraceServiceRequest
		if err := otlpwire.DecodeJSON(data, &req); err != nil {
			t.Fatalf("%s.traces.json: %v", base, err)
		}
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					run.spans = append(run.spans, &tracepb.ResourceSpans{Resource: rs.GetResource(),
						ScopeSpans: []*tracepb.ScopeSpans{{Scope: ss.GetScope(), Spans: []*tracepb.Span{s}}}})
				}
			}
		}
	}
	if data, err := os.ReadFile(base + ".logs.json"); err == nil {
		var req collogspb.ExportLogsServiceRequest
		if err := otlpwire.DecodeJSON(data, &req); err != nil {
			t.Fatalf("%s.logs.json: %v", base, err)
		}
		for _, rl := range req.GetResourceLogs() {
			for _, sl := range rl.GetScopeLogs() {
				for _, l := range sl.GetLogRecords() {
					run.logs = append(run.logs, &logspb.ResourceLogs{Resource: rl.GetResource(),
						ScopeLogs: []*logspb.ScopeLogs{{Scope: sl.GetScope(), LogRecords: []*logspb.LogRecord{l}}}})
				}
			}
		}
	}
	if run.spans == nil && run.logs == nil {
		t.Fatalf("recorded source %s has neither .traces.json nor .logs.json", base)
	}
	return run
}

// settle waits until the stored turns stop changing for longer than the
// join window, so every staged call was written.
func settle(t *testing.T, conn driver.Conn, window time.Duration, atLeast int) []storedTurn {
	t.Helper()
	var last []storedTurn
	stable := time.Now()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got := readStored(t, conn)
		if !slices.Equal(got, last) {
			last, stable = got, time.Now()
			continue
		}
		// A loaded machine may pause the stager's sweeps longer than
		// the window: the turns a whole delivery stored are awaited.
		if len(last) >= atLeast && time.Since(stable) > 2*window+time.Second {
			return last
		}
	}
	t.Fatalf("the stored turns did not settle in 90 s (%d of at least %d)", len(last), atLeast)
	return nil
}

func TestRecordedSources(t *testing.T) {
	bases, err := filepath.Glob("testdata/recorded/*/*/*.traces.json")
	if err != nil {
		t.Fatal(err)
	}
	logsOnly, _ := filepath.Glob("testdata/recorded/*/*/*.logs.json")
	for _, l := range logsOnly {
		if b := strings.TrimSuffix(l, ".logs.json") + ".traces.json"; !slices.Contains(bases, b) {
			bases = append(bases, b)
		}
	}
	if len(bases) == 0 {
		t.Fatal("no recorded sources under testdata/recorded")
	}
	const window = 500 * time.Millisecond
	for _, b := range bases {
		base := strings.TrimSuffix(b, ".traces.json")
		name := strings.TrimPrefix(base, "testdata/recorded/")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run := readRecorded(t, base)
			ctx := context.Background()

			// Whole: the spans in one request, the records in another.
			wholeConn, wholeDSN := testkit.Open(t)
			in, err := NewIngester(wholeDSN, WithJoinWindow(window), WithFlushInterval(10*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			if len(run.spans) > 0 {
				if _, err := in.Traces(ctx, run.spans); err != nil {
					t.Fatal(err)
				}
			}
			if len(run.logs) > 0 {
				if _, err := in.Logs(ctx, run.logs); err != nil {
					t.Fatal(err)
				}
			}
			whole := settle(t, wholeConn, window, 0)
			_ = in.Shutdown(ctx)

			// Torn: each span and record alone, over two instances, the
			// first restarted midway, one in five twice. The spans come in
			// a shuffled order, interleaved at random with the records,
			// which keep the order an SDK emits them in (records of one
			// instant are put in conversation order by that order alone).
			tornConn, tornDSN := testkit.Open(t)
			is := &instances{t: t, dsn: tornDSN}
			is.all = []*Ingester{is.start(), is.start()}
			defer func() {
				for _, in := range is.all {
					_ = in.Shutdown(ctx)
				}
			}()
			type req struct {
				spans *tracepb.ResourceSpans
				logs  *logspb.ResourceLogs
			}
			r := rand.New(rand.NewPCG(uint64(len(run.spans)+len(run.logs)), 7))
			spans := slices.Clone(run.spans)
			r.Shuffle(len(spans), func(i, j int) { spans[i], spans[j] = spans[j], spans[i] })
			var reqs []req
			for logs := run.logs; len(spans)+len(logs) > 0; {
				if len(logs) == 0 || len(spans) > 0 && r.IntN(2) == 0 {
					reqs, spans = append(reqs, req{spans: spans[0]}), spans[1:]
				} else {
					reqs, logs = append(reqs, req{logs: logs[0]}), logs[1:]
				}
			}
			for i, q := range reqs {
				if i == len(reqs)/2 {
					is.restart(ctx)
				}
				for n := range 1 + boolInt(i%5 == 0) {
					in := is.all[(i+n)%2]
					var err error
					if q.spans != nil {
						_, err = in.Traces(ctx, []*tracepb.ResourceSpans{q.spans})
					} else {
						_, err = in.Logs(ctx, []*logspb.ResourceLogs{q.logs})
					}
					if err != nil {
						t.Errorf("request not stored: %v", err)
					}
				}
			}
			torn := settle(t, tornConn, 2*time.Second, len(whole))

			for _, c := range []struct {
				name string
				conn driver.Conn
			}{{"whole", wholeConn}, {"torn", tornConn}} {
				var copies, ids uint64
				if err := c.conn.QueryRow(ctx, "SELECT count(), uniqExact(turn_id) FROM conversations FINAL").Scan(&copies, &ids); err != nil {
					t.Fatal(err)
				}
				if copies != ids {
					t.Errorf("%s: %d rows FINAL for %d turns: a turn stored under two sort keys", c.name, copies, ids)
				}
			}
			// Which of two nested spans of one call keys its turns depends
			// on which was written first; what the call holds does not.
			if a, b := callsOf(whole), callsOf(torn); !slices.Equal(a, b) {
				t.Errorf("torn apart it stores other calls than whole:\n%s", diffStored(a, b))
			}
			golden := base + ".stored.json"
			got := marshalGolden(t, whole)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("stored calls of %s differ from %s:\n got %s", name, golden, got)
			}
		})
	}
}

func diffStored(a, b []storedTurn) string {
	var out strings.Builder
	for i := range max(len(a), len(b)) {
		var x, y storedTurn
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			fmt.Fprintf(&out, "  whole %+v\n  torn  %+v\n", x, y)
		}
	}
	return out.String()
}

// callsOf is turns without the span their ids name, in a fixed order.
func callsOf(turns []storedTurn) []storedTurn {
	out := slices.Clone(turns)
	for i := range out {
		if _, rest, ok := strings.Cut(out[i].TurnID, ":"); ok {
			out[i].TurnID = rest
		}
	}
	slices.SortFunc(out, func(a, b storedTurn) int {
		return strings.Compare(fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b))
	})
	return out
}
