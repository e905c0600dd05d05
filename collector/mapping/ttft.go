package mapping

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// Where the conventions put a streamed call's time to first token, besides
// OTel GenAI's gen_ai.response.time_to_first_chunk; which are not read, and
// why: docs/design/mapping.md.
const (
	vcMsToFirstChunk  = "ai.response.msToFirstChunk"
	lfCompletionStart = "langfuse.observation.completion_start_time"
)

var _ = keys(schema.KeyTimeToFirstChunk, vcMsToFirstChunk, lfCompletionStart)

// timeToFirstToken returns the span's time to first token in nanoseconds,
// from the first of the attributes above that it carries; 0 when it
// carries none, or when the value is no time within the span: negative,
// not a number, or longer than the call.
func timeToFirstToken(s Span) uint64 {
	var ns float64
	if v, ok := s.Attrs.Get(schema.KeyTimeToFirstChunk); ok {
		ns = number(v) * 1e9
	} else if v, ok := s.Attrs.Get(vcMsToFirstChunk); ok {
		ns = number(v) * 1e6
	} else if v, ok := s.Attrs.Get(lfCompletionStart); ok {
		if at, ok := timestamp(v); ok {
			ns = float64(at.UnixNano()) - float64(s.StartNS)
		}
	}
	if !(ns > 0) || ns > math.MaxInt64 || (s.Ended && uint64(ns) > s.durationNS()) {
		return 0
	}
	return uint64(math.Round(ns))
}

// number is v as a float, NaN when it is none.
func number(v string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// timestamp reads an ISO 8601 time as Langfuse's SDKs write it: RFC 3339,
// possibly JSON-quoted, or without a zone (UTC), as Python's isoformat
// writes a naive time.
func timestamp(v string) (time.Time, bool) {
	v = strings.Trim(strings.TrimSpace(v), `"`)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
