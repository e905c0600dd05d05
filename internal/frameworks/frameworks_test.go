package frameworks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
	"github.com/convtrace/convtrace/collector/otlpwire"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema/genai"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// joinWindow is how long the collector waits for a call's log records.
const joinWindow = 2 * time.Second

// expectation is what convtrace must store for one source: the three calls
// of the scenario, each told apart by its answer.
type expectation struct {
	provider string
	model    string
	// speakers says the framework names the agent that makes each call,
	// so the calls' speaker must be planner, planner, critic.
	speakers bool
	// thread is the thread id the framework's session or conversation id
	// gives; "" when the framework has none.
	thread string
	// toolSpan says the tool's run is traced apart (execute_tool, TOOL,
	// ai.toolCall, tool.execute …), so tool_call and tool_result rows must
	// be stored for it.
	toolSpan bool
	// toolArgs are the tool's arguments as the source records its run.
	toolArgs string
	// content says the source sends what was said; without it only the
	// calls, their usage, provider, model, speaker and thread are checked.
	content bool
	// usage overrides the scenario's usage of a call (by index) with what
	// the source reports of it; nil: the source reports none.
	usage map[int]*Usage
}

// The limits of the sources, each what the source sends and convtrace
// stores as sent (README, "Sources").
func expectFor(s Source) expectation {
	e := expectation{provider: s.Provider, model: s.Model, speakers: true, thread: s.ThreadID(), toolSpan: true,
		toolArgs: ToolArguments, content: true}
	switch s.Name {
	case "langchain":
		// LangChain has no agent: planner and critic are runnables' run
		// names, not agent names. Its tool span records the tool's input
		// as LangChain passed it, the bare value.
		e.speakers = false
		e.toolArgs = "Paris"
	case "openlit":
		// openlit traces no tool run.
		e.toolSpan = false
	case "logfire":
		// The logfire script's tool span is a plain logfire.span, and the
		// OpenAI instrumentation's content events never leave logfire-node.
		e.toolSpan, e.content = false, false
	case "openai-agents":
		// The run's group id (its session) is not exported.
		e.thread = ""
	case "openinference-openai":
		// A streamed call's span carries no usage.
		e.usage = map[int]*Usage{2: nil}
	case "traceloop-openai":
		// Traceloop estimates a streamed call's usage with a tokenizer
		// instead of reading the stream's usage chunk.
		e.usage = map[int]*Usage{2: {In: 8, Out: 3}}
	}
	return e
}

// storedRow is one row of conversations.
type storedRow struct {
	SpanID, TurnID, Role, Content, Provider, Model, ToolName, ToolCallID string
	Speaker, Agent, Thread, CostSource, Operation                        string
	History                                                              []string
	Seq                                                                  uint16
	TokensIn, TokensOut                                                  *uint32
	StartNS                                                              uint64
}

// storedCall is the rows of one span that holds a provider call.
type storedCall struct {
	spanID string
	start  uint64
	rows   []storedRow
	end    *storedRow // the row with cost_source != ''
}

func TestFrameworks(t *testing.T) {
	requireNode(t)
	for _, src := range Sources {
		t.Run(src.Name, func(t *testing.T) {
			t.Parallel()
			runAndCheck(t, src, expectFor(src))
		})
	}
}

func runAndCheck(t *testing.T, src Source, want expectation) {
	conn, dsn := testkit.Open(t)
	in, err := collector.NewIngester(dsn,
		collector.WithJoinWindow(joinWindow),
		collector.WithFlushInterval(20*time.Millisecond),
		collector.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Shutdown(context.Background()) })
	prov, err := StartProvider()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Close() })
	// The capture server answers /v1/metrics itself and hands traces and
	// logs to the real receiver.
	capt := testkit.NewOTLPCapture(t, testkit.WithForward(otlpreceiver.NewHTTPHandler(in)), testkit.WithDecoders(otlpwire.DecodeJSON, otlpwire.DecodeProto))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := RunSource(ctx, src, prov.URL(), capt.URL())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := len(prov.Requests()); n != 3 {
		t.Fatalf("the script made %d provider requests, want 3\n%s", n, out)
	}
	rows := waitRows(t, conn)
	history := readHistory(t, conn)
	checkStored(t, src, want, rows, history)
}

