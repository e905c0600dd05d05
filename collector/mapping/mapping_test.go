package mapping

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/schema"
)

// record runs f with a recorder whose spans are captured, and returns the
// finished spans.
func record(t *testing.T, f func(ctx context.Context, r *instrument.Recorder), opts ...instrument.Option) []sdktrace.ReadOnlySpan {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resource.NewSchemaless(attribute.String(schema.KeyServiceName, "shipcode"))),
		sdktrace.WithSpanProcessor(instrument.NewSpanProcessor()),
		sdktrace.WithSpanProcessor(sr),
	)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	f(context.Background(), instrument.NewRecorder(append(opts, instrument.WithTracerProvider(tp))...))
	return sr.Ended()
}

func u32(n uint32) *uint32   { return &n }
func f64(f float64) *float64 { return &f }

// brief is the part of a turn the mapping tests compare.
type brief struct {
	Role, Content, Error, Status, Phase, Speaker, Model, Provider, ThreadID, ToolName, ToolCallID, ParentTurnID, SessionID, Project string
	Round                                                                                                                           uint16
	Seq                                                                                                                             uint16
	TokensIn, TokensOut, CacheRead                                                                                                  *uint32
	Cost                                                                                                                            *float64
	Truncated                                                                                                                       bool
	ContentBytes                                                                                                                    uint32
}

func briefOf(t schema.Turn) brief {
	return brief{
		Role: t.Role, Content: t.Content, Error: t.Error, Status: t.Status, Phase: t.Phase, Speaker: t.Speaker,
		Model: t.Model, Provider: t.Provider, ThreadID: t.ThreadID, ToolName: t.ToolName, ToolCallID: t.ToolCallID,
		ParentTurnID: t.ParentTurnID, SessionID: t.SessionID, Project: t.Project, Round: t.Round, Seq: t.Seq,
		TokensIn: t.TokensIn, TokensOut: t.TokensOut, CacheRead: t.TokensCacheRead, Cost: t.CostUSD,
		Truncated: t.Truncated, ContentBytes: t.ContentBytes,
	}
}

func equalBrief(a, b brief) bool {
	eqU := func(x, y *uint32) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqF := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	if !eqU(a.TokensIn, b.TokensIn) || !eqU(a.TokensOut, b.TokensOut) || !eqU(a.CacheRead, b.CacheRead) || !eqF(a.Cost, b.Cost) {
		return false
	}
	a.TokensIn, a.TokensOut, a.CacheRead, a.Cost = nil, nil, nil, nil
	b.TokensIn, b.TokensOut, b.CacheRead, b.Cost = nil, nil, nil, nil
	return a == b
}

