package viewer

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// traceRoutes serves the trace pages and their JSON twins.
func (s *Server) traceRoutes(app, api *gin.RouterGroup) {
	app.GET("/traces/:trace_id", s.tracePage)
	api.GET("/traces/:trace_id", s.apiTrace)
	api.GET("/traces/:trace_id/spans/:span_id/turns", s.apiSpanTurns)
}

// Trace is one trace as the waterfall shows it: its spans in display order
// and what they add up to. Sums are nil when no span reported the value.
type Trace struct {
	TraceID    string      `json:"trace_id"`
	ThreadIDs  []string    `json:"thread_ids"` // distinct, sorted
	Start      time.Time   `json:"start"`
	StartNS    uint64      `json:"start_ns"`
	EndNS      uint64      `json:"end_ns"`
	DurationNS uint64      `json:"duration_ns"`
	SpanCount  int         `json:"span_count"`
	TokensIn   *uint64     `json:"tokens_in"`
	TokensOut  *uint64     `json:"tokens_out"`
	Tokens     *uint64     `json:"tokens"` // in + out
	CostUSD    *float64    `json:"cost_usd"`
	Spans      []TraceSpan `json:"spans"`
}

// TraceSpan is one span of a trace. Spans are listed depth first: each
// span's children follow it in start order, at Depth one more; a span whose
// parent is not in the trace is at depth 0.
type TraceSpan struct {
	SpanID        string `json:"span_id"`
	ParentSpanID  string `json:"parent_span_id"`
	Depth         int    `json:"depth"`
	Name          string `json:"name"`
	Kind          string `json:"kind"`
	ThreadID      string `json:"thread_id"`
	Phase         string `json:"phase"`
	Round         uint16 `json:"round"`
	Speaker       string `json:"speaker"`
	Agent         string `json:"agent"`
	StartNS       uint64 `json:"start_ns"`
	DurationNS    uint64 `json:"duration_ns"`
	Status        string `json:"status"`
	StatusMessage string `json:"status_message"`
	Operation     string `json:"operation"`
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	// LLM marks a provider call: a span naming a provider or a model.
	LLM       bool     `json:"llm"`
	TokensIn  *uint64  `json:"tokens_in"`
	TokensOut *uint64  `json:"tokens_out"`
	CostUSD   *float64 `json:"cost_usd"`
	// Turns is how many turns the span recorded in conversations.
	Turns uint64 `json:"turns"`
	// Running marks a call that has not ended: no duration, no answer row.
	// The waterfall draws it to the end of the trace. Interrupted marks
	// one that has not ended either but whose recorder stopped its
	// heartbeat: its process died.
	Running     bool `json:"running"`
	Interrupted bool `json:"interrupted"`
	// Failed is status error, or an error row among the span's turns.
	Failed bool `json:"failed"`
}

// SpanTurn is one turn of a span as the trace page lists it: its content
// cut to about 2 KB, and the link to the turn in its thread.
type SpanTurn struct {
	TurnID     string   `json:"turn_id"`
	ThreadID   string   `json:"thread_id"`
	Role       string   `json:"role"`
	Seq        uint16   `json:"seq"`
	Speaker    string   `json:"speaker"`
	Phase      string   `json:"phase"`
	Model      string   `json:"model"`
	ToolName   string   `json:"tool_name"`
	Status     string   `json:"status"`
	Error      string   `json:"error"`
	StartNS    uint64   `json:"start_ns"`
	DurationNS uint64   `json:"duration_ns"`
	TokensIn   *uint32  `json:"tokens_in"`
	TokensOut  *uint32  `json:"tokens_out"`
	CostUSD    *float64 `json:"cost_usd"`
	Content    string   `json:"content"`
	// Messages is Content read as chat messages JSON, as far as it decodes
	// (the cut may end it mid-message); empty when Content is not such JSON.
	Messages     []SpanMessage `json:"messages"`
	ContentCut   bool          `json:"content_cut"` // Content is not all of the turn
	ContentBytes uint32        `json:"content_bytes"`
	URL          string        `json:"url"` // the turn in its thread page
}

// SpanMessage is one chat message of a turn's content.
type SpanMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// spanMessages reads the chat messages at the start of content.
func spanMessages(content string) []SpanMessage {
	msgs, _ := genai.Decode(content)
	out := make([]SpanMessage, len(msgs))
	for i, m := range msgs {
		out[i] = SpanMessage{Role: roleLabel(m), Text: m.Text()}
	}
	return out
}

