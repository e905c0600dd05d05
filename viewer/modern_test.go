package viewer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/chdbcheck"
	"github.com/convtrace/convtrace/schema"
)

// inline replaces each ? of query with a literal of the matching argument,
// for chDB, which takes no bound parameters. Test fixtures only.
func inline(t *testing.T, query string, args ...any) string {
	t.Helper()
	parts := strings.Split(query, "?")
	if len(parts) != len(args)+1 {
		t.Fatalf("query has %d placeholders, got %d arguments", len(parts)-1, len(args))
	}
	var b strings.Builder
	for i, a := range args {
		b.WriteString(parts[i])
		switch v := a.(type) {
		case string:
			b.WriteString("'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'")
		default:
			fmt.Fprint(&b, v)
		}
	}
	b.WriteString(parts[len(args)])
	return b.String()
}

// The integration tests run the viewer's SQL on ClickHouse 18.16; this runs
// the same statements on a modern server (chDB 26.x) and checks that they
// return what the Go code scans: the same columns, types it can scan into,
// NULL sums for unknown values, one row per turn.
func TestQueriesOnModernClickHouse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	caps := chdbcheck.Capabilities(ctx, t)
	var stmts []string
	for _, m := range schema.Migrations() {
		ss, err := m.Statements(caps)
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, ss...)
	}
	const cols = "INSERT INTO conversations (turn_id, span_id, thread_id, phase, role, seq, provider, content, tokens_in, tokens_out, cost_usd, status, start_ns, duration_ns) VALUES "
	stmts = append(stmts,
		cols+`('a:prompt:0', 'a', 'th1', 'Plan', 'prompt', 0, 'openai', 'first prompt', NULL, NULL, NULL, 'ok', 1000, 0),
		      ('a:response:1', 'a', 'th1', 'Plan', 'response', 1, 'openai', 'answer', 10, 20, 0.5, 'ok', 2000, 1000),
		      ('b:prompt:0', 'b', 'th1', 'review', 'prompt', 0, 'anthropic', 'second prompt', NULL, NULL, NULL, 'ok', 3000, 0),
		      ('c:prompt:0', 'c', 'th2', '', 'prompt', 0, '', 'no usage', NULL, NULL, NULL, 'ok', 500, 0),
		      ('d:prompt:0', 'd', 'th3', '', 'prompt', 0, '', 'archived', NULL, NULL, NULL, 'ok', 400, 0)`,
		// The same response delivered again, in a part of its own.
		cols+`('a:response:1', 'a', 'th1', 'Plan', 'response', 1, 'openai', 'answer', 10, 20, 0.5, 'ok', 2000, 1000)`,
		`INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns) VALUES ('th2', 'old', 0, 0, 1), ('th2', 'new', 0, 0, 2), ('th3', '', 1, 0, 1)`,
	)
	queries := []string{
		inline(t, selectTurns+filterPhase+filterRole+orderTurns, "th1", "th1", "PLAN", "response"),
		inline(t, selectTurns+orderTurns, "th1", "th1"),
	}
	out, err := chdbcheck.Run(ctx, chdbcheck.Input{Statements: stmts, Queries: queries})
	if err != nil {
		t.Fatalf("viewer SQL on ClickHouse %s: %v", caps.Version, err)
	}

	if filtered := out.Results[0].Rows; len(filtered) != 1 || filtered[0]["turn_id"] != "a:response:1" {
		t.Errorf("th1 turns, phase PLAN, role response = %v, want a:response:1 once", filtered)
	}
	var ids []string
	for _, r := range out.Results[1].Rows {
		ids = append(ids, fmt.Sprintf("%s running=%v", r["turn_id"], r["running"]))
	}
	want := "a:prompt:0 running=0,a:response:1 running=0,b:prompt:0 running=1"
	if strings.Join(ids, ",") != want {
		t.Errorf("th1 turns = %q, want %q", ids, want)
	}
	for _, c := range out.Results[1].Columns {
		if c.Name == "running" && c.Type != "UInt8" {
			t.Errorf("turns column running is %s, want UInt8", c.Type)
		}
	}
}