// waitRows reads the stored turns once the calls waiting for log records
// are past their join window: every request was stored when the receiver
// answered it, which was before the script exited.
func waitRows(t *testing.T, conn driver.Conn) []storedRow {
	t.Helper()
	deadline := time.Now().Add(joinWindow + 5*time.Second)
	settle := time.Now().Add(joinWindow + 500*time.Millisecond)
	var rows []storedRow
	for {
		rows = readRows(t, conn)
		ends := 0
		for _, r := range rows {
			if r.CostSource != "" {
				ends++
			}
		}
		if (ends >= 3 && time.Now().After(settle)) || time.Now().After(deadline) {
			return rows
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func readRows(t *testing.T, conn driver.Conn) []storedRow {
	t.Helper()
	q, err := conn.Query(context.Background(), `SELECT span_id, turn_id, role, seq, content, history, provider, model,
		tool_name, tool_call_id, speaker, agent, thread_id, cost_source, operation, tokens_in, tokens_out, start_ns
		FROM conversations FINAL ORDER BY start_ns, span_id, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var rows []storedRow
	for q.Next() {
		var r storedRow
		if err := q.Scan(&r.SpanID, &r.TurnID, &r.Role, &r.Seq, &r.Content, &r.History, &r.Provider, &r.Model,
			&r.ToolName, &r.ToolCallID, &r.Speaker, &r.Agent, &r.Thread, &r.CostSource, &r.Operation,
			&r.TokensIn, &r.TokensOut, &r.StartNS); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// readHistory returns the stored history messages by id.
func readHistory(t *testing.T, conn driver.Conn) map[string]string {
	t.Helper()
	q, err := conn.Query(context.Background(), "SELECT id, message FROM messages FINAL")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	m := map[string]string{}
	for q.Next() {
		var id, msg string
		if err := q.Scan(&id, &msg); err != nil {
			t.Fatal(err)
		}
		m[id] = msg
	}
	return m
}

// fullContent puts a prompt's history back in front of its new messages.
func fullContent(r storedRow, history map[string]string) string {
	if len(r.History) == 0 {
		return r.Content
	}
	earlier := make([]string, len(r.History))
	for i, id := range r.History {
		earlier[i] = history[id]
	}
	return genai.JoinHistory(earlier, r.Content)
}

// message is one stored message, read loosely.
type message struct {
	Role  string `json:"role"`
	Parts []struct {
		Type      string          `json:"type"`
		Content   string          `json:"content"`
		Name      string          `json:"name"`
		ID        string          `json:"id"`
		Arguments json.RawMessage `json:"arguments"`
		Response  json.RawMessage `json:"response"`
	} `json:"parts"`
}

// messagesOf reads content as stored messages; plain text is one
// message of role fallbackRole.
func messagesOf(content, fallbackRole string) []message {
	var ms []message
	if strings.HasPrefix(strings.TrimSpace(content), "[") && json.Unmarshal([]byte(content), &ms) == nil {
		return ms
	}
	m := message{Role: fallbackRole}
	m.Parts = append(m.Parts, struct {
		Type      string          `json:"type"`
		Content   string          `json:"content"`
		Name      string          `json:"name"`
		ID        string          `json:"id"`
		Arguments json.RawMessage `json:"arguments"`
		Response  json.RawMessage `json:"response"`
	}{Type: "text", Content: content})
	return []message{m}
}

// textOfRole joins the text parts of the messages of role.
func textOfRole(ms []message, role string) []string {
	var out []string
	for _, m := range ms {
		if m.Role != role {
			continue
		}
		var b strings.Builder
		for _, p := range m.Parts {
			if p.Type == "text" {
				b.WriteString(p.Content)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// responseText is the text of a response turn's content.
func responseText(content string) string {
	return strings.Join(textOfRole(messagesOf(content, "assistant"), "assistant"), "")
}

// toolCalls lists the tool calls a response holds, as name and compact
// arguments.
func toolCalls(content string) []string {
	var out []string
	for _, m := range messagesOf(content, "assistant") {
		for _, p := range m.Parts {
			if p.Type == "tool_call" {
				out = append(out, p.Name+" "+compactJSON(p.Arguments))
			}
		}
	}
	return out
}

// toolResponses lists the tool results a prompt carries: the responses of
// tool_call_response parts, and the text of messages of role tool.
func toolResponses(content string) []string {
	ms := messagesOf(content, "user")
	out := textOfRole(ms, "tool")
	for _, m := range ms {
		for _, p := range m.Parts {
			if p.Type == "tool_call_response" {
				var s string
				if json.Unmarshal(p.Response, &s) != nil {
					s = compactJSON(p.Response)
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// compactJSON is raw as compact JSON; a JSON string holding JSON is read
// through.
func compactJSON(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// groupCalls groups rows into provider calls (spans with a row that ends a
// call), in start order, and returns the other rows apart.
func groupCalls(rows []storedRow) (calls []*storedCall, others []storedRow) {
	bySpan := map[string]*storedCall{}
	var order []string
	for _, r := range rows {
		c := bySpan[r.SpanID]
		if c == nil {
			c = &storedCall{spanID: r.SpanID, start: r.StartNS}
			bySpan[r.SpanID] = c
			order = append(order, r.SpanID)
		}
		c.start = min(c.start, r.StartNS)
		c.rows = append(c.rows, r)
	}
	for _, id := range order {
		c := bySpan[id]
		for i := range c.rows {
			if c.rows[i].CostSource != "" {
				c.end = &c.rows[i]
			}
		}
		if c.end != nil {
			calls = append(calls, c)
		} else {
			others = append(others, c.rows...)
		}
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].start < calls[j].start })
	return calls, others
}

// wantCall is one call of the scenario.
type wantCall struct {
	label   string
	system  string
	user    string
	answer  string // text, or "" for the tool call
	usage   Usage
	speaker string
}

var scenario = []wantCall{
	{label: "call 1 (planner → tool call)", system: PlannerSystem, user: PlannerUser, usage: ToolCallUsage, speaker: PlannerName},
	{label: "call 2 (planner → plan)", system: PlannerSystem, user: PlannerUser, answer: PlanAnswer, usage: PlanUsage, speaker: PlannerName},
	{label: "call 3 (critic)", system: CriticSystem, user: CriticUser, answer: CriticAnswer, usage: CriticUsage, speaker: CriticName},
}

// answerOf says which scenario answer a stored call gave: 0, 1, 2 or -1.
func answerOf(c *storedCall) int {
	for _, r := range c.rows {
		if r.Role != "response" {
			continue
		}
		if len(toolCalls(r.Content)) > 0 || r.ToolName == ToolName {
			return 0
		}
		switch strings.TrimSpace(responseText(r.Content)) {
		case PlanAnswer:
			return 1
		case CriticAnswer:
			return 2
		}
	}
	return -1
}

func checkStored(t *testing.T, src Source, want expectation, rows []storedRow, history map[string]string) {
	t.Helper()
	if len(rows) == 0 {
		t.Fatalf("%s: no turns stored", src.Name)
	}
	ids := map[string]int{}
	for _, r := range rows {
		ids[r.TurnID]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("%s: turn %s stored %d times under FINAL", src.Name, id, n)
		}
	}
	calls, others := groupCalls(rows)
	if len(calls) != 3 {
		var desc []string
		for _, c := range calls {
			desc = append(desc, fmt.Sprintf("%s(%d rows, answer %d)", c.spanID, len(c.rows), answerOf(c)))
		}
		t.Errorf("%s: %d calls stored (rows with cost_source != ''), want 3: %s", src.Name, len(calls), strings.Join(desc, ", "))
	}
	// Each expected call is checked against the stored call that gave its
	// answer; failing that, the one with its tokens; failing that, the
	// first call left, in start order.
	picked := make([]*storedCall, len(scenario))
	used := map[*storedCall]bool{}
	pick := func(match func(i int, c *storedCall) bool) {
		for i := range scenario {
			if picked[i] != nil {
				continue
			}
			for _, c := range calls {
				if !used[c] && match(i, c) {
					picked[i], used[c] = c, true
					break
				}
			}
		}
	}
	pick(func(i int, c *storedCall) bool { return answerOf(c) == i })
	pick(func(i int, c *storedCall) bool {
		return fmtTokens(c.end.TokensIn, c.end.TokensOut) == fmtTokens(u32(scenario[i].usage.In), u32(scenario[i].usage.Out))
	})
	pick(func(int, *storedCall) bool { return true })
	for i, w := range scenario {
		if picked[i] == nil {
			t.Errorf("%s %s: not stored", src.Name, w.label)
			continue
		}
		checkCall(t, src, want, w, i, picked[i], history)
	}
	if want.toolSpan {
		checkToolRun(t, src, want, rows, others)
	}
}

func checkCall(t *testing.T, src Source, want expectation, w wantCall, idx int, c *storedCall, history map[string]string) {
	t.Helper()
	name := src.Name + " " + w.label
	var prompt, response *storedRow
	var systemRows []string
	for i := range c.rows {
		r := &c.rows[i]
		switch r.Role {
		case "prompt":
			prompt = r
		case "response":
			response = r
		case "system":
			systemRows = append(systemRows, r.Content)
		}
	}
	if prompt == nil {
		t.Errorf("%s: no prompt row (roles %s)", name, rolesOf(c.rows))
	} else if want.content {
		ms := messagesOf(fullContent(*prompt, history), "user")
		systems := append(textOfRole(ms, "system"), systemRows...)
		if !contains(systems, w.system) {
			t.Errorf("%s: system prompt %q not stored; system messages %q (prompt %s)", name, w.system, systems, clip(fullContent(*prompt, history)))
		}
		if users := textOfRole(ms, "user"); !contains(users, w.user) {
			t.Errorf("%s: user message %q not stored; user messages %q (prompt %s)", name, w.user, users, clip(fullContent(*prompt, history)))
		}
		if idx == 1 {
			if res := toolResponses(fullContent(*prompt, history)); !contains(res, ToolResult) {
				t.Errorf("%s: the prompt does not carry the tool result %q; tool results %q (prompt %s)", name, ToolResult, res, clip(fullContent(*prompt, history)))
			}
		}
	}
	switch {
	case response == nil:
		t.Errorf("%s: no response row (roles %s)", name, rolesOf(c.rows))
	case !want.content:
	case idx == 0:
		calls := toolCalls(response.Content)
		if wantTC := ToolName + " " + ToolArguments; !contains(calls, wantTC) {
			t.Errorf("%s: response tool calls %q, want %q (content %s)", name, calls, wantTC, clip(response.Content))
		}
		if response.ToolName != ToolName {
			t.Errorf("%s: response tool_name %q, want %q", name, response.ToolName, ToolName)
		}
	default:
		if got := strings.TrimSpace(responseText(response.Content)); got != w.answer {
			t.Errorf("%s: answer %q, want %q (content %s)", name, got, w.answer, clip(response.Content))
		}
	}
	end := c.end
	wantTokens := fmtTokens(u32(w.usage.In), u32(w.usage.Out))
	if u, ok := want.usage[idx]; ok {
		wantTokens = fmtTokens(nil, nil)
		if u != nil {
			wantTokens = fmtTokens(u32(u.In), u32(u.Out))
		}
	}
	if got := fmtTokens(end.TokensIn, end.TokensOut); got != wantTokens {
		t.Errorf("%s: tokens in/out %s, want %s", name, got, wantTokens)
	}
	if end.Provider != want.provider {
		t.Errorf("%s: provider %q, want %q", name, end.Provider, want.provider)
	}
	if end.Model != want.model {
		t.Errorf("%s: model %q, want %q", name, end.Model, want.model)
	}
	if want.speakers && end.Speaker != w.speaker {
		t.Errorf("%s: speaker %q (agent %q), want %q", name, end.Speaker, end.Agent, w.speaker)
	}
	if want.thread != "" && end.Thread != want.thread {
		t.Errorf("%s: thread_id %q, want %q", name, end.Thread, want.thread)
	}
}

// checkToolRun checks the rows of the traced tool run: a tool_call with the
// arguments and a tool_result with the result.
func checkToolRun(t *testing.T, src Source, want expectation, rows, others []storedRow) {
	t.Helper()
	var call, result *storedRow
	for i := range rows {
		r := &rows[i]
		if r.Role == "tool_call" && call == nil {
			call = r
		}
		if r.Role == "tool_result" && result == nil {
			result = r
		}
	}
	if call == nil {
		t.Errorf("%s tool run: no tool_call row stored (rows outside calls: %s)", src.Name, rolesOf(others))
	} else {
		if call.ToolName != ToolName {
			t.Errorf("%s tool run: tool_call tool_name %q, want %q", src.Name, call.ToolName, ToolName)
		}
		if got := compactJSON(json.RawMessage(call.Content)); got != want.toolArgs {
			t.Errorf("%s tool run: tool_call arguments %s, want %s", src.Name, clip(call.Content), want.toolArgs)
		}
		if want.thread != "" && call.Thread != want.thread {
			t.Errorf("%s tool run: thread_id %q, want %q", src.Name, call.Thread, want.thread)
		}
		if want.speakers && call.Speaker != PlannerName {
			t.Errorf("%s tool run: speaker %q (agent %q), want %q", src.Name, call.Speaker, call.Agent, PlannerName)
		}
	}
	if result == nil {
		t.Errorf("%s tool run: no tool_result row stored", src.Name)
	} else if got := strings.Trim(strings.TrimSpace(result.Content), `"`); got != ToolResult {
		t.Errorf("%s tool run: tool_result %s, want %q", src.Name, clip(result.Content), ToolResult)
	}
}

func u32(v int) *uint32 { n := uint32(v); return &n }

func fmtTokens(in, out *uint32) string {
	f := func(p *uint32) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	return f(in) + "/" + f(out)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

func rolesOf(rows []storedRow) string {
	var rs []string
	for _, r := range rows {
		rs = append(rs, r.Role)
	}
	return "[" + strings.Join(rs, " ") + "]"
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
