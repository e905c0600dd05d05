package mapping

import (
	"strconv"

	"github.com/convtrace/convtrace/schema"
)

// FoldCalls marks the content-less GenAI call spans of spans whose parent
// or child in spans is a call with content as duplicates, and gives that
// call the more complete usage of the two: one call is stored once. It
// sees one batch only (docs/design/staging.md, "Within one export").
func FoldCalls(spans []Span) {
	if len(spans) < 2 {
		return // nothing to fold into
	}
	byID := make(map[string]int, len(spans))
	children := map[string][]int{}
	for i, s := range spans {
		byID[s.TraceID+"/"+s.SpanID] = i
		if s.ParentSpanID != "" {
			children[s.TraceID+"/"+s.ParentSpanID] = append(children[s.TraceID+"/"+s.ParentSpanID], i)
		}
	}
	for i := range spans {
		d := &spans[i]
		if !isGenAICall(d.Attrs) || hasContent(*d) || vercelOperation(d.Attrs) != "" {
			continue
		}
		w := -1
		if p, ok := byID[d.TraceID+"/"+d.ParentSpanID]; ok && d.ParentSpanID != "" && contentCall(spans[p]) {
			w = p
		}
		for _, j := range children[d.TraceID+"/"+d.SpanID] {
			if w < 0 && contentCall(spans[j]) {
				w = j
			}
		}
		if w < 0 {
			continue
		}
		d.duplicate = true
		if usageScore(*d) > usageScore(spans[w]) {
			spans[w].Attrs = withUsageOf(spans[w].Attrs, resolve(*d))
		}
	}
}

// contentCall says whether s is a provider call that says what was said.
func contentCall(s Span) bool {
	if !hasContent(s) {
		return false
	}
	for _, tool := range toolConventions {
		if _, ok := tool(s); ok {
			return false
		}
	}
	return true
}

// usageScore ranks how much of a call's usage a span tells: the counts it
// knows, then the larger input (the one that counts the cache).
func usageScore(s Span) uint64 {
	c := resolve(s)
	var known uint64
	for _, n := range []*uint32{c.tokensIn, c.tokensOut, c.tokensCacheRead, c.tokensCacheWrite, c.tokensReasoning} {
		if n != nil {
			known++
		}
	}
	return known<<32 | count(c.tokensIn)
}

// withUsageOf returns a with the usage c knows set under the GenAI keys,
// which resolve reads first.
func withUsageOf(a Attrs, c call) Attrs {
	usage := []struct {
		key string
		n   *uint32
	}{
		{schema.KeyInputTokens, c.tokensIn}, {schema.KeyOutputTokens, c.tokensOut},
		{schema.KeyCacheReadTokens, c.tokensCacheRead}, {schema.KeyCacheWriteTokens, c.tokensCacheWrite},
		{schema.KeyReasoningTokens, c.tokensReasoning},
	}
	var out Attrs
	for _, u := range usage {
		if u.n != nil {
			out.List = append(out.List, schema.Attr{Key: u.key, Value: strconv.FormatUint(uint64(*u.n), 10)})
		}
	}
	for _, kv := range a.List {
		known := false
		for _, u := range usage {
			known = known || u.n != nil && kv.Key == u.key
		}
		if !known {
			out.List = append(out.List, kv)
		}
	}
	return out
}
