package viewer

import (
	"bytes"
	"embed"
	"html/template"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/convtrace/convtrace/store"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pages holds the HTML templates, parsed once when the server is built.
// Only html/template renders model output, and no helper returns
// template.HTML: every string from a turn is escaped.
type pages struct {
	tmpl *template.Template
}

// parsePages parses the templates; readOnly leaves out the controls that
// change the history.
func parsePages(readOnly bool) *pages {
	funcs := template.FuncMap{
		"readOnly":      func() bool { return readOnly },
		"tokens":        formatCount[uint32],
		"total":         formatCount[uint64],
		"cost":          formatCost,
		"duration":      formatDuration,
		"clock":         formatClock,
		"at":            func(ns uint64) time.Time { return time.Unix(0, int64(ns)).UTC() },
		"hms":           func(t time.Time) string { return t.UTC().Format("15:04:05.000") },
		"providerClass": providerClass,
		"threadURL":     threadURL,
		"projectExport": func(project string) string { return "/api/projects/" + url.PathEscape(project) + "/export" },
		"shortID":       shortID,
		"detailURL":     detailURL,
		"traceURL":      traceURL,
		"spanPage":      spanPageURL,
		"phaseClass":    phaseClass,
	}
	return &pages{tmpl: template.Must(template.New("").Funcs(funcs).ParseFS(templateFiles, "templates/*.html"))}
}

// render executes the named page into a buffer, so a template error becomes
// a clean 500 rather than half a page.
func (p *pages) render(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unknown is how a value no call reported shows.
const unknown = store.Unknown

// formatCount writes n with thousands separators, — when unknown.
func formatCount[T uint32 | uint64](n *T) string {
	if n == nil {
		return unknown
	}
	return store.FormatCount(uint64(*n))
}

// formatCost writes dollars as FormatUSD does, — when unknown.
func formatCost(c *float64) string {
	if c == nil {
		return unknown
	}
	return "$" + store.FormatUSD(*c)
}

// formatDuration rounds to microseconds below a millisecond, to
// milliseconds below a second, to ten milliseconds above; zero (not ended,
// or a prompt) is "".
func formatDuration(ns uint64) string {
	d := time.Duration(ns)
	switch {
	case d <= 0:
		return ""
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(10 * time.Millisecond).String()
	}
}

func formatClock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// threadURL is the path of a thread's page; the id is path-escaped so that
// one holding / or ? still reaches it.
func threadURL(id string) string { return "/threads/" + url.PathEscape(id) }

// shortID shows a long id (a provider session's) by its first eight
// characters, the whole one kept for hover and copy.
func shortID(id string) string {
	if utf8.RuneCountInString(id) <= 12 {
		return id
	}
	return string([]rune(id)[:8]) + "…"
}
