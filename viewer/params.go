package viewer

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// ParamError is a query parameter or body field the viewer cannot use; the
// handlers answer it with 400 and its message, which names the field.
type ParamError struct {
	Param  string
	Reason string
}

func (e *ParamError) Error() string { return fmt.Sprintf("%s: %s", e.Param, e.Reason) }

func badParam(param, format string, args ...any) error {
	return &ParamError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

// timeLayouts are the absolute times a time filter accepts: RFC 3339, what
// an <input type="datetime-local"> sends (read as UTC), and a plain date.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

// parseTime reads a time filter: an absolute time in one of timeLayouts,
// or an age such as 30m, 24h or 7d, meaning that long before now. It
// returns Unix nanoseconds; an empty value is 0, no bound.
func parseTime(param, value string, now time.Time) (uint64, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, nil
	}
	if age, err := parseAge(v); err == nil {
		return uint64(now.Add(-age).UnixNano()), nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			if t.Before(time.Unix(0, 0)) {
				return 0, badParam(param, "%q is before 1970", v)
			}
			return uint64(t.UnixNano()), nil
		}
	}
	return 0, badParam(param, "%q is not a time: use RFC 3339 (2026-05-01T09:00:00Z), 2026-05-01T09:00, 2026-05-01, or an age such as 24h or 7d", v)
}

// parseAge reads a Go duration, or a number of days with the suffix d.
func parseAge(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 16)
		if err != nil {
			return 0, err
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err == nil && d < 0 {
		return 0, errors.New("negative age")
	}
	return d, err
}

// timeRange reads the from and to parameters; to must not be before from.
func timeRange(from, to string, now time.Time) (fromNS, toNS uint64, err error) {
	if fromNS, err = parseTime("from", from, now); err != nil {
		return 0, 0, err
	}
	if toNS, err = parseTime("to", to, now); err != nil {
		return 0, 0, err
	}
	if toNS != 0 && toNS < fromNS {
		return 0, 0, badParam("to", "%q is before from %q", to, from)
	}
	return fromNS, toNS, nil
}

// parseSwitch reads a checkbox parameter: 1 (true, on) or 0 (false, or
// absent).
func parseSwitch(param, value string) (bool, error) {
	switch value {
	case "", "0", "false":
		return false, nil
	case "1", "true", "on":
		return true, nil
	}
	return false, badParam(param, "%q is not 1 or 0", value)
}

// parseLimit reads a positive count of at most max; empty is def.
func parseLimit(param, value string, def, max int) (int, error) {
	if value == "" {
		return def, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > max {
		return 0, badParam(param, "%q is not a number from 1 to %d", value, max)
	}
	return n, nil
}

// Limits on what a request's URL may carry: far above any real filter, a
// thread id or a search, and far below what would make a query fail.
const (
	maxParamBytes    = 4 << 10  // one query parameter value, or the path
	maxRawQueryBytes = 16 << 10 // the whole query string
	maxParamValues   = 64       // values of one repeated parameter (phase=…&phase=…)
)

// limitParams answers 400 to a request whose path or query parameters pass
// the limits, before any handler reads them.
func (s *Server) limitParams(c *gin.Context) {
	err := checkParams(c.Request.URL)
	if err == nil {
		return
	}
	if strings.HasPrefix(c.Request.URL.Path, "/api/") {
		s.apiError(c, err)
	} else {
		s.pageError(c, err)
	}
	c.Abort()
}

func checkParams(u *url.URL) error {
	if len(u.Path) > maxParamBytes {
		return badParam("path", "longer than %d bytes", maxParamBytes)
	}
	if len(u.RawQuery) > maxRawQueryBytes {
		return badParam("query", "longer than %d bytes", maxRawQueryBytes)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return badParam("query", "%v", err)
	}
	for name, values := range q {
		if len(values) > maxParamValues {
			return badParam(name, "given %d times, at most %d", len(values), maxParamValues)
		}
		for _, v := range values {
			if len(v) > maxParamBytes {
				return badParam(name, "longer than %d bytes", maxParamBytes)
			}
		}
	}
	return nil
}
