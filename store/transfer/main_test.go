package transfer_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/topology"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func u32(v uint32) *uint32   { return &v }
func f64(v float64) *float64 { return &v }

// msg is one message of a prompt, as the collector stores it.
func msg(role, text string) string {
	return fmt.Sprintf(`{"role":%q,"parts":[{"type":"text","content":%q}]}`, role, text)
}

// recordDemo records one run of the demo pipeline into dsn's database,
// as a user does: convtrace demo.
func recordDemo(t *testing.T, dsn string) {
	t.Helper()
	p := testkit.Start(t, nil, "demo", "--clickhouse", dsn)
	if code := p.Wait(t, 2*time.Minute); code != 0 {
		t.Fatalf("convtrace demo: exit %d: %s", code, p.Output())
	}
}

// loopThread returns the turns and spans of an agent loop of calls calls
// in thread, whose prompts repeat the conversation so far (stored once),
// starting at start: every column set on some turn, a failed call, a tool
// call, a call still running, a row written twice (two revisions), a turn
// cut at the content limit and an internal one.
func loopThread(project, thread string, start time.Time, calls int) ([]schema.Turn, []schema.Span) {
	var (
		turns   []schema.Turn
		spans   []schema.Span
		history []string
	)
	trace := "trace-" + thread
	for i := range calls {
		span := fmt.Sprintf("%s-span-%02d", thread, i)
		at := uint64(start.Add(time.Duration(i) * time.Hour).UnixNano())
		history = append(history, msg("user", fmt.Sprintf("step %d of %s: <go> & \"quote\" 한국어 🐘", i, thread)))
		prompt := "[" + strings.Join(history, ",") + "]"
		base := schema.Turn{
			TraceID: trace, SpanID: span, ParentSpanID: "root-" + thread, Project: project, ThreadID: thread,
			SessionID: "session-1", Phase: []string{"plan", "execute", "verify"}[i%3], Speaker: "planner",
			Round: uint16(i / 3), Operation: schema.OperationChat, Provider: "openai", Model: "gpt-4o",
			Status: schema.StatusOK,
		}
		p := base
		p.TurnID, p.Role, p.Seq, p.StartNS = schema.PromptTurnID(span), schema.RolePrompt, 0, at
		p.Content, p.ContentBytes = prompt, uint32(len(prompt))
		p.Attributes = []schema.Attr{{Key: "gen_ai.request.temperature", Value: "0.2"}, {Key: "k", Value: fmt.Sprint(i)}}
		r := base
		r.TurnID, r.Role, r.Seq, r.StartNS = schema.ResponseTurnID(span, false), schema.RoleResponse, 1, at+uint64(2*time.Second)
		r.DurationNS, r.ParentTurnID, r.TTFTNS = uint64(2*time.Second), p.TurnID, uint64(300*time.Millisecond)+uint64(i)
		answer := fmt.Sprintf("answer %d", i)
		r.Content, r.ContentBytes = "["+msg("assistant", answer)+"]", uint32(len(answer)+40)
		r.TokensIn, r.TokensOut, r.TokensCacheRead = u32(uint32(100+i)), u32(uint32(20+i)), u32(uint32(i))
		r.CostUSD, r.CostSource = f64(0.001*float64(i+1)), schema.CostPriced
		switch i % 5 {
		case 1:
			r.TurnID, r.Role = schema.ResponseTurnID(span, true), schema.RoleError
			r.Status, r.Error, r.CostSource, r.TokensIn, r.TokensOut, r.CostUSD = schema.StatusError, "rate limited", schema.CostNone, nil, nil, nil
		case 2:
			r.TokensCacheWrite, r.TokensReasoning, r.CostSource = u32(7), u32(3), schema.CostProvided
			r.Revision = 2
		case 3:
			r.CostUSD, r.CostSource = nil, schema.CostUnknown
			r.Internal = true
		}
		turns = append(turns, p, r)
		if i%5 != 1 {
			history = append(history, msg("assistant", answer))
		}
		if i%4 == 0 {
			tc := base
			tc.TurnID, tc.Role, tc.Seq, tc.StartNS = schema.TurnID(span, schema.RoleToolCall, 2), schema.RoleToolCall, 2, at+uint64(3*time.Second)
			tc.ToolName, tc.ToolCallID, tc.Content, tc.ContentBytes = "grep", "call-"+span, `{"pattern":"x"}`, 15
			tc.Truncated = i == 4
			turns = append(turns, tc)
		}
		spans = append(spans, schema.Span{
			TraceID: trace, SpanID: span, ParentSpanID: "root-" + thread, Project: project, ThreadID: thread,
			Phase: base.Phase, Round: base.Round, Speaker: "planner", Name: "chat gpt-4o", Kind: "client",
			StartNS: at, DurationNS: uint64(2 * time.Second), Status: "ok", Operation: schema.OperationChat,
			Provider: "openai", Model: "gpt-4o", TokensIn: r.TokensIn, TokensOut: r.TokensOut, CostUSD: r.CostUSD,
			Attributes:   []schema.Attr{{Key: "a", Value: "1"}},
			Resource:     []schema.Attr{{Key: "service.name", Value: "loop"}},
			EventNames:   []string{"gen_ai.content.prompt", "gen_ai.content.completion"},
			EventTimesNS: []uint64{at, at + 1},
		})
	}
	// A call still running, heard from now: its prompt only.
	span := thread + "-running"
	now := time.Now()
	turns = append(turns, schema.Turn{
		TurnID: schema.PromptTurnID(span), TraceID: trace, SpanID: span, Project: project, ThreadID: thread,
		Role: schema.RolePrompt, StartNS: uint64(now.Add(-time.Minute).UnixNano()), HeartbeatNS: uint64(now.UnixNano()),
		Content: "[" + msg("user", "still going") + "]", ContentBytes: 40, Speaker: "executor", Status: schema.StatusOK,
	})
	// The trace's root: a span without a thread, shown on the trace page.
	spans = append(spans, schema.Span{
		TraceID: trace, SpanID: "root-" + thread, Project: project, Name: "pipeline", Kind: "internal",
		StartNS: uint64(start.UnixNano()) - 1, DurationNS: uint64(time.Duration(calls) * time.Hour), Status: "ok",
	})
	// A span that names the thread in a trace with none of its turns.
	spans = append(spans, schema.Span{
		TraceID: "stray-" + thread, SpanID: "stray", Project: project, ThreadID: thread, Name: "cleanup",
		Kind: "internal", StartNS: uint64(start.UnixNano()), Status: "ok",
	})
	return turns, spans
}

