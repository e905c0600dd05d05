package viewer

import (
	"cmp"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// Bounds of the threads list's parameters. An attribute filter (task, or
// attr.<name>) answers every thread it matches in one page, up to
// attrListCap: a task's threads are read together, not fifty at a time.
const (
	maxTitleQueryRunes = 200
	maxAttrNameBytes   = 128  // as the summary keeps a name
	maxAttrValueRunes  = 1024 // as the summary keeps a value
	maxAttrFilters     = 8
	attrListCap        = 1000
	// attrParam prefixes the parameter of a thread attribute filter;
	// taskParam is attr.task.
	attrParam = "attr."
	taskParam = "task"
)

// threadFilter reads the list's query parameters: project, provider, q,
// archived (1 or 0), status, min_cost and max_cost (USD), min_duration
// and max_duration (Go durations, or days as 2d), task and attr.<name>,
// limit, and one of the cursors before and after.
func (s *Server) threadFilter(c *gin.Context) (store.ThreadFilter, error) {
	f := store.ThreadFilter{
		Project:  c.Query("project"),
		Provider: c.Query("provider"),
		Query:    strings.TrimSpace(c.Query("q")),
		Status:   c.Query("status"),
	}
	if n := utf8.RuneCountInString(f.Query); n > maxTitleQueryRunes {
		return f, page.BadParam("q", "%d characters, at most %d", n, maxTitleQueryRunes)
	}
	switch a := c.Query("archived"); a {
	case "", "0":
	case "1":
		f.Archived = true
	default:
		return f, page.BadParam("archived", "%q is not 1 or 0", a)
	}
	if f.Status != "" && !slices.Contains(store.ThreadStatuses, f.Status) {
		return f, page.BadParam("status", "%q is not one of %s", f.Status, strings.Join(store.ThreadStatuses, ", "))
	}
	var err error
	if f.MinCostUSD, f.MaxCostUSD, err = parseBounds(c, "cost", parseCost); err != nil {
		return f, err
	}
	if f.MinDuration, f.MaxDuration, err = parseBounds(c, "duration", parseDuration); err != nil {
		return f, err
	}
	if f.Attrs, err = attrFilters(c.Request.URL.Query()); err != nil {
		return f, err
	}
	def, max := s.pageSize()
	if len(f.Attrs) > 0 {
		def, max = attrListCap, attrListCap
	}
	if f.Limit, err = parseLimit("limit", c.Query("limit"), def, max); err != nil {
		return f, err
	}
	if f.Before, err = store.ParseCursor("before", c.Query("before")); err != nil {
		return f, err
	}
	if f.After, err = store.ParseCursor("after", c.Query("after")); err != nil {
		return f, err
	}
	if f.Before != nil && f.After != nil {
		return f, page.BadParam("after", "give before or after, not both")
	}
	return f, nil
}

// parseCost reads a cost bound: dollars, a leading $ allowed, not negative.
func parseCost(param, v string) (*float64, error) {
	usd, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
	if err != nil || usd < 0 || math.IsInf(usd, 0) || math.IsNaN(usd) {
		return nil, page.BadParam(param, "%q is not a cost in USD, such as 0.25", v)
	}
	return &usd, nil
}

// parseDuration reads a call's duration bound: a Go duration (500ms, 90s,
// 5m, 1h30m) or an age's units (2d).
func parseDuration(param, v string) (*time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		d, err = page.ParseAge(v)
	}
	if err != nil || d < 0 {
		return nil, page.BadParam(param, "%q is not a duration, such as 500ms, 90s, 5m or 1h30m", v)
	}
	return &d, nil
}

// parseBounds reads the parameters min_NAME and max_NAME with parse, each
// optional (empty is no bound), the minimum not above the maximum.
func parseBounds[T cmp.Ordered](c *gin.Context, name string, parse func(param, v string) (*T, error)) (lo, hi *T, err error) {
	read := func(param string) (*T, error) {
		if v := strings.TrimSpace(c.Query(param)); v != "" {
			return parse(param, v)
		}
		return nil, nil
	}
	if lo, err = read("min_" + name); err != nil {
		return nil, nil, err
	}
	if hi, err = read("max_" + name); err != nil {
		return nil, nil, err
	}
	if lo != nil && hi != nil && *lo > *hi {
		return nil, nil, page.BadParam("max_"+name, "%q is below min_%s %q", c.Query("max_"+name), name, c.Query("min_"+name))
	}
	return lo, hi, nil
}

// attrFilters reads the thread attribute filters: attr.<name>=value, and
// task=value for attr.task; nil when there are none. Each name once, with
// a value.
func attrFilters(params url.Values) (map[string]string, error) {
	var attrs map[string]string
	for _, param := range slices.Sorted(maps.Keys(params)) { // the same error for the same URL
		values := params[param]
		name, ok := strings.CutPrefix(param, attrParam)
		if param == taskParam {
			name, ok = taskParam, true
		}
		if !ok {
			continue
		}
		switch {
		case name == "" || len(name) > maxAttrNameBytes:
			return nil, page.BadParam(param, "an attribute name of 1 to %d bytes after %q", maxAttrNameBytes, attrParam)
		case len(values) != 1 || attrs[name] != "":
			return nil, page.BadParam(param, "give one value of the attribute %q", name)
		case values[0] == "":
			return nil, page.BadParam(param, "empty: give the value of the attribute %q", name)
		case utf8.RuneCountInString(values[0]) > maxAttrValueRunes:
			return nil, page.BadParam(param, "longer than %d characters", maxAttrValueRunes)
		case len(attrs) == maxAttrFilters:
			return nil, page.BadParam(param, "at most %d attribute filters", maxAttrFilters)
		}
		if attrs == nil {
			attrs = map[string]string{}
		}
		attrs[name] = values[0]
	}
	return attrs, nil
}

// listURL is the URL of the threads list under path with f's parameters,
// omitting the limit when it is defaultLimit.
func listURL(path string, f store.ThreadFilter, defaultLimit int) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("project", f.Project)
	set("provider", f.Provider)
	set("q", f.Query)
	set("status", f.Status)
	if f.Archived {
		v.Set("archived", "1")
	}
	b := boundsOf(f)
	set("min_cost", b.MinCost)
	set("max_cost", b.MaxCost)
	set("min_duration", b.MinDuration)
	set("max_duration", b.MaxDuration)
	for name, value := range f.Attrs {
		if name == taskParam {
			v.Set(taskParam, value)
		} else {
			v.Set(attrParam+name, value)
		}
	}
	if len(f.Attrs) > 0 {
		defaultLimit = attrListCap
	}
	if f.Limit != defaultLimit {
		v.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Before != nil {
		v.Set("before", f.Before.String())
	}
	if f.After != nil {
		v.Set("after", f.After.String())
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// listBounds are the cost and duration bounds of a filter as its
// parameters write them; "" for none.
type listBounds struct{ MinCost, MaxCost, MinDuration, MaxDuration string }

func boundsOf(f store.ThreadFilter) listBounds {
	cost := func(usd *float64) string {
		if usd == nil {
			return ""
		}
		return strconv.FormatFloat(*usd, 'f', -1, 64)
	}
	duration := func(d *time.Duration) string {
		if d == nil {
			return ""
		}
		return d.String()
	}
	return listBounds{cost(f.MinCostUSD), cost(f.MaxCostUSD), duration(f.MinDuration), duration(f.MaxDuration)}
}
