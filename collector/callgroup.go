package collector

import (
	"context"
	"slices"
	"time"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// Which staged spans are one provider call, and what each inherits from
// its ancestors, is decided from the stored records alone (the trace's
// spans rows, join_staging), so every instance decides the same. The
// rules: docs/design/staging.md, "Which spans are one call".

// maxDepth bounds a walk up a trace's tree: a sender may send a cycle.
const maxDepth = 256

// spanTree is what the spans table holds of some traces.
type spanTree struct {
	spans    map[joinKey]mapping.Span
	children map[joinKey][]joinKey
}

// tree reads the spans of traces, with the spans of the request being
// stored (not in the table yet) added.
func (st *stager) tree(ctx context.Context, conn stagingConn, traces []store.ProjectTrace, extra []mapping.Span) (spanTree, error) {
	t := spanTree{spans: map[joinKey]mapping.Span{}, children: map[joinKey][]joinKey{}}
	add := func(s mapping.Span) {
		k := joinKey{TraceID: s.TraceID, SpanID: s.SpanID}
		if _, ok := t.spans[k]; ok {
			return
		}
		t.spans[k] = s
		if s.ParentSpanID != "" {
			p := joinKey{TraceID: s.TraceID, SpanID: s.ParentSpanID}
			t.children[p] = append(t.children[p], k)
		}
	}
	for _, s := range extra {
		add(s)
	}
	if len(traces) == 0 {
		return t, nil
	}
	err := store.EachTraceSpan(ctx, conn, traces, func(n store.SpanNode) {
		add(mapping.Span{TraceID: n.TraceID, SpanID: n.SpanID, ParentSpanID: n.ParentSpanID, Name: n.Name,
			Attrs: mapping.Attrs{List: n.Attrs}, Resource: mapping.Attrs{List: n.Resource}})
	})
	if err != nil {
		st.close()
	}
	return t, err
}

// ancestors returns the keys above k, nearest first, as far as the tree
// knows them.
func (t spanTree) ancestors(k joinKey) []joinKey {
	var out []joinKey
	s, ok := t.spans[k]
	for depth := 0; ok && s.ParentSpanID != "" && depth < maxDepth; depth++ {
		p := joinKey{TraceID: k.TraceID, SpanID: s.ParentSpanID}
		out = append(out, p)
		s, ok = t.spans[p]
	}
	return out
}

// unit is one call to write: the staged span whose id keys its turns, the
// spans folded into it, and the call they make together.
type unit struct {
	call    *stagedCall
	fold    []*stagedCall // the other span of the same call
	silent  bool          // call is a wrapper of several calls: marks only
	span    mapping.Span
	records uint32 // of every span of the call
	// waiting says what its sort key depends on may still arrive: an
	// ancestor naming its thread, or a tool's parent.
	waiting bool
}

// units reads what the calls of one completion round need beyond their own
// records (their traces' trees, their relatives' staged records) and
// returns each call to write once, keyed by the span that keys its turns.
func (st *stager) units(ctx context.Context, calls []*stagedCall) ([]*unit, error) {
	conn, err := st.connection(ctx)
	if err != nil {
		return nil, err
	}
	var traces []store.ProjectTrace
	for _, c := range calls {
		if c.span == nil {
			continue
		}
		if pt := (store.ProjectTrace{Project: mapping.Project(*c.span), TraceID: c.key.TraceID}); !slices.Contains(traces, pt) {
			traces = append(traces, pt)
		}
	}
	tree, err := st.tree(ctx, conn, traces, nil)
	if err != nil {
		return nil, err
	}
	// The staged records of every span around the calls: ancestors (for a
	// wrapper call or what they inherit) and children.
	known := make(map[joinKey]*stagedCall, len(calls))
	for _, c := range calls {
		known[c.key] = c
	}
	var around []joinKey
	for _, c := range calls {
		if c.span == nil {
			continue
		}
		for _, k := range append(tree.ancestors(c.key), tree.children[c.key]...) {
			if known[k] == nil && !slices.Contains(around, k) {
				around = append(around, k)
			}
		}
	}
	if len(around) > 0 {
		rel, err := st.read(ctx, around)
		if err != nil {
			return nil, err
		}
		for _, c := range rel {
			known[c.key] = c
		}
	}
	g := grouping{tree: tree, staged: known}
	var out []*unit
	seen := map[joinKey]bool{}
	for _, c := range calls {
		u := g.unitOf(c)
		if seen[u.call.key] {
			continue
		}
		seen[u.call.key] = true
		out = append(out, u)
	}
	return out, nil
}

// grouping decides which staged spans are one call.
type grouping struct {
	tree   spanTree
	staged map[joinKey]*stagedCall
}

// callAt returns the staged call span at k, nil when k is no call or was
// not staged.
func (g grouping) callAt(k joinKey) *stagedCall {
	c := g.staged[k]
	if c == nil || c.span == nil || !mapping.IsCall(*c.span) {
		return nil
	}
	return c
}

func (g grouping) callsUnder(k joinKey) []*stagedCall {
	var out []*stagedCall
	for _, ch := range g.tree.children[k] {
		if c := g.callAt(ch); c != nil {
			out = append(out, c)
		}
	}
	return out
}

func (g grouping) unitOf(c *stagedCall) *unit {
	if c.span == nil {
		return &unit{call: c, span: c.joined(), records: c.records}
	}
	kids := g.callsUnder(c.key)
	var outer, inner *stagedCall
	switch {
	case len(kids) > 1:
		return &unit{call: c, silent: true, records: c.records}
	case len(kids) == 1:
		outer, inner = c, kids[0]
	default:
		if p := g.callAt(joinKey{TraceID: c.key.TraceID, SpanID: c.span.ParentSpanID}); p != nil && len(g.callsUnder(p.key)) == 1 {
			outer, inner = p, c
		}
	}
	u := &unit{call: c, records: c.records}
	if outer != nil {
		rep, other := inner, outer
		if outer.wroteTurns && !inner.wroteTurns {
			rep, other = outer, inner
		}
		u = &unit{call: rep, fold: []*stagedCall{other}, records: rep.records + other.records}
		u.span = mapping.Fold(rep.joined(), other.joined())
	} else {
		u.span = c.joined()
	}
	top := u.call.key
	for _, f := range u.fold {
		if f == outer {
			top = f.key
		}
	}
	var ancestors []mapping.Span
	for _, k := range g.tree.ancestors(top) {
		if _, ok := g.tree.spans[k]; ok || g.staged[k] != nil {
			ancestors = append(ancestors, g.span(k))
		}
	}
	own := u.span
	u.span = mapping.Inherit(u.span, ancestors)
	up := g.tree.ancestors(top)
	rooted := len(ancestors) == len(up) && (len(up) == 0 && g.span(top).ParentSpanID == "" ||
		len(up) > 0 && ancestors[len(ancestors)-1].ParentSpanID == "")
	u.waiting = !mapping.HasThread(own) && !rooted
	if mapping.IsTool(own) {
		// A tool's turns sort after the answer of the call that asked for
		// it, its parent when that is a call.
		p := g.callAt(joinKey{TraceID: top.TraceID, SpanID: own.ParentSpanID})
		switch {
		case p != nil:
			u.span.StartNS = max(u.span.StartNS, p.span.EndNS+1)
			u.span.EndNS = max(u.span.EndNS, u.span.StartNS)
		case own.ParentSpanID != "" && len(ancestors) == 0:
			u.waiting = true // its parent has not arrived
		}
	}
	return u
}

// span is the span at k: its staged record, else its spans row.
func (g grouping) span(k joinKey) mapping.Span {
	if s := g.staged[k]; s != nil && s.span != nil {
		return *s.span
	}
	return g.tree.spans[k]
}

// due reports whether the unit's turns are to be written now: records
// arrived since the last write and it is late, an agent's, or complete
// with its sort key known (docs/design/staging.md, "When a unit is due").
func (u *unit) due(merged uint32, now time.Time, window, grace time.Duration) bool {
	c := u.call
	switch {
	case u.silent || u.records == 0 || merged >= u.records:
		return false
	case merged > 0 || uint64(now.Add(-window-grace).UnixNano()) >= c.firstNS || mapping.AgentStream(u.span):
		return true
	case !c.spanKeyed(now, window, grace) || u.waiting:
		return false
	}
	return mapping.Complete(u.span)
}

// keep gives turns the thread the unit's turns were first written in,
// and records the thread they are written in now.
func (u *unit) keep(turns []schema.Turn) {
	if len(turns) == 0 {
		return
	}
	if u.call.thread == "" {
		u.call.thread = turns[0].ThreadID
	}
	for i := range turns {
		turns[i].ThreadID = u.call.thread
	}
}

// spans are the staged spans of the unit's call.
func (u *unit) spans() []*stagedCall { return append([]*stagedCall{u.call}, u.fold...) }

// marks are the written marks of a unit: its call's, and a folded mark for
// each span folded into it, or for a wrapper that has no turns.
func (u *unit) marks() []schema.Staged {
	if u.silent {
		return []schema.Staged{u.call.written(u.call.records, true)}
	}
	out := []schema.Staged{u.call.written(u.call.records, false)}
	for _, f := range u.fold {
		out = append(out, f.written(f.records, true))
	}
	return out
}
