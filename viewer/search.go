package viewer

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// searchRoutes serves the search pages and their JSON twins.
func (s *Server) searchRoutes(app, api *gin.RouterGroup) {
	app.GET("/search", s.searchPage)
	api.GET("/search", s.apiSearch)
}

// searchPageSize is how many results a page of search shows.
const searchPageSize = 100

// maxQueryBytes bounds the search text: longer is a paste gone wrong.
const maxQueryBytes = 1000

// searchRoles are the roles the search form offers; the role parameter
// takes any role.
var searchRoles = []string{schema.RolePrompt, schema.RoleResponse, schema.RoleSystem,
	schema.RoleToolCall, schema.RoleToolResult, schema.RoleToolResultError, schema.RoleError}

// SearchResult is a turn that matched a search: where it was said, and the
// text around its first match split into highlight segments (without a
// search text, the start of its text).
type SearchResult struct {
	TurnID      string    `json:"turn_id"`
	ThreadID    string    `json:"thread_id"`
	ThreadTitle string    `json:"thread_title"`
	Project     string    `json:"project"`
	Phase       string    `json:"phase"`
	Speaker     string    `json:"speaker"`
	Agent       string    `json:"agent"` // a sub-agent; "" for the main agent
	Role        string    `json:"role"`
	Model       string    `json:"model"`
	Tool        string    `json:"tool"`
	StartNS     uint64    `json:"start_ns"`
	Time        time.Time `json:"time"`
	Snippet     []Segment `json:"snippet"`
	Internal    bool      `json:"internal"`
	URL         string    `json:"url"` // the turn in its thread page
}

// searchView is a search's form values, the menus' choices and one page
// of its results. Next and Prev are the cursors of the pages beside it,
// "" when there is none.
type searchView struct {
	searchForm
	searchChoices
	Results []SearchResult `json:"results"`
	Next    string         `json:"next"`
	Prev    string         `json:"prev"`
}

// searchGroup is a thread's hits on a page of results, in their order.
type searchGroup struct {
	ThreadID, Title, Project, URL string
	Hits                          []SearchResult
}

// Groups are the page's results under their threads, each thread once, in
// the order of its newest hit on the page: the page shows a title once,
// then its hits.
func (v searchView) Groups() []searchGroup {
	var groups []searchGroup
	at := map[string]int{}
	for _, r := range v.Results {
		i, ok := at[r.ThreadID]
		if !ok {
			i = len(groups)
			at[r.ThreadID] = i
			groups = append(groups, searchGroup{ThreadID: r.ThreadID, Title: r.ThreadTitle, Project: r.Project, URL: threadURL(r.ThreadID)})
		}
		groups[i].Hits = append(groups[i].Hits, r)
	}
	return groups
}

// NextURL is the page of older results, "" when there is none.
func (v searchView) NextURL() string { return v.pageURL("after", v.Next) }

// PrevURL is the page of newer results, "" when there is none.
func (v searchView) PrevURL() string { return v.pageURL("before", v.Prev) }

func (v searchView) pageURL(param, cursor string) string {
	if cursor == "" {
		return ""
	}
	q := v.values()
	q.Set(param, cursor)
	return "/search?" + q.Encode()
}

// searchPage renders the search form and, when text or a filter is given,
// a page of results.
func (s *Server) searchPage(c *gin.Context) {
	v, err := s.Search(c)
	if err != nil {
		s.pageError(c, err)
		return
	}
	s.html(c, http.StatusOK, "search.html", v)
}

// apiSearch answers GET /api/search?q=&project=&role=&tool=&agent=&session=
// &speaker=&phase=&model=&status=&starred=&from=&to=&after=&before= with
// the search page's data: {"q", ..., "results": [...], "next", "prev",
// "projects", "facets"}. Pass next as after, or prev as before, for the
// pages beside.
func (s *Server) apiSearch(c *gin.Context) {
	v, err := s.Search(c)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, v)
}

// Search reads the Search parameters and, when text or a filter is
// given, runs the Search. The menus' facets are read beside it.
func (s *Server) Search(c *gin.Context) (searchView, error) {
	ctx := c.Request.Context()
	v := searchView{Results: []SearchResult{}}
	f, form, err := parseSearch(c.Request.URL.Query(), time.Now())
	if err != nil {
		return v, err
	}
	v.searchForm = form
	v.Roles, v.Statuses = searchRoles, store.SearchStatuses
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { v.Facets, err = s.store.SearchFacets(gctx, f.Project); return err })
	var hits []store.SearchHit
	g.Go(func() (err error) {
		// The projects first: reading them brings the summaries the
		// titles come from up to date.
		if v.Projects, err = s.store.SearchProjects(gctx); err != nil || !form.Searched() {
			return err
		}
		hits, err = s.store.Search(gctx, f, searchPageSize+1)
		return err
	})
	if err := g.Wait(); err != nil {
		return v, err
	}
	v.withGiven(form)
	more := len(hits) > searchPageSize
	if more {
		if f.Before != nil {
			hits = hits[1:] // oldest first before the reversal: drop the newest
		} else {
			hits = hits[:searchPageSize]
		}
	}
	if v.Results, err = s.searchResults(ctx, hits, v.Q); err != nil {
		return v, err
	}
	if len(hits) > 0 {
		first, last := hits[0], hits[len(hits)-1]
		// Newer results exist before this page when it was reached from a
		// newer one, or when paging back found more; older ones likewise.
		if f.After != nil || (f.Before != nil && more) {
			v.Prev = store.SearchCursor{StartNS: first.StartNS, TurnID: first.TurnID}.String()
		}
		if f.Before != nil || more {
			v.Next = store.SearchCursor{StartNS: last.StartNS, TurnID: last.TurnID}.String()
		}
	}
	return v, nil
}

// searchResults adds their threads' titles and a highlighted snippet to
// hits.
func (s *Server) searchResults(ctx context.Context, hits []store.SearchHit, q string) ([]SearchResult, error) {
	titles, err := s.store.ThreadTitles(ctx, hits)
	if err != nil {
		return nil, err
	}
	results := make([]SearchResult, 0, len(hits))
	for _, h := range hits {
		page := threadURL(h.ThreadID)
		if h.Internal {
			page += "?internal=1" // the page hides internal turns unless asked
		}
		results = append(results, SearchResult{
			TurnID: h.TurnID, ThreadID: h.ThreadID, ThreadTitle: cmp.Or(titles[h.ThreadID], h.ThreadID),
			Project: h.Project, Phase: h.Phase, Speaker: h.Speaker, Agent: h.Agent, Role: h.Role, Model: h.Model, Tool: h.Tool,
			StartNS: h.StartNS, Time: time.Unix(0, int64(h.StartNS)).UTC(),
			Snippet: snippet(h.Around, q), Internal: h.Internal, URL: page + "#" + h.TurnID,
		})
	}
	return results, nil
}
