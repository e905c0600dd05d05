package viewer

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// searchForm is a search's text and filters as the request gave them: the
// form shows them, the JSON twin echoes them and the page links keep them.
// Without text, the filters alone choose the turns.
type searchForm struct {
	Q       string   `json:"q"`
	Project string   `json:"project"`
	Role    string   `json:"role"`
	Tool    string   `json:"tool"`
	Agent   string   `json:"agent"` // "", main or a sub-agent
	Session string   `json:"session"`
	Speaker string   `json:"speaker"`
	Phases  []string `json:"phases"` // phase keys
	Model   string   `json:"model"`
	Status  string   `json:"status"`
	Starred bool     `json:"starred"`
	From    string   `json:"from"`
	To      string   `json:"to"`
}

// parseSearch reads a search's parameters: the text, the thread page's
// filters (parseThreadQuery: role, tool, agent, session, speaker, phase,
// starred, from, to) across threads, and project, model and status. An
// unusable value is a *ParamError naming its parameter.
func parseSearch(v url.Values, now time.Time) (store.SearchFilter, searchForm, error) {
	form := searchForm{
		Q: strings.TrimSpace(v.Get("q")), Project: strings.TrimSpace(v.Get("project")),
		Model: strings.TrimSpace(v.Get("model")), Status: strings.TrimSpace(v.Get("status")),
	}
	if len(form.Q) > maxQueryBytes {
		return store.SearchFilter{}, searchForm{}, page.BadParam("q", "is longer than %d bytes", maxQueryBytes)
	}
	if form.Status != "" && !slices.Contains(store.SearchStatuses, form.Status) {
		return store.SearchFilter{}, searchForm{}, page.BadParam("status", "%q is not one of %s", form.Status, strings.Join(store.SearchStatuses, ", "))
	}
	turns, tf, err := parseThreadQuery(v, searchPageSize, now)
	if err != nil {
		return store.SearchFilter{}, searchForm{}, err
	}
	form.Role, form.Tool, form.Agent, form.Session, form.Speaker = tf.Role, tf.Tool, tf.Agent, tf.Session, tf.Speaker
	form.Phases, form.Starred, form.From, form.To = append([]string{}, tf.Phases...), tf.Starred, tf.From, tf.To
	f := store.SearchFilter{Q: form.Q, Project: form.Project, TurnFilter: turns, Model: form.Model, Status: form.Status}
	if f.After, err = store.ParseSearchCursor("after", v.Get("after")); err != nil {
		return store.SearchFilter{}, searchForm{}, err
	}
	if f.Before, err = store.ParseSearchCursor("before", v.Get("before")); err != nil {
		return store.SearchFilter{}, searchForm{}, err
	}
	if f.After != nil && f.Before != nil {
		return store.SearchFilter{}, searchForm{}, page.BadParam("before", "cannot be given with after")
	}
	return f, form, nil
}

// values are the form's parameters that are set, as a search's URL
// carries them; none when the request asked for no search.
func (f searchForm) values() url.Values {
	q := url.Values{}
	for k, val := range map[string]string{"q": f.Q, "project": f.Project, "role": f.Role, "tool": f.Tool, "agent": f.Agent,
		"session": f.Session, "speaker": f.Speaker, "model": f.Model, "status": f.Status, "from": f.From, "to": f.To} {
		if val != "" {
			q.Set(k, val)
		}
	}
	for _, p := range f.Phases {
		q.Add("phase", p)
	}
	if f.Starred {
		q.Set("starred", "1")
	}
	return q
}

// Searched reports whether the request asked for a search: text or a
// filter. A page without either shows the form alone.
func (f searchForm) Searched() bool { return len(f.values()) > 0 }

// Filtered reports whether any filter narrows the search.
func (f searchForm) Filtered() bool {
	q := f.values()
	q.Del("q")
	return len(q) > 0
}

// HasPhase reports whether the search keeps the turns of phase key p.
func (f searchForm) HasPhase(p string) bool { return slices.Contains(f.Phases, p) }

// searchChoices are the values the form's menus offer: the facets of the
// project searched, with the fixed roles and statuses, each list holding
// the value the request gave even when the facets do not.
type searchChoices struct {
	Projects []string           `json:"projects"`
	Facets   store.SearchFacets `json:"facets"`
	Roles    []string           `json:"-"`
	Statuses []string           `json:"-"`
}

// withGiven adds to the menus the values of form they do not list.
func (c *searchChoices) withGiven(form searchForm) {
	add := func(list []string, v string) []string {
		if v == "" || slices.Contains(list, v) {
			return list
		}
		return append(slices.Clone(list), v)
	}
	c.Projects = add(c.Projects, form.Project)
	c.Roles = add(c.Roles, form.Role)
	c.Facets.Tools = add(c.Facets.Tools, form.Tool)
	if form.Agent != store.AgentMain {
		c.Facets.Agents = add(c.Facets.Agents, form.Agent)
	}
	c.Facets.Sessions = add(c.Facets.Sessions, form.Session)
	c.Facets.Speakers = add(c.Facets.Speakers, form.Speaker)
	c.Facets.Models = add(c.Facets.Models, form.Model)
	for _, p := range form.Phases {
		c.Facets.Phases = add(c.Facets.Phases, p)
	}
}