// fixture fills a fresh database with the demo and two synthetic threads
// (one over past days), their notes and metadata, and returns its
// connection and DSN.
func fixture(t *testing.T) (*topology.Conn, string) {
	t.Helper()
	conn, dsn := testkit.Open(t)
	recordDemo(t, dsn)
	ctx := context.Background()
	rows := store.NewRowStore(conn)
	past := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
	for _, th := range []struct {
		project, id string
		start       time.Time
		calls       int
	}{
		{"alpha", "loop-a", past, 12},
		{"beta", "loop/b with space", past.AddDate(0, 0, -30), 7},
	} {
		turns, spans := loopThread(th.project, th.id, th.start, th.calls)
		if err := rows.Store(ctx, turns, spans); err != nil {
			t.Fatal(err)
		}
		// A copy of a response at a lower revision: readers keep the higher.
		for _, tr := range turns {
			if tr.Revision == 2 {
				tr.Revision, tr.Content = 1, "[]"
				testkit.InsertTurns(t, conn, tr)
				break
			}
		}
	}
	// A thread written by hand, as SQL users and older versions did: its
	// prompts are stored whole though they repeat an answer.
	raw, _ := loopThread("gamma", "raw", past.AddDate(0, 0, 1), 3)
	raw[0].Content = "[" + msg("user", "an earlier session") + "," + msg("assistant", "resumed") + "," + raw[0].Content[1:]
	for i := range raw {
		raw[i].History = []string{}
	}
	testkit.InsertTurns(t, conn, raw...)
	st := store.New(conn, 100, time.Minute)
	yes, memo := true, "checked <b>by</b> hand"
	for _, n := range []struct{ thread, turn string }{
		{"loop-a", schema.PromptTurnID("loop-a-span-03")},
		{"loop/b with space", schema.ResponseTurnID("loop/b with space-span-00", false)},
	} {
		if _, err := st.PutNote(ctx, n.thread, n.turn, store.NoteChange{Starred: &yes, Memo: &memo}); err != nil {
			t.Fatal(err)
		}
	}
	title, archived := "Loop A, renamed", true
	if err := st.ChangeThread(ctx, "loop-a", store.ThreadChange{Title: &title}, uint64(time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	if err := st.ChangeThread(ctx, "loop/b with space", store.ThreadChange{Archived: &archived}, uint64(time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	return conn, dsn
}

// newOf returns a pointer to a new value of type typ, to scan into.
func newOf(typ reflect.Type) any { return reflect.New(typ).Interface() }

// deref is the value v points to, or nil.
func deref(v any) any {
	rv := reflect.ValueOf(v).Elem()
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	return rv.Interface()
}
