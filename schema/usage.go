package schema

import "math"

// InputTokens returns a call's input token count under the one rule every
// source follows, the OTel GenAI conventions': input includes the tokens
// read from and written to the prompt cache. excludesCache says the source
// counts input without them, as Anthropic's API and Claude Code do; a
// source that does not say is taken to follow the conventions (OpenAI,
// Codex and the GenAI instrumentations do) unless its input is smaller than
// its cache tokens, which only a count that leaves the cache out can be.
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
