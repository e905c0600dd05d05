package agentcheck

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/convtrace/convtrace/internal/testkit"
)

// ---- helpers without the CLIs ----

func post(t *testing.T, url, ctype string, body []byte) *http.Response {
	t.Helper()
	resp, err := http.Post(url, ctype, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func TestCaptureDecodesProtobufAndJSONWithHexIDs(t *testing.T) {
	c := testkit.NewOTLPCapture(t)
	traceID := []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	spanID := []byte{0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10}
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
			TraceId: traceID, SpanId: spanID, Name: "s1",
			Attributes: []*commonpb.KeyValue{strAttr("k", "v")},
		}}}},
	}}}
	pb, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp := post(t, c.URL()+"/v1/traces", "application/x-protobuf", pb); resp.StatusCode != 200 {
		t.Fatalf("protobuf status %d", resp.StatusCode)
	}
	const wantTrace, wantSpan = "0123456789abcdef0123456789abcdef", "fedcba9876543210"
	js := fmt.Sprintf(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":%q,"spanId":%q,"body":{"stringValue":"b"},"attributes":[{"key":"event.name","value":{"stringValue":"e"}},{"key":"n","value":{"intValue":"7"}}]}]}]}]}`, wantTrace, wantSpan)
	if resp := post(t, c.URL()+"/v1/logs", "application/json", []byte(js)); resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("json status %d: %s", resp.StatusCode, b)
	}
	if resp := post(t, c.URL()+"/v1/other", "application/json", []byte(`{}`)); resp.StatusCode != 404 {
		t.Fatalf("unknown path status %d", resp.StatusCode)
	}

	reqs := c.Requests()
	if len(reqs) != 2 {
		t.Fatalf("captured %d requests, want 2", len(reqs))
	}
	if reqs[0].Signal != testkit.OTLPTraces || reqs[0].Encoding != "protobuf" || reqs[1].Signal != testkit.OTLPLogs || reqs[1].Encoding != "json" {
		t.Fatalf("signals/encodings: %s/%s %s/%s", reqs[0].Signal, reqs[0].Encoding, reqs[1].Signal, reqs[1].Encoding)
	}
	for _, r := range reqs {
		if !bytes.Contains(r.JSON, []byte(`"`+wantTrace+`"`)) || !bytes.Contains(r.JSON, []byte(`"`+wantSpan+`"`)) {
			t.Errorf("%s JSON lacks hex ids:\n%s", r.Signal, r.JSON)
		}
	}
	spans := Spans(c.Traces())
	if len(spans) != 1 || spans[0].TraceID != wantTrace || spans[0].SpanID != wantSpan || spans[0].Attrs["k"] != "v" {
		t.Errorf("spans = %+v", spans)
	}
	logs := LogEvents(c.Logs())
	if len(logs) != 1 || logs[0].TraceID != wantTrace || logs[0].SpanID != wantSpan || logs[0].Name != "e" || logs[0].Body != "b" || logs[0].Attrs["n"] != int64(7) {
		t.Errorf("logs = %+v", logs)
	}
	// Round trip: the hex JSON decodes back to the same message.
	var back collogspb.ExportLogsServiceRequest
	if err := testkit.UnmarshalOTLPJSON(reqs[1].JSON, &back); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&back, reqs[1].Message) {
		t.Errorf("round trip differs")
	}
	if got := c.Errors(); len(got) != 1 || !strings.Contains(got[0], "/v1/other") {
		t.Errorf("errors = %v", got)
	}
}

// sseEvents reads an SSE stream into (event, data) pairs.
func sseEvents(t *testing.T, r io.Reader) [][2]string {
	t.Helper()
	var out [][2]string
	var ev string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out = append(out, [2]string{ev, strings.TrimPrefix(line, "data: ")})
		}
	}
	return out
}

