package viewer

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/store"
)

// threadsRoutes serves the threads list, its JSON twin, and the changes a
// user makes to a thread (rename, archive, restore, delete).
func (s *Server) threadsRoutes(app, api *gin.RouterGroup) {
	app.GET("/", s.threadsPage)
	api.GET("/threads", s.apiThreads)
	api.PATCH("/threads/:id", s.patchThread)
	api.DELETE("/threads/:id", s.deleteThread)
}

// defaultPageSize is the threads list's page size; the server's thread
// limit lowers it.
const defaultPageSize = 50

// threadsList is the data of the threads list, shared by the page and its
// JSON twin. Live says a thread shown has a call running or was updated
// within liveWindow: the page then polls its JSON twin for changes.
type threadsList struct {
	Filter              store.ThreadFilter
	Page                store.ThreadPage
	Projects, Providers []string
	Live                bool
}

// liveWindow is how long after its last update a thread keeps the list
// live: a pipeline's next call often starts within it.
const liveWindow = time.Minute

// threadsView is what threads.html renders.
type threadsView struct {
	threadsList
	Rows []threadRow
	// URLs of the pages beside this one ("" for none), and of the same
	// filters with archived threads, or without them.
	Newer, Older, Toggle string
	// Filtered says a filter or a cursor is in use; Statuses and Bounds
	// fill the filter form.
	Filtered bool
	Statuses []string
	Bounds   listBounds
}

// threadRow is a thread with its last update said relative to now, how
// long it ran (listDuration), and what threads.js compares with its JSON
// (rowSignature).
type threadRow struct {
	store.Thread
	Ago, Duration, Signature string
}

// listDuration says how long a thread ran to the list's precision: to the
// millisecond below a minute, then to the second, the minute below a day,
// and the hour beyond.
func listDuration(ns uint64) string {
	d := time.Duration(ns)
	const day = 24 * time.Hour
	switch {
	case d < time.Minute:
		return formatDuration(ns)
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < day:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("%dd%dh", d/day, d%day/time.Hour)
}

// rowSignature is what changes in a row of the list when its thread does:
// threads.js computes the same from the JSON twin's thread and replaces a
// row whose signature differs.
func rowSignature(t store.Thread) string {
	tokens := ""
	if t.Tokens != nil {
		tokens = strconv.FormatUint(*t.Tokens, 10)
	}
	return fmt.Sprintf("%d/%d/%d/%t/%s", t.Turns, t.OpenCalls, t.FailedCalls, t.Running, tokens)
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
		v.Rows[i] = threadRow{Thread: t, Ago: relativeTime(now, t.LastUpdate), Duration: listDuration(t.DurationNS), Signature: rowSignature(t)}
	}
	def, _ := s.pageSize()
	v.Newer, v.Older = l.pageURLs("/", def)
	toggle := l.Filter
	toggle.Archived = !toggle.Archived
	toggle.Before, toggle.After = nil, nil
	v.Toggle = listURL("/", toggle, def)
	v.Filtered = listURL("/", l.Filter, l.Filter.Limit) != "/"
	v.Statuses, v.Bounds = store.ThreadStatuses, boundsOf(l.Filter)
	s.html(c, http.StatusOK, "threads.html", v)
}

// apiThreads answers GET /api/threads with the parameters of /:
// {"threads": [...], "next": URL of the older page or "", "prev": URL of
// the newer page or "", "projects": [...], "providers": [...], "live":
// whether a thread shown runs or was just updated}.
func (s *Server) apiThreads(c *gin.Context) {
	l, err := s.threadsList(c)
	if err != nil {
		s.apiError(c, err)
		return
	}
	def, _ := s.pageSize()
	newer, older := l.pageURLs("/api/threads", def)
	s.writeJSON(c, http.StatusOK, struct {
		Threads   []store.Thread `json:"threads"`
		Next      string         `json:"next"`
		Prev      string         `json:"prev"`
		Projects  []string       `json:"projects"`
		Providers []string       `json:"providers"`
		Live      bool           `json:"live"`
	}{l.Page.Threads, older, newer, l.Projects, l.Providers, l.Live})
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
	l := threadsList{Filter: f, Page: page, Projects: projects, Providers: providers}
	for _, t := range page.Threads {
		l.Live = l.Live || t.Running || time.Since(t.LastUpdate) < liveWindow
	}
	return l, nil
}

// pageSize is the default page size, and the most a page may hold: the
// server's thread limit.
func (s *Server) pageSize() (def, max int) {
	return min(defaultPageSize, s.store.ThreadLimit), s.store.ThreadLimit
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
