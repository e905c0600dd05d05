package page

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// ParamError is a query parameter or body field the viewer cannot use; the
// handlers answer it with 400 and its message, which names the field.
type ParamError struct {
	Param  string
	Reason string
}

func (e *ParamError) Error() string { return fmt.Sprintf("%s: %s", e.Param, e.Reason) }

func BadParam(param, format string, args ...any) error {
	return &ParamError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

// timeLayouts are the absolute times a time filter accepts: RFC 3339, what
// an <input type="datetime-local"> sends (read as UTC), and a plain date.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

// ParseTime reads a time filter: an absolute time in one of timeLayouts,
// or an age such as 30m, 24h or 7d, meaning that long before now. It
// returns Unix nanoseconds; an empty value is 0, no bound. A time outside
// those convtrace stores (schema.CheckTime) is refused: it would match
// nothing, or wrap.
func ParseTime(param, value string, now time.Time) (uint64, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, nil
	}
	at, ok := parseTime(v, now)
	if !ok {
		return 0, BadParam(param, "%q is not a time: use RFC 3339 (2026-05-01T09:00:00Z), 2026-05-01T09:00, 2026-05-01, or an age such as 24h, 7d or 90min", v)
	}
	minT, maxT := time.Unix(0, int64(schema.MinTimeNS)), time.Unix(0, int64(schema.MaxTimeNS))
	if at.Before(minT) || at.After(maxT) {
		return 0, BadParam(param, "%q is outside the times convtrace stores, %s to %s", v,
			schema.FormatNS(schema.MinTimeNS), schema.FormatNS(schema.MaxTimeNS))
	}
	return uint64(at.UnixNano()), nil
}

func parseTime(v string, now time.Time) (time.Time, bool) {
	if age, err := ParseAge(v); err == nil {
		return now.Add(-age), true
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// ageUnits are the units an age may be written in. "m" is not one: it
// reads as minutes to Go and as months to people, and a prune of "6m"
// must not delete all but six minutes.
var ageUnits = map[string]time.Duration{
	"s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "mo": 30 * 24 * time.Hour, "y": 365 * 24 * time.Hour,
}

// ageHelp says how to write an age.
const ageHelp = "use whole numbers with the units s, min, h, d, w, mo (30 days) or y (365 days), such as 90min, 36h, 180d, 6mo or 1y2mo"

// ParseAge reads an age: one or more whole numbers each with a unit of
// ageUnits, added up (1h30min).
func ParseAge(v string) (time.Duration, error) {
	rest := strings.TrimSpace(v)
	if rest == "" {
		return 0, errors.New("an age is empty: " + ageHelp)
	}
	var total time.Duration
	for rest != "" {
		digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
		unitLen := len(rest[digits:]) - len(strings.TrimLeft(rest[digits:], "abcdefghijklmnopqrstuvwxyz"))
		num, unit := rest[:digits], rest[digits:digits+unitLen]
		if num == "" || unit == "" {
			return 0, fmt.Errorf("%q is not an age: %s", v, ageHelp)
		}
		if unit == "m" {
			return 0, fmt.Errorf("%q is ambiguous: write %smin for minutes or %smo for months", v, num, num)
		}
		size, ok := ageUnits[unit]
		if !ok {
			return 0, fmt.Errorf("%q has the unit %q: %s", v, unit, ageHelp)
		}
		n, err := strconv.ParseUint(num, 10, 32)
		if err != nil || time.Duration(n) > (math.MaxInt64-total)/size {
			return 0, fmt.Errorf("%q is too long an age", v)
		}
		total += time.Duration(n) * size
		rest = rest[digits+unitLen:]
	}
	return total, nil
}

// TimeRange reads the from and to parameters; to must not be before from.
func TimeRange(from, to string, now time.Time) (fromNS, toNS uint64, err error) {
	if fromNS, err = ParseTime("from", from, now); err != nil {
		return 0, 0, err
	}
	if toNS, err = ParseTime("to", to, now); err != nil {
		return 0, 0, err
	}
	if toNS != 0 && toNS < fromNS {
		return 0, 0, BadParam("to", "%q is before from %q", to, from)
	}
	return fromNS, toNS, nil
}