func TestMapTurns(t *testing.T) {
	base := func(ctx context.Context) context.Context {
		ctx = instrument.WithThread(ctx, "thread-1")
		ctx = instrument.WithPhase(ctx, "plan")
		ctx = instrument.WithRound(ctx, 1)
		return instrument.WithSpeaker(ctx, "claude-planner")
	}
	call := instrument.Turn{Provider: "anthropic", Model: "claude-sonnet-4-5", Prompt: "Plan the fix", SessionID: "sess-1"}
	tests := []struct {
		name string
		run  func(ctx context.Context, r *instrument.Recorder)
		opts []instrument.Option
		want []brief
	}{
		{
			name: "chat call with usage and cost",
			run: func(ctx context.Context, r *instrument.Recorder) {
				_, _ = r.Call(base(ctx), call, func(context.Context) (instrument.Response, error) {
					return instrument.Response{Content: "1. read the code", Model: "claude-sonnet-4-5-20250929",
						Usage: &instrument.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadTokens: 800}, CostUSD: f64(0.0123)}, nil
				})
			},
			want: []brief{
				{Role: "prompt", Seq: 0, Content: "Plan the fix", ContentBytes: 12, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					Model: "claude-sonnet-4-5-20250929", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
				{Role: "response", Seq: 1, Content: "1. read the code", ContentBytes: 16, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					Model: "claude-sonnet-4-5-20250929", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode",
					TokensIn: u32(1200), TokensOut: u32(300), CacheRead: u32(800), Cost: f64(0.0123)},
			},
		},
		{
			name: "failed call: prompt and error row with the message",
			run: func(ctx context.Context, r *instrument.Recorder) {
				_, _ = r.Call(base(ctx), call, func(context.Context) (instrument.Response, error) {
					return instrument.Response{}, errors.New("provider returned 529: overloaded")
				})
			},
			want: []brief{
				{Role: "prompt", Content: "Plan the fix", ContentBytes: 12, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
				{Role: "error", Seq: 1, Content: "provider returned 529: overloaded", ContentBytes: 33, Error: "provider returned 529: overloaded", Status: "error",
					Phase: "plan", Speaker: "claude-planner", Round: 1, Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
			},
		},
		{
			name: "turn fields override the context; no usage means unknown tokens",
			run: func(ctx context.Context, r *instrument.Recorder) {
				c := call
				c.Phase, c.Speaker, c.ParentTurnID = "critique", "codex-critic", "abc:response:1"
				_, _ = r.Call(base(ctx), c, func(context.Context) (instrument.Response, error) {
					return instrument.Response{Content: "looks fine"}, nil
				})
			},
			want: []brief{
				{Role: "prompt", Content: "Plan the fix", ContentBytes: 12, Status: "ok", Phase: "critique", Speaker: "codex-critic", Round: 1, ParentTurnID: "abc:response:1",
					Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
				{Role: "response", Seq: 1, Content: "looks fine", ContentBytes: 10, Status: "ok", Phase: "critique", Speaker: "codex-critic", Round: 1, ParentTurnID: "abc:response:1",
					Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
			},
		},
		{
			name: "tool execution: tool_call and tool_result",
			run: func(ctx context.Context, r *instrument.Recorder) {
				_, _ = r.Tool(base(ctx), instrument.ToolCall{Name: "read_file", CallID: "call_1", Arguments: `{"path":"main.go"}`},
					func(context.Context) (string, error) { return "package main", nil })
			},
			want: []brief{
				{Role: "tool_call", Content: `{"path":"main.go"}`, ContentBytes: 18, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					ThreadID: "thread-1", ToolName: "read_file", ToolCallID: "call_1", Project: "shipcode"},
				{Role: "tool_result", Seq: 1, Content: "package main", ContentBytes: 12, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					ThreadID: "thread-1", ToolName: "read_file", ToolCallID: "call_1", Project: "shipcode"},
			},
		},
		{
			name: "content over the cap is cut at a rune boundary and marked",
			opts: []instrument.Option{instrument.WithContentLimit(7)},
			run: func(ctx context.Context, r *instrument.Recorder) {
				c := call
				c.Prompt = "계획을 세워라" // 3-byte runes: the cut falls inside the third
				_, _ = r.Call(base(ctx), c, func(context.Context) (instrument.Response, error) {
					return instrument.Response{Content: "ok"}, nil
				})
			},
			want: []brief{
				{Role: "prompt", Content: "계획", ContentBytes: 19, Truncated: true, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
				{Role: "response", Seq: 1, Content: "ok", ContentBytes: 2, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
			},
		},
		{
			name: "a prompt of OpenAI chat messages is stored in the shared messages shape",
			run: func(ctx context.Context, r *instrument.Recorder) {
				c := call
				c.Prompt = `[{"role":"system","content":"Be brief."},{"role":"user","content":"Plan the fix"}]`
				_, _ = r.Call(base(ctx), c, func(context.Context) (instrument.Response, error) {
					return instrument.Response{Content: "ok"}, nil
				})
			},
			want: []brief{
				{Role: "prompt", Content: `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Plan the fix"}]}]`,
					ContentBytes: 82, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
				{Role: "response", Seq: 1, Content: "ok", ContentBytes: 2, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
			},
		},
		{
			name: "content capture off keeps sizes only",
			opts: []instrument.Option{instrument.WithoutContent()},
			run: func(ctx context.Context, r *instrument.Recorder) {
				_, _ = r.Call(base(ctx), call, func(context.Context) (instrument.Response, error) {
					return instrument.Response{Content: "secret plan"}, nil
				})
			},
			want: []brief{
				{Role: "prompt", ContentBytes: 12, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
				{Role: "response", Seq: 1, ContentBytes: 11, Status: "ok", Phase: "plan", Speaker: "claude-planner", Round: 1,
					Model: "claude-sonnet-4-5", Provider: "anthropic", ThreadID: "thread-1", SessionID: "sess-1", Project: "shipcode"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []brief
			for _, ro := range record(t, tt.run, tt.opts...) {
				for _, turn := range Turns(FromSDK(ro)) {
					if !strings.HasPrefix(turn.TurnID, ro.SpanContext().SpanID().String()+":"+turn.Role) {
						t.Errorf("turn id %q does not follow {span_id}:{role}:{seq}", turn.TurnID)
					}
					got = append(got, briefOf(turn))
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d turns, want %d:\n got %+v\nwant %+v", len(got), len(tt.want), got, tt.want)
			}
			for i := range got {
				if !equalBrief(got[i], tt.want[i]) {
					t.Errorf("turn %d:\n got %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestMapTurnsThreadlessAndPlainSpans(t *testing.T) {
	spans := record(t, func(ctx context.Context, r *instrument.Recorder) {
		_, _ = r.Call(ctx, instrument.Turn{Model: "gpt-5", Prompt: "hi"}, func(ctx context.Context) (instrument.Response, error) {
			return instrument.Response{Content: "hello"}, nil
		})
	})
	if len(spans) != 1 {
		t.Fatalf("got %d spans, want 1", len(spans))
	}
	s := FromSDK(spans[0])
	turns := Turns(s)
	if len(turns) != 2 || turns[0].ThreadID != s.TraceID {
		t.Fatalf("a call with no thread should be its own thread (the trace id %s); got %+v", s.TraceID, turns)
	}
	if spans[0].Name() != "chat gpt-5" {
		t.Errorf("span name %q, want %q", spans[0].Name(), "chat gpt-5")
	}

	// A span that is no provider call yields a span row but no turns.
	_, sp := sdktrace.NewTracerProvider().Tracer("x").Start(context.Background(), "git diff")
	sp.End()
	if turns := Turns(FromSDK(sp.(sdktrace.ReadOnlySpan))); len(turns) != 0 {
		t.Errorf("plain span mapped to turns: %+v", turns)
	}
}

func TestMapSpan(t *testing.T) {
	spans := record(t, func(ctx context.Context, r *instrument.Recorder) {
		ctx = instrument.WithPhase(instrument.WithThread(ctx, "th"), "verify")
		_, _ = r.Call(ctx, instrument.Turn{Provider: "openai", Model: "gpt-5", Prompt: "verify"}, func(context.Context) (instrument.Response, error) {
			return instrument.Response{Content: "pass", Usage: &instrument.Usage{InputTokens: 10, OutputTokens: 2}}, nil
		})
	})
	row, _ := SpanRow(FromSDK(spans[0]))
	if row.Name != "chat gpt-5" || row.Kind != "client" || row.ThreadID != "th" || row.Phase != "verify" ||
		row.Operation != "chat" || row.Provider != "openai" || row.Project != "shipcode" ||
		row.TokensIn == nil || *row.TokensIn != 10 || row.TokensOut == nil || *row.TokensOut != 2 || row.CostUSD != nil {
		t.Errorf("span row = %+v", row)
	}
	if strings.Join(row.EventNames, ",") != "gen_ai.prompt,gen_ai.response" || row.DurationNS == 0 && row.StartNS == 0 {
		t.Errorf("span row events %v, start %d, duration %d", row.EventNames, row.StartNS, row.DurationNS)
	}
}

func TestSpanProcessorStampsOtherSpans(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(instrument.NewSpanProcessor()), sdktrace.WithSpanProcessor(sr))
	ctx := instrument.WithAgent(instrument.WithSpeaker(instrument.WithRound(instrument.WithPhase(instrument.WithThread(context.Background(), "th"), "execute"), 2), "codex"), "reviewer")
	_, sp := tp.Tracer("net/http").Start(ctx, "GET") // a span of another instrumentation
	sp.End()
	_, own := tp.Tracer("x").Start(ctx, "other", trace.WithAttributes(attribute.String(schema.KeyPhase, "verify")))
	own.End()
	got, _ := SpanRow(FromSDK(sr.Ended()[0]))
	if got.ThreadID != "th" || got.Phase != "execute" || got.Round != 2 || got.Speaker != "codex" || got.Agent != "reviewer" {
		t.Errorf("stamped span = %+v", got)
	}
	if row, _ := SpanRow(FromSDK(sr.Ended()[1])); row.Phase != "verify" {
		t.Errorf("processor overwrote the span's own phase: got %q, want verify", row.Phase)
	}
}

func TestMapTurnsBetweenPromptAndAnswer(t *testing.T) {
	spans := record(t, func(ctx context.Context, r *instrument.Recorder) {
		_, _ = r.Call(ctx, instrument.Turn{Operation: "invoke_agent", Provider: "anthropic", Prompt: "fix the bug"}, func(ctx context.Context) (instrument.Response, error) {
			sp := trace.SpanFromContext(ctx)
			sp.AddEvent(schema.EventTurn, trace.WithAttributes(attribute.String(schema.KeyRole, schema.RoleSystem), attribute.String(schema.KeyContent, `{"model":"claude-sonnet-4-5"}`)))
			sp.AddEvent(schema.EventTurn, trace.WithAttributes(attribute.String(schema.KeyRole, "warning"), attribute.String(schema.KeyCode, "session_resume_invalid"), attribute.String(schema.KeyContent, "Invalid session id")))
			return instrument.Response{Content: "fixed"}, nil
		})
	})
	turns := Turns(FromSDK(spans[0]))
	var got []string
	for _, tr := range turns {
		got = append(got, fmt.Sprintf("%d %s %s %q", tr.Seq, tr.TurnID[strings.Index(tr.TurnID, ":")+1:], tr.Role, tr.Content))
	}
	want := []string{
		`0 prompt:0 prompt "fix the bug"`,
		`1 system:1 system "{\"model\":\"claude-sonnet-4-5\"}"`,
		`2 warning:2 warning "Invalid session id"`,
		`3 response:3 response "fixed"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("turns:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	if a := turns[2].Attributes; len(a) != 1 || a[0].Value != "session_resume_invalid" {
		t.Errorf("warning turn attributes = %+v, want its code", a)
	}
}

func TestResolveSanitisesUsage(t *testing.T) {
	text := func(p any) string {
		switch v := p.(type) {
		case *uint32:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *float64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		}
		return "unknown"
	}
	tests := []struct {
		name          string
		attrs         []schema.Attr
		in, out, cost string
		sanitised     int
	}{
		{"valid", []schema.Attr{{Key: schema.KeyInputTokens, Value: "4294967295"}, {Key: schema.KeyOutputTokens, Value: "0"}, {Key: schema.KeyCostUSD, Value: "0.25"}}, "4294967295", "0", "0.25", 0},
		{"NaN cost", []schema.Attr{{Key: schema.KeyCostUSD, Value: "NaN"}}, "unknown", "unknown", "unknown", 1},
		{"+Inf cost", []schema.Attr{{Key: schema.KeyCostUSD, Value: "+Inf"}}, "unknown", "unknown", "unknown", 1},
		{"-Inf cost", []schema.Attr{{Key: schema.KeyCostUSD, Value: "-Inf"}}, "unknown", "unknown", "unknown", 1},
		{"negative cost", []schema.Attr{{Key: schema.KeyCostUSD, Value: "-0.5"}}, "unknown", "unknown", "unknown", 1},
		{"overflowing cost", []schema.Attr{{Key: schema.KeyCostUSD, Value: "1e400"}}, "unknown", "unknown", "unknown", 1},
		{"OpenInference negative cost", []schema.Attr{{Key: oiCostTotal, Value: "-1"}}, "unknown", "unknown", "unknown", 1},
		{"negative tokens", []schema.Attr{{Key: schema.KeyInputTokens, Value: "-5"}, {Key: schema.KeyOutputTokens, Value: "7"}}, "unknown", "7", "unknown", 1},
		{"overflowing tokens", []schema.Attr{{Key: schema.KeyInputTokens, Value: "3"}, {Key: schema.KeyOutputTokens, Value: "4294967296"}}, "3", "unknown", "unknown", 1},
		{"OpenLLMetry NaN tokens", []schema.Attr{{Key: olPromptTokens, Value: "NaN"}, {Key: oiCompletionTokens, Value: "1.5"}}, "unknown", "unknown", "unknown", 2},
		{"negative total", []schema.Attr{{Key: schema.KeyInputTokens, Value: "10"}, {Key: olTotalTokens, Value: "-3"}}, "10", "unknown", "unknown", 1},
		{"every kind at once", []schema.Attr{{Key: schema.KeyInputTokens, Value: "-1"}, {Key: schema.KeyOutputTokens, Value: "NaN"},
			{Key: oiCacheReadTokens, Value: "-2"}, {Key: schema.KeyReasoningTokens, Value: "1e10"}, {Key: schema.KeyCostUSD, Value: "NaN"}}, "unknown", "unknown", "unknown", 5},
	}
	for _, tt := range tests {
		c := resolve(Span{Attrs: Attrs{List: tt.attrs}})
		in, out, cost := text(c.tokensIn), text(c.tokensOut), text(c.costUSD)
		if in != tt.in || out != tt.out || cost != tt.cost || c.sanitised != tt.sanitised {
			t.Errorf("%s: resolve(%v) = in %s out %s cost %s, %d sanitised; want %s %s %s, %d",
				tt.name, tt.attrs, in, out, cost, c.sanitised, tt.in, tt.out, tt.cost, tt.sanitised)
		}
		if c.tokensCacheRead != nil || c.tokensReasoning != nil {
			t.Errorf("%s: invalid cache or reasoning tokens resolved as %s, %s", tt.name, text(c.tokensCacheRead), text(c.tokensReasoning))
		}
	}
}

// A span's thread attributes (convtrace.thread.<name>, not the thread id)
// reach every turn of its call: the prompt stored alone while the call
// runs too, so that the thread shows them from its first call on.
func TestMapTurnsCarryThreadAttributes(t *testing.T) {
	_, sp := sdktrace.NewTracerProvider().Tracer("x").Start(context.Background(), "chat gpt-5", trace.WithAttributes(
		attribute.String(schema.KeyOperationName, schema.OperationChat), attribute.String(schema.KeyProviderName, "openai"),
		attribute.String(schema.KeyInputMessages, `[{"role":"user","parts":[{"type":"text","content":"go"}]}]`),
		attribute.String(schema.KeyThreadID, "th-9"), attribute.String("convtrace.thread.task", "T-9"),
		attribute.String("other", "kept on the answer only"),
	))
	attrsOf := func(turns []schema.Turn) string {
		var out []string
		for _, turn := range turns {
			out = append(out, fmt.Sprintf("%s %v", turn.Role, turn.Attributes))
		}
		return strings.Join(out, "; ")
	}
	running := Turns(FromSDK(sp.(sdktrace.ReadOnlySpan)))
	if got, want := attrsOf(running), "prompt [{convtrace.thread.task T-9}]"; got != want {
		t.Errorf("running call: %s, want %s", got, want)
	}
	sp.End()
	ended := Turns(FromSDK(sp.(sdktrace.ReadOnlySpan)))
	if got, want := attrsOf(ended), "prompt [{convtrace.thread.task T-9}]; response [{convtrace.thread.task T-9} {other kept on the answer only}]"; got != want {
		t.Errorf("ended call: %s, want %s", got, want)
	}
}
