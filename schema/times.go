package schema

import (
	"fmt"
	"math"
	"time"
)

// The times convtrace stores: every time of a row lies in [MinTimeNS,
// MaxTimeNS], checked at every entrance so that what is stored exports and
// imports back. Why these bounds: docs/design/otlp.md, "The range of times".
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