// trace reads a trace and orders its spans; errTraceNotFound when it has
// neither span nor turn.
func (s *Server) trace(c *gin.Context) (Trace, error) {
	id := c.Param("trace_id")
	spans, calls, err := s.store.TraceRows(c.Request.Context(), id)
	if err != nil {
		return Trace{}, err
	}
	if len(spans) == 0 && len(calls) == 0 {
		return Trace{}, ErrTraceNotFound
	}
	return buildTrace(id, spans, calls), nil
}

// buildTrace joins a trace's span rows with what their turns add up to,
// draws a span from the turns of a call that has no span row yet (it is
// still running, or was interrupted), and orders the spans depth first.
func buildTrace(id string, spanRows []SpanRow, calls []CallRow) Trace {
	byCall := make(map[string]CallRow, len(calls))
	for _, c := range calls {
		byCall[c.SpanID] = c
	}
	spans := make([]TraceSpan, 0, len(spanRows)+len(calls))
	seen := make(map[string]bool, len(spanRows))
	for _, r := range spanRows {
		seen[r.SpanID] = true
		sp := TraceSpan{
			SpanID: r.SpanID, ParentSpanID: r.ParentSpanID, Name: r.Name, Kind: r.Kind,
			ThreadID: r.ThreadID, Phase: r.Phase, Round: r.Round, Speaker: r.Speaker, Agent: r.Agent,
			StartNS: r.StartNS, DurationNS: r.DurationNS, Status: r.Status, StatusMessage: r.StatusMessage,
			Operation: r.Operation, Provider: r.Provider, Model: r.Model,
			TokensIn: widen(r.TokensIn), TokensOut: widen(r.TokensOut), CostUSD: r.CostUSD,
		}
		if c, ok := byCall[r.SpanID]; ok {
			sp.Turns = c.Turns
			sp.Running = r.DurationNS == 0 && !c.Ended
			sp.Failed = c.Failed
			// Usage the span did not carry, its response row may have.
			if sp.TokensIn == nil {
				sp.TokensIn = c.TokensIn
			}
			if sp.TokensOut == nil {
				sp.TokensOut = c.TokensOut
			}
			if sp.CostUSD == nil {
				sp.CostUSD = c.CostUSD
			}
		}
		spans = append(spans, sp)
	}
	for _, c := range calls {
		if seen[c.SpanID] {
			continue
		}
		sp := TraceSpan{
			SpanID: c.SpanID, ParentSpanID: c.ParentSpanID, Name: callName(c),
			ThreadID: c.ThreadID, Phase: c.Phase, Round: c.Round, Speaker: c.Speaker, Agent: c.Agent,
			StartNS: c.StartNS, Operation: c.Operation, Provider: c.Provider, Model: c.Model,
			TokensIn: c.TokensIn, TokensOut: c.TokensOut, CostUSD: c.CostUSD,
			Turns: c.Turns, Running: !c.Ended && c.Alive, Interrupted: !c.Ended && !c.Alive,
			Failed: c.Failed, Status: schema.StatusOK,
		}
		if c.Ended {
			sp.DurationNS = c.EndNS - c.StartNS
		}
		if c.Failed {
			sp.Status, sp.StatusMessage = schema.StatusError, c.Error
		}
		spans = append(spans, sp)
	}

	// The trace's threads are those of its turns and spans; but a span
	// without a thread is stored with its trace id as thread, which only
	// has a page when turns were said in it.
	t := Trace{TraceID: id, ThreadIDs: []string{}, SpanCount: len(spans)}
	turnThreads := map[string]bool{}
	for _, c := range calls {
		turnThreads[c.ThreadID] = true
	}
	for i := range spans {
		sp := &spans[i]
		if th := sp.ThreadID; th != "" && (th != id || turnThreads[th]) && !slices.Contains(t.ThreadIDs, th) {
			t.ThreadIDs = append(t.ThreadIDs, th)
		}
		sp.LLM = sp.Provider != "" || sp.Model != ""
		sp.Failed = sp.Failed || sp.Status == schema.StatusError
		if i == 0 || sp.StartNS < t.StartNS {
			t.StartNS = sp.StartNS
		}
		t.EndNS = max(t.EndNS, sp.StartNS+sp.DurationNS)
		if c, ok := byCall[sp.SpanID]; ok {
			t.EndNS = max(t.EndNS, c.EndNS)
		}
		t.TokensIn = AddKnown(t.TokensIn, sp.TokensIn)
		t.TokensOut = AddKnown(t.TokensOut, sp.TokensOut)
		t.CostUSD = AddKnown(t.CostUSD, sp.CostUSD)
	}
	slices.Sort(t.ThreadIDs)
	t.DurationNS = t.EndNS - t.StartNS
	t.Start = time.Unix(0, int64(t.StartNS)).UTC()
	t.Tokens = AddKnown(t.TokensIn, t.TokensOut)
	// A running call lasts, as far as anyone knows, until the trace's end.
	for i := range spans {
		if spans[i].Running && spans[i].DurationNS == 0 {
			spans[i].DurationNS = t.EndNS - spans[i].StartNS
		}
	}
	t.Spans = nestSpans(spans)
	return t
}

