package viewer

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/viewer/query"
)

// threadsRoutes serves the threads list, its JSON twin, and the changes a
// user makes to a thread (rename, archive, restore, delete).
func (s *Server) threadsRoutes(app, api *gin.RouterGroup) {
	app.GET("/", s.threadsPage)
	api.GET("/threads", s.apiThreads)
	api.PATCH("/threads/:id", s.patchThread)
	api.DELETE("/threads/:id", s.deleteThread)
}

// Page sizes of the threads list; the server's thread limit lowers both.
const (
	defaultPageSize    = 50
	maxTitleQueryRunes = 200
)

// threadsList is the data of the threads list, shared by the page and its
// JSON twin.
type threadsList struct {
	Filter              query.ThreadFilter
	Page                query.ThreadPage
	Projects, Providers []string
}

// threadsView is what threads.html renders.
type threadsView struct {
	threadsList
	Rows []threadRow
	// URLs of the pages beside this one ("" for none), and of the same
	// filters with archived threads, or without them.
	Newer, Older, Toggle string
}

// threadRow is a thread with its last update said relative to now.
type threadRow struct {
	query.Thread
	Ago string
}

// threadsPage renders the threads list, newest first.
func (s *Server) threadsPage(c *gin.Context) {
	l, err := s.threadsList(c)
	if err != nil {
		s.pageError(c, err)
		return
	}
	now := time.Now()
	v := threadsView{threadsList: l, Rows: make([]threadRow, len(l.Page.Threads))}
	for i, t := range l.Page.Threads {
		v.Rows[i] = threadRow{Thread: t, Ago: relativeTime(now, t.LastUpdate)}
	}
	def, _ := s.pageSize()
	v.Newer, v.Older = l.pageURLs("/", def)
	toggle := l.Filter
	toggle.Archived = !toggle.Archived
	toggle.Before, toggle.After = nil, nil
	v.Toggle = listURL("/", toggle, def)
	s.html(c, http.StatusOK, "threads.html", v)
}

// apiThreads answers GET /api/threads with the parameters of /:
// {"threads": [...], "next": URL of the older page or "", "prev": URL of
// the newer page or "", "projects": [...], "providers": [...]}.
func (s *Server) apiThreads(c *gin.Context) {
	l, err := s.threadsList(c)
	if err != nil {
		s.apiError(c, err)
		return
	}
	def, _ := s.pageSize()
	newer, older := l.pageURLs("/api/threads", def)
	s.writeJSON(c, http.StatusOK, struct {
		Threads   []query.Thread `json:"threads"`
		Next      string         `json:"next"`
		Prev      string         `json:"prev"`
		Projects  []string       `json:"projects"`
		Providers []string       `json:"providers"`
	}{l.Page.Threads, older, newer, l.Projects, l.Providers})
}

func (s *Server) threadsList(c *gin.Context) (threadsList, error) {
	f, err := s.threadFilter(c)
	if err != nil {
		return threadsList{}, err
	}
	ctx := c.Request.Context()
	page, err := s.store.Threads(ctx, f)
	if err != nil {
		return threadsList{}, err
	}
	projects, providers, err := s.store.ListChoices(ctx)
	if err != nil {
		return threadsList{}, err
	}
	return threadsList{Filter: f, Page: page, Projects: projects, Providers: providers}, nil
}

// pageSize is the default page size, and the most a page may hold: the
// server's thread limit.
func (s *Server) pageSize() (def, max int) {
	return min(defaultPageSize, s.store.ThreadLimit), s.store.ThreadLimit
}

// threadFilter reads the list's query parameters: project, provider, q,
// archived (1 or 0), limit, and one of the cursors before and after.
func (s *Server) threadFilter(c *gin.Context) (query.ThreadFilter, error) {
	f := query.ThreadFilter{
		Project:  c.Query("project"),
		Provider: c.Query("provider"),
		Query:    strings.TrimSpace(c.Query("q")),
	}
	if n := utf8.RuneCountInString(f.Query); n > maxTitleQueryRunes {
		return f, query.BadParam("q", "%d characters, at most %d", n, maxTitleQueryRunes)
	}
	switch a := c.Query("archived"); a {
	case "", "0":
	case "1":
		f.Archived = true
	default:
		return f, query.BadParam("archived", "%q is not 1 or 0", a)
	}
	def, max := s.pageSize()
	var err error
	if f.Limit, err = parseLimit("limit", c.Query("limit"), def, max); err != nil {
		return f, err
	}
	if f.Before, err = query.ParseCursor("before", c.Query("before")); err != nil {
		return f, err
	}
	if f.After, err = query.ParseCursor("after", c.Query("after")); err != nil {
		return f, err
	}
	if f.Before != nil && f.After != nil {
		return f, query.BadParam("after", "give before or after, not both")
	}
	return f, nil
}

// pageURLs returns the URLs under path of the newer and the older page,
// "" where there is none; defaultLimit is the page size left out of them.
func (l threadsList) pageURLs(path string, defaultLimit int) (newer, older string) {
	f := l.Filter
	f.Before, f.After = nil, nil
	if l.Page.Newer != nil {
		n := f
		n.After = l.Page.Newer
		newer = listURL(path, n, defaultLimit)
	}
	if l.Page.Older != nil {
		o := f
		o.Before = l.Page.Older
		older = listURL(path, o, defaultLimit)
	}
	return newer, older
}

// listURL is the URL of the threads list under path with f's parameters,
// omitting the limit when it is defaultLimit.
func listURL(path string, f query.ThreadFilter, defaultLimit int) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("project", f.Project)
	set("provider", f.Provider)
	set("q", f.Query)
	if f.Archived {
		v.Set("archived", "1")
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

// relativeTime says how long before now t was, as "5 min ago"; a time in
// the future (a skewed clock) is "just now".
func relativeTime(now, t time.Time) string {
	d := now.Sub(t)
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit + " ago"
		}
		return strconv.Itoa(n) + " " + unit + "s ago"
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min ago"
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour")
	case d < 30*24*time.Hour:
		return plural(int(d/(24*time.Hour)), "day")
	case d < 365*24*time.Hour:
		return plural(int(d/(30*24*time.Hour)), "month")
	}
	return plural(int(d/(365*24*time.Hour)), "year")
}