func TestFakeProviderAnthropic(t *testing.T) {
	p := NewFakeProvider(DefaultScript)
	defer p.Close()
	tools := `"tools":[{"name":"Bash","input_schema":{"type":"object"}}]`
	// Non-streamed first call: tool_use.
	resp := post(t, p.URL()+"/v1/messages", "application/json",
		[]byte(`{"model":"m","max_tokens":10,`+tools+`,"messages":[{"role":"user","content":"hi"}]}`))
	var msg struct {
		Content []struct {
			Type  string         `json:"type"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
			Text  string         `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" || msg.Content[0].Name != "Bash" ||
		msg.Content[0].Input["command"] != "echo hello" || msg.StopReason != "tool_use" || msg.Usage.InputTokens != 1200 {
		t.Fatalf("first answer = %+v", msg)
	}
	// Streamed call after the tool result: final text.
	resp = post(t, p.URL()+"/v1/messages", "application/json",
		[]byte(`{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":"hi"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"hello"}]}]}`))
	evs := sseEvents(t, resp.Body)
	var text strings.Builder
	var names []string
	for _, e := range evs {
		names = append(names, e[0])
		var d struct {
			Delta struct {
				Text string `json:"text"`
			} `json:"delta"`
			Usage map[string]int `json:"usage"`
		}
		_ = json.Unmarshal([]byte(e[1]), &d)
		text.WriteString(d.Delta.Text)
		if e[0] == "message_delta" && d.Usage["output_tokens"] != 25 {
			t.Errorf("message_delta usage = %v", d.Usage)
		}
	}
	if text.String() != "done: hello" || names[0] != "message_start" || names[len(names)-1] != "message_stop" {
		t.Fatalf("stream events %v text %q", names, text.String())
	}
	// count_tokens and unknown paths.
	if resp := post(t, p.URL()+"/v1/messages/count_tokens", "application/json", []byte(`{"model":"m"}`)); resp.StatusCode != 200 {
		t.Errorf("count_tokens status %d", resp.StatusCode)
	}
	if resp := post(t, p.URL()+"/v1/nothing", "application/json", nil); resp.StatusCode != 404 {
		t.Errorf("unknown path status %d", resp.StatusCode)
	}
	kinds := []string{}
	for _, r := range p.Requests() {
		kinds = append(kinds, r.Kind)
	}
	if strings.Join(kinds, ",") != "tool_call,final,count_tokens,not_found" {
		t.Errorf("kinds = %v", kinds)
	}
}

func TestFakeProviderResponses(t *testing.T) {
	p := NewFakeProvider(DefaultScript)
	defer p.Close()
	tools := `"tools":[{"type":"function","name":"exec_command"}]`
	resp := post(t, p.URL()+"/v1/responses", "application/json",
		[]byte(`{"model":"gpt","stream":true,`+tools+`,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`))
	var completed struct {
		Response struct {
			Output []map[string]any `json:"output"`
			Usage  struct {
				InputTokens        int `json:"input_tokens"`
				InputTokensDetails struct {
					CachedTokens int `json:"cached_tokens"`
				} `json:"input_tokens_details"`
				OutputTokensDetails struct {
					ReasoningTokens int `json:"reasoning_tokens"`
				} `json:"output_tokens_details"`
			} `json:"usage"`
		} `json:"response"`
	}
	var names []string
	for _, e := range sseEvents(t, resp.Body) {
		names = append(names, e[0])
		if e[0] == "response.completed" {
			if err := json.Unmarshal([]byte(e[1]), &completed); err != nil {
				t.Fatal(err)
			}
		}
	}
	if names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Fatalf("events %v", names)
	}
	out := completed.Response.Output
	u := completed.Response.Usage
	if len(out) != 1 || out[0]["type"] != "function_call" || out[0]["name"] != "exec_command" ||
		out[0]["arguments"] != `{"cmd":"echo hello"}` || u.InputTokens != 1200 ||
		u.InputTokensDetails.CachedTokens != 300 || u.OutputTokensDetails.ReasoningTokens != 8 {
		t.Fatalf("completed = %+v", completed)
	}
	resp = post(t, p.URL()+"/v1/responses", "application/json",
		[]byte(`{"model":"gpt","stream":true,`+tools+`,"input":[{"type":"function_call_output","call_id":"c","output":"hello"}]}`))
	var text strings.Builder
	for _, e := range sseEvents(t, resp.Body) {
		if e[0] == "response.output_text.delta" {
			var d struct {
				Delta string `json:"delta"`
			}
			_ = json.Unmarshal([]byte(e[1]), &d)
			text.WriteString(d.Delta)
		}
	}
	if text.String() != "done: hello" {
		t.Fatalf("final text %q", text.String())
	}
	if got := shellArguments("shell", "echo hi"); got != `{"command":["bash","-lc","echo hi"]}` {
		t.Errorf("shell args %s", got)
	}
}

// ---- the real CLIs ----

type agentRun struct {
	res      *RunResult
	provider *FakeProvider
	capture  *testkit.OTLPCapture
	proxy    *BlackholeProxy
}

func runAgent(t *testing.T, run func(context.Context, RunOptions) (*RunResult, error), proto Protocol) agentRun {
	t.Helper()
	requireCLIs(t)
	p := NewFakeProvider(DefaultScript)
	t.Cleanup(p.Close)
	c := testkit.NewOTLPCapture(t)
	px := NewBlackholeProxy()
	t.Cleanup(px.Close)
	res, err := run(context.Background(), RunOptions{
		ProviderURL: p.URL(), OTLPEndpoint: c.URL(), Protocol: proto,
		Home: t.TempDir(), Prompt: ScenarioPrompt, ProxyURL: px.URL(),
		Timeout: 3 * time.Minute,
	})
	if err != nil {
		t.Fatalf("run: %v\nstdout: %s", err, res.Stdout)
	}
	// The CLIs flush at exit; a straggling batch may still be in flight.
	c.WaitFor(2*time.Second, func([]testkit.OTLPRequest) bool { return false })
	if errs := c.Errors(); len(errs) > 0 {
		t.Fatalf("capture errors: %v", errs)
	}
	for _, r := range c.Requests() {
		wantEnc := "json"
		if proto == ProtoProtobuf {
			wantEnc = "protobuf"
		}
		if r.Encoding != wantEnc {
			t.Errorf("%s export sent as %s, want %s", r.Signal, r.Encoding, wantEnc)
		}
	}
	if got := px.Targets(); len(got) > 0 {
		t.Errorf("CLI tried to reach outside hosts: %v", got)
	}
	if res.FinalText != DefaultScript.FinalText {
		t.Errorf("final text %q, want %q", res.FinalText, DefaultScript.FinalText)
	}
	return agentRun{res: res, provider: p, capture: c, proxy: px}
}

// only returns the single element of evs named name.
func one(t *testing.T, evs []LogEvent, name string) LogEvent {
	t.Helper()
	got := named(evs, name)
	if len(got) != 1 {
		t.Fatalf("%d %q log events, want 1 (have %v)", len(got), name, eventNames(evs))
	}
	return got[0]
}

func named(evs []LogEvent, name string) []LogEvent {
	var out []LogEvent
	for _, e := range evs {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func eventNames(evs []LogEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

func spansNamed(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// wantAttrs checks attribute values by their printed form: both CLIs send
// some numbers and booleans as strings (e.g. Claude Code's prompt_length
// and tool_result.success, Codex's input_token_count), which the report
// lists; here only the value matters.
func wantAttrs(t *testing.T, what string, attrs map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got, ok := attrs[k]; !ok || fmt.Sprint(got) != fmt.Sprint(v) {
			t.Errorf("%s: %s = %#v (present %v), want %#v", what, k, got, ok, v)
		}
	}
}

func TestClaudeCodeTelemetry(t *testing.T) {
	requireCLIs(t)
	for _, proto := range []Protocol{ProtoJSON, ProtoProtobuf} {
		t.Run(string(proto), func(t *testing.T) {
			r := runAgent(t, RunClaude, proto)
			sid := r.res.SessionID
			if sid == "" {
				t.Fatalf("no session id in output %s", r.res.Stdout)
			}
			kinds := []string{}
			for _, pr := range r.provider.Requests() {
				kinds = append(kinds, pr.Path+":"+pr.Kind)
			}
			if strings.Join(kinds, ",") != "/v1/messages:tool_call,/v1/messages:final" {
				t.Errorf("provider requests = %v", kinds)
			}

			logs := LogEvents(r.capture.Logs())
			for _, e := range logs {
				if e.Attrs["session.id"] != sid {
					t.Errorf("log %s session.id = %v, want %s", e.Name, e.Attrs["session.id"], sid)
				}
				if e.Body != "claude_code."+e.Name {
					t.Errorf("log body %q for event.name %q", e.Body, e.Name)
				}
				if e.Resource["service.name"] != "claude-code" || e.Resource["service.version"] != ClaudeCodeVersion {
					t.Errorf("log resource = %v", e.Resource)
				}
			}
			up := one(t, logs, "user_prompt")
			wantAttrs(t, "user_prompt", up.Attrs, map[string]any{"prompt": ScenarioPrompt, "prompt_length": int64(len(ScenarioPrompt))})
			promptID, _ := up.Attrs["prompt.id"].(string)
			if promptID == "" {
				t.Fatalf("user_prompt has no prompt.id: %v", up.Attrs)
			}

			api := named(logs, "api_request")
			if len(api) != 2 {
				t.Fatalf("%d api_request events, want 2", len(api))
			}
			for i, u := range []Usage{DefaultScript.ToolUsage, DefaultScript.FinalUsage} {
				wantAttrs(t, fmt.Sprintf("api_request[%d]", i), api[i].Attrs, map[string]any{
					"prompt.id": promptID, "input_tokens": int64(u.Input), "output_tokens": int64(u.Output),
					"cache_read_tokens": int64(u.CacheRead), "cache_creation_tokens": int64(u.CacheCreate),
				})
				if c, _ := api[i].Attrs["cost_usd"].(float64); c <= 0 {
					t.Errorf("api_request[%d] cost_usd = %v", i, api[i].Attrs["cost_usd"])
				}
				if _, ok := api[i].Attrs["duration_ms"].(int64); !ok {
					t.Errorf("api_request[%d] duration_ms = %#v", i, api[i].Attrs["duration_ms"])
				}
				if m, _ := api[i].Attrs["model"].(string); m == "" {
					t.Errorf("api_request[%d] has no model", i)
				}
			}

			td := one(t, logs, "tool_decision")
			wantAttrs(t, "tool_decision", td.Attrs, map[string]any{"decision": "accept", "tool_name": "Bash", "prompt.id": promptID})
			tr := one(t, logs, "tool_result")
			wantAttrs(t, "tool_result", tr.Attrs, map[string]any{"tool_name": "Bash", "success": true, "tool_use_id": td.Attrs["tool_use_id"]})
			if in, _ := tr.Attrs["tool_input"].(string); !strings.Contains(in, DefaultScript.Command) {
				t.Errorf("tool_result tool_input = %q", in)
			}
			ar := one(t, logs, "assistant_response")
			wantAttrs(t, "assistant_response", ar.Attrs, map[string]any{"response": DefaultScript.FinalText})
			if n := len(named(logs, "api_request_body")); n != 2 {
				t.Errorf("%d api_request_body events, want 2", n)
			}
			if n := len(named(logs, "api_response_body")); n != 2 {
				t.Errorf("%d api_response_body events, want 2", n)
			}

			// Traces: one interaction with two llm_request and one tool.
			spans := Spans(r.capture.Traces())
			inter := spansNamed(spans, "claude_code.interaction")
			if len(inter) != 1 {
				t.Fatalf("%d interaction spans, want 1", len(inter))
			}
			root := inter[0]
			wantAttrs(t, "interaction", root.Attrs, map[string]any{"user_prompt": ScenarioPrompt, "session.id": sid, "gen_ai.conversation.id": sid})
			if root.ParentSpanID != "" {
				t.Errorf("interaction has parent %s", root.ParentSpanID)
			}
			llm := spansNamed(spans, "claude_code.llm_request")
			if len(llm) != 2 {
				t.Fatalf("%d llm_request spans, want 2", len(llm))
			}
			for _, s := range llm {
				if s.ParentSpanID != root.SpanID || s.TraceID != root.TraceID {
					t.Errorf("llm_request not a child of interaction")
				}
			}
			tools := spansNamed(spans, "claude_code.tool")
			if len(tools) != 1 || tools[0].ParentSpanID != root.SpanID {
				t.Fatalf("tool spans = %+v", tools)
			}
			wantAttrs(t, "tool span", tools[0].Attrs, map[string]any{"tool_name": "Bash", "full_command": DefaultScript.Command})
			if len(tools[0].Events) != 1 || tools[0].Events[0].Name != "tool.output" || tools[0].Events[0].Attrs["output"] != "hello" {
				t.Errorf("tool span events = %+v", tools[0].Events)
			}
			for _, name := range []string{"claude_code.tool.blocked_on_user", "claude_code.tool.execution"} {
				s := spansNamed(spans, name)
				if len(s) != 1 || s[0].ParentSpanID != tools[0].SpanID {
					t.Errorf("%s spans = %+v", name, s)
				}
			}
			// Log records of the turn point into the trace.
			if up.TraceID != root.TraceID || up.SpanID != root.SpanID {
				t.Errorf("user_prompt trace/span %s/%s, want interaction %s/%s", up.TraceID, up.SpanID, root.TraceID, root.SpanID)
			}
			if td.TraceID != root.TraceID {
				t.Errorf("tool_decision trace %s, want %s", td.TraceID, root.TraceID)
			}

			// Metrics: tokens and cost for the session.
			tokens := map[string]float64{}
			var cost float64
			for _, p := range MetricPoints(r.capture.Metrics()) {
				if p.Attrs["session.id"] != sid {
					t.Errorf("metric %s session.id = %v", p.Metric, p.Attrs["session.id"])
				}
				switch p.Metric {
				case "claude_code.token.usage":
					typ, _ := p.Attrs["type"].(string)
					tokens[typ] += p.Value
				case "claude_code.cost.usage":
					cost += p.Value
				}
			}
			want := map[string]float64{"input": 2700, "output": 65, "cacheRead": 1100, "cacheCreation": 100}
			for k, v := range want {
				if tokens[k] != v {
					t.Errorf("token.usage[%s] = %v, want %v", k, tokens[k], v)
				}
			}
			if cost <= 0 {
				t.Errorf("cost.usage = %v", cost)
			}
		})
	}
}

func TestCodexTelemetry(t *testing.T) {
	requireCLIs(t)
	for _, proto := range []Protocol{ProtoJSON, ProtoProtobuf} {
		t.Run(string(proto), func(t *testing.T) {
			r := runAgent(t, RunCodex, proto)
			convID := r.res.SessionID
			if convID == "" {
				t.Fatalf("no thread id in output %s", r.res.Stdout)
			}
			var calls []string
			for _, pr := range r.provider.Requests() {
				if pr.Path == "/v1/responses" {
					calls = append(calls, pr.Kind)
				}
			}
			if strings.Join(calls, ",") != "tool_call,final" {
				t.Errorf("responses calls = %v", calls)
			}

			logs := LogEvents(r.capture.Logs())
			for _, e := range logs {
				if strings.HasPrefix(e.Name, "codex.") && e.Attrs["conversation.id"] != convID {
					t.Errorf("log %s conversation.id = %v, want %s", e.Name, e.Attrs["conversation.id"], convID)
				}
			}
			up := one(t, logs, "codex.user_prompt")
			wantAttrs(t, "codex.user_prompt", up.Attrs, map[string]any{"prompt": ScenarioPrompt, "prompt_length": int64(len(ScenarioPrompt))})
			if up.TraceID == "" {
				t.Errorf("codex.user_prompt has no trace id")
			}
			if n := len(named(logs, "codex.api_request")); n != 2 {
				t.Errorf("%d codex.api_request events, want 2", n)
			}
			var usage []map[string]any
			for _, e := range named(logs, "codex.sse_event") {
				if _, ok := e.Attrs["input_token_count"]; ok && e.Attrs["event.kind"] == "response.completed" {
					usage = append(usage, e.Attrs)
				}
			}
			if len(usage) != 2 {
				t.Fatalf("%d response.completed events with usage, want 2", len(usage))
			}
			for i, u := range []Usage{DefaultScript.ToolUsage, DefaultScript.FinalUsage} {
				wantAttrs(t, fmt.Sprintf("usage[%d]", i), usage[i], map[string]any{
					"input_token_count": int64(u.Input), "output_token_count": int64(u.Output),
					"cached_token_count": int64(u.CacheRead), "reasoning_token_count": int64(u.Reasoning),
				})
			}
			td := one(t, logs, "codex.tool_decision")
			wantAttrs(t, "codex.tool_decision", td.Attrs, map[string]any{"tool_name": "exec_command", "decision": "approved"})
			tr := one(t, logs, "codex.tool_result")
			wantAttrs(t, "codex.tool_result", tr.Attrs, map[string]any{"tool_name": "exec_command", "call_id": td.Attrs["call_id"], "success": "true"})
			if a, _ := tr.Attrs["arguments"].(string); !strings.Contains(a, DefaultScript.Command) {
				t.Errorf("tool_result arguments = %q", a)
			}
			if o, _ := tr.Attrs["output"].(string); !strings.Contains(o, "hello") {
				t.Errorf("tool_result output = %q", o)
			}

			spans := Spans(r.capture.Traces())
			turn := spansNamed(spans, "session_task.turn")
			if len(turn) != 1 {
				t.Fatalf("%d session_task.turn spans, want 1", len(turn))
			}
			wantAttrs(t, "session_task.turn", turn[0].Attrs, map[string]any{
				"codex.turn.token_usage.input_tokens":        int64(2700),
				"codex.turn.token_usage.cached_input_tokens": int64(1100),
				"codex.turn.token_usage.output_tokens":       int64(65),
			})
			if n := len(spansNamed(spans, "model_client.stream_responses_api")); n != 2 {
				t.Errorf("%d model_client.stream_responses_api spans, want 2", n)
			}
			ex := spansNamed(spans, "exec_command")
			if len(ex) != 1 {
				t.Fatalf("%d exec_command spans, want 1", len(ex))
			}
			wantAttrs(t, "exec_command span", ex[0].Attrs, map[string]any{"conversation.id": convID, "call_id": td.Attrs["call_id"]})
			if ex[0].TraceID != turn[0].TraceID {
				t.Errorf("exec_command and session_task.turn in different traces")
			}

			tokens := map[string]float64{}
			for _, p := range MetricPoints(r.capture.Metrics()) {
				if p.Metric == "codex.turn.token_usage" {
					typ, _ := p.Attrs["token_type"].(string)
					tokens[typ] += p.Value
				}
			}
			for k, v := range map[string]float64{"input": 2700, "cached_input": 1100, "output": 65, "reasoning_output": 12} {
				if tokens[k] != v {
					t.Errorf("codex.turn.token_usage[%s] = %v, want %v", k, tokens[k], v)
				}
			}
		})
	}
}
