package viewer

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store/page"
)

// parseSwitch reads a checkbox parameter: 1 (true, on) or 0 (false, or
// absent).
func parseSwitch(param, value string) (bool, error) {
	switch value {
	case "", "0", "false":
		return false, nil
	case "1", "true", "on":
		return true, nil
	}
	return false, page.BadParam(param, "%q is not 1 or 0", value)
}

// parseLimit reads a positive count of at most max; empty is def.
func parseLimit(param, value string, def, max int) (int, error) {
	if value == "" {
		return def, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > max {
		return 0, page.BadParam(param, "%q is not a number from 1 to %d", value, max)
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
		return page.BadParam("path", "longer than %d bytes", maxParamBytes)
	}
	if len(u.RawQuery) > maxRawQueryBytes {
		return page.BadParam("query", "longer than %d bytes", maxRawQueryBytes)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return page.BadParam("query", "%v", err)
	}
	for name, values := range q {
		if len(values) > maxParamValues {
			return page.BadParam(name, "given %d times, at most %d", len(values), maxParamValues)
		}
		for _, v := range values {
			if len(v) > maxParamBytes {
				return page.BadParam(name, "longer than %d bytes", maxParamBytes)
			}
		}
	}
	return nil
}