// nestSpans orders spans depth first: roots (no parent, or a parent not in
// the trace) by start, each followed by its children by start. A span on a
// parent cycle, which no tracer writes, still shows, at depth 0.
func nestSpans(spans []TraceSpan) []TraceSpan {
	byStart := func(a, b *TraceSpan) int {
		return cmp.Or(cmp.Compare(a.StartNS, b.StartNS), cmp.Compare(a.SpanID, b.SpanID))
	}
	present := make(map[string]bool, len(spans))
	for _, sp := range spans {
		present[sp.SpanID] = true
	}
	children := map[string][]*TraceSpan{}
	var roots []*TraceSpan
	for i := range spans {
		sp := &spans[i]
		if sp.ParentSpanID == "" || sp.ParentSpanID == sp.SpanID || !present[sp.ParentSpanID] {
			roots = append(roots, sp)
			continue
		}
		children[sp.ParentSpanID] = append(children[sp.ParentSpanID], sp)
	}
	out := make([]TraceSpan, 0, len(spans))
	placed := make(map[string]bool, len(spans))
	var walk func(sp *TraceSpan, depth int)
	walk = func(sp *TraceSpan, depth int) {
		if placed[sp.SpanID] {
			return
		}
		placed[sp.SpanID] = true
		sp.Depth = depth
		out = append(out, *sp)
		kids := children[sp.SpanID]
		slices.SortFunc(kids, byStart)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	slices.SortFunc(roots, byStart)
	for _, r := range roots {
		walk(r, 0)
	}
	for i := range spans {
		walk(&spans[i], 0)
	}
	return out
}

// callName names a span drawn from its turns the way OTel GenAI names a
// provider call's span: operation and model.
func callName(c CallRow) string {
	switch {
	case c.Operation != "" && c.Model != "":
		return c.Operation + " " + c.Model
	case c.Operation != "":
		return c.Operation
	case c.Model != "":
		return c.Model
	}
	return "call"
}

// widen is a span's token count as the sums the trace adds it to.
func widen(v *uint32) *uint64 {
	if v == nil {
		return nil
	}
	n := uint64(*v)
	return &n
}

// tracePage renders a trace's waterfall; ?span= opens that span's turns.
func (s *Server) tracePage(c *gin.Context) {
	t, err := s.trace(c)
	if errors.Is(err, ErrNotFound) {
		s.html(c, http.StatusNotFound, "notfound.html", "No trace has the id "+c.Param("trace_id")+".")
		return
	}
	if err != nil {
		s.pageError(c, err)
		return
	}
	v := newTraceView(t)
	if id := c.Query("span"); id != "" {
		if v.Selected = t.span(id); v.Selected == nil {
			s.pageError(c, BadParam("span", "%q is not a span of this trace", id))
			return
		}
		if v.Turns, err = s.store.SpanTurns(c.Request.Context(), t.TraceID, id); err != nil {
			s.pageError(c, err)
			return
		}
	}
	s.html(c, http.StatusOK, "trace.html", v)
}

// apiTrace answers GET /api/traces/:trace_id with the Trace.
func (s *Server) apiTrace(c *gin.Context) {
	t, err := s.trace(c)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, t)
}

