package schema

import "math"

// InputTokens returns a call's input token count under the OTel GenAI rule
// every source is stored in: input includes prompt cache reads and writes.
// excludesCache says the source counts input without them; input smaller
// than its cache tokens is taken to (docs/design/mapping.md).
func InputTokens(input, cacheRead, cacheWrite uint64, excludesCache bool) uint64 {
	if excludesCache || input < cacheRead+cacheWrite {
		return input + cacheRead + cacheWrite
	}
	return input
}

// ValidCost reports whether f can be stored as a cost in US dollars: a
// finite, non-negative number (NaN is not), which no sum it enters is
// poisoned by.
func ValidCost(f float64) bool {
	return f >= 0 && !math.IsInf(f, 1)
}
