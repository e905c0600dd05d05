package viewer

import (
	"cmp"
	"slices"
	"time"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

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
	// TTFTNS is a provider call's time to first token (its answer's
	// ttft_ns), 0 when unknown; the waterfall and the detail pane draw it.
	TTFTNS uint64 `json:"ttft_ns"`
}

// buildTrace joins a trace's span rows with what their turns add up to,
// draws a span from the turns of a call that has no span row yet (it is
// still running, or was interrupted), and orders the spans depth first.
func buildTrace(id string, spanRows []schema.Span, calls []store.CallRow) Trace {
	byCall := make(map[string]store.CallRow, len(calls))
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
			StartNS: r.StartNS, DurationNS: r.DurationNS, Status: r.Status, StatusMessage: r.StatusMsg,
			Operation: r.Operation, Provider: r.Provider, Model: r.Model,
			TokensIn: widen(r.TokensIn), TokensOut: widen(r.TokensOut), CostUSD: r.CostUSD,
		}
		if c, ok := byCall[r.SpanID]; ok {
			sp.Turns = c.Turns
			sp.Running = r.DurationNS == 0 && !c.Ended
			sp.Failed, sp.TTFTNS = c.Failed, c.TTFTNS
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
			Failed: c.Failed, Status: schema.StatusOK, TTFTNS: c.TTFTNS,
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
		t.TokensIn = store.AddKnown(t.TokensIn, sp.TokensIn)
		t.TokensOut = store.AddKnown(t.TokensOut, sp.TokensOut)
		t.CostUSD = store.AddKnown(t.CostUSD, sp.CostUSD)
	}
	slices.Sort(t.ThreadIDs)
	t.DurationNS = t.EndNS - t.StartNS
	t.Start = time.Unix(0, int64(t.StartNS)).UTC()
	t.Tokens = store.AddKnown(t.TokensIn, t.TokensOut)
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
func callName(c store.CallRow) string {
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

// span returns the span with the id, nil when the trace has none.
func (t *Trace) span(id string) *TraceSpan {
	for i := range t.Spans {
		if t.Spans[i].SpanID == id {
			return &t.Spans[i]
		}
	}
	return nil
}