// apiSpanTurns answers GET /api/traces/:trace_id/spans/:span_id/turns:
// {"trace_id", "span_id", "turns": [...]}, what the trace page opens when a
// span is clicked. A span without turns has none; an unknown trace is 404.
func (s *Server) apiSpanTurns(c *gin.Context) {
	ctx, traceID, spanID := c.Request.Context(), c.Param("trace_id"), c.Param("span_id")
	turns, err := s.store.SpanTurns(ctx, traceID, spanID)
	if err != nil {
		s.apiError(c, err)
		return
	}
	if len(turns) == 0 {
		// No turns: tell an unknown trace from a span that said nothing.
		found, err := s.store.TraceExists(ctx, traceID)
		if err == nil && !found {
			err = ErrTraceNotFound
		}
		if err != nil {
			s.apiError(c, err)
			return
		}
	}
	s.writeJSON(c, http.StatusOK, struct {
		TraceID string     `json:"trace_id"`
		SpanID  string     `json:"span_id"`
		Turns   []SpanTurn `json:"turns"`
	}{traceID, spanID, turns})
}

// span returns the span with the id, nil when the trace has none.
func (t *Trace) span(id string) *TraceSpan {
	for i := range t.Spans {
		if t.Spans[i].SpanID == id {
			return &t.Spans[i]
		}
	}
	return nil
}

// traceView is what the trace page renders: the trace, each span's bar
// geometry, the time axis, and the selected span's turns.
type traceView struct {
	Trace
	Rows     []spanBar
	Ticks    []axisTick
	Selected *TraceSpan
	Turns    []SpanTurn
}

// spanBar places a span on the waterfall. X and Width are percentages of
// the trace's duration, written for SVG attributes (the CSP forbids inline
// style); Indent is a CSS class, capped at maxIndent levels.
type spanBar struct {
	TraceSpan
	X, Width string
	Indent   int
}

// axisTick is a label of the time axis at X percent of the trace.
type axisTick struct {
	X, Label, Anchor string
}

// maxIndent is the deepest indent trace.css defines (.depth-0 … .depth-12);
// deeper spans share it, their order still showing the nesting.
const maxIndent = 12

// minBarPercent keeps an instant span visible as a sliver.
const minBarPercent = 0.3

func newTraceView(t Trace) traceView {
	v := traceView{Trace: t}
	total := float64(t.DurationNS)
	pct := func(ns uint64) float64 {
		if total == 0 {
			return 0
		}
		return float64(ns) / total * 100
	}
	for _, sp := range t.Spans {
		x := pct(sp.StartNS - t.StartNS)
		w := max(pct(sp.DurationNS), minBarPercent)
		if total == 0 {
			w = 100
		}
		w = min(w, 100-x)
		if w < minBarPercent { // a sliver at the very end
			x, w = 100-minBarPercent, minBarPercent
		}
		v.Rows = append(v.Rows, spanBar{TraceSpan: sp, X: percent(x), Width: percent(w), Indent: min(sp.Depth, maxIndent)})
	}
	for _, ns := range axisSteps(t.DurationNS) {
		tick := axisTick{X: percent(pct(ns)), Label: formatOffset(ns), Anchor: "middle"}
		switch ns {
		case 0:
			tick.Anchor = "start"
		case t.DurationNS:
			tick.Anchor = "end"
		}
		v.Ticks = append(v.Ticks, tick)
	}
	return v
}

func percent(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + "%" }

// axisSteps returns the offsets the time axis labels: 0, then multiples of
// a round step (1, 2 or 5 times a power of ten nanoseconds) giving at most
// six labels, then the end unless a label sits close to it.
func axisSteps(total uint64) []uint64 {
	steps := []uint64{0}
	if total == 0 {
		return steps
	}
	step := uint64(1)
	for total/step > 5 {
		switch s := step; {
		case total/(s*2) <= 5:
			step = s * 2
		case total/(s*5) <= 5:
			step = s * 5
		default:
			step = s * 10
		}
	}
	for ns := step; ns < total; ns += step {
		if total-ns < step/2 { // too close to the end label
			break
		}
		steps = append(steps, ns)
	}
	return append(steps, total)
}

// formatOffset writes an offset from the trace's start; 0 is "0".
func formatOffset(ns uint64) string {
	if ns == 0 {
		return "0"
	}
	return formatDuration(ns)
}
