package schema

import (
	"fmt"
	"math"
	"time"
)

// The times convtrace stores: every start, heartbeat and event time of a
// row, and a span's end, lies in [MinTimeNS, MaxTimeNS]. The end is the
// last second the ts column (a DateTime, start_ns in seconds) holds:
// later starts would wrap it. The start is 2000-01-01: an earlier time is
// an unset clock (0, OTLP's "unknown") or a time in the wrong unit
// (seconds, milliseconds or microseconds sent as nanoseconds all land in
// 1970), and no recorded conversation is that old. Every entrance checks
// it: OTLP ingest and import with CheckTime, the time parameters of the
// viewer and the CLI (page.ParseTime) against the same bounds, so that
// whatever is stored exports and imports back.
const (
	MinTimeNS uint64 = 946_684_800 * uint64(time.Second)    // 2000-01-01T00:00:00Z
	MaxTimeNS uint64 = math.MaxUint32 * uint64(time.Second) // 2106-02-07T06:28:15Z
)

// CheckTime returns an error naming what when ns is outside the times
// convtrace stores.
func CheckTime(what string, ns uint64) error {
	if ns >= MinTimeNS && ns <= MaxTimeNS {
		return nil
	}
	return fmt.Errorf("%s %d (%s) is outside the times convtrace stores, %s to %s",
		what, ns, FormatNS(ns), FormatNS(MinTimeNS), FormatNS(MaxTimeNS))
}

// FormatNS writes Unix nanoseconds as an RFC 3339 time in UTC, any uint64
// included.
func FormatNS(ns uint64) string {
	return time.Unix(int64(ns/uint64(time.Second)), int64(ns%uint64(time.Second))).UTC().Format(time.RFC3339Nano)
}
