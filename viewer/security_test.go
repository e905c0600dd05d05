package viewer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// escapeProbes are what a model (or anyone who can send OTLP) might put in
// a turn, or a user in a URL, to attack the viewer's users.
var escapeProbes = []string{
	`<script>alert(1)</script>`,
	`<img src=x onerror=alert(1)>`,
	`javascript:alert(1)`,
}

// probeMarkup are the markers that would mean a probe reached a page
// unescaped: a script or img tag (no page has an img of its own), or a
// link, source or form target whose value is a javascript: URL.
var probeMarkup = []string{"<script>alert", "<img", `href="javascript:`, `src="javascript:`, `action="javascript:`}

// assertProbesEscaped fails when the answer to what is a server error or
// holds one of escapeProbes as markup, and when a page that answered 200
// does not show the script probe as escaped text: the probes must be on
// the page to prove anything.
func assertProbesEscaped(t *testing.T, what string, res response) {
	t.Helper()
	if res.status >= 500 {
		t.Errorf("%s: status %d", what, res.status)
		return
	}
	for _, m := range probeMarkup {
		if i := strings.Index(res.body, m); i >= 0 {
			t.Errorf("%s holds %q unescaped: …%s…", what, m, res.body[max(0, i-80):min(len(res.body), i+80)])
		}
	}
	if res.status == http.StatusOK && !strings.Contains(res.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("%s does not show the script probe escaped", what)
	}
}

// Every page shows the hostile strings as text: in content, speaker, agent,
// model, provider, project, phase, tool name, error, title, thread id and
// span name.
func TestEveryPageEscapesModelOutput(t *testing.T) {
	h, conn := newServer(t)
	evil := strings.Join(escapeProbes, " ")
	thread := "th-" + escapeProbes[2]
	p, r := call(thread, "x1", evil, 0, evil, evil, evil, 10, evil, evil)
	for _, row := range []*schema.Turn{&p, &r} {
		row.Project, row.Agent, row.ToolName, row.TraceID = evil, evil, evil, "trace-x"
	}
	r.Role, r.Status, r.Error = schema.RoleError, schema.StatusError, evil
	// A cost, so the cost page lists the call's model, speaker and thread.
	r.TokensIn, r.TokensOut, r.CostUSD = u32(100), u32(20), f64(0.5)
	r.Attributes = []schema.Attr{{Key: evil, Value: evil}}
	testkit.InsertTurns(t, conn, p, r)
	insertMeta(t, conn, threadMeta{thread: thread, title: evil, updatedNS: 1})
	// The call's span, so the trace page draws it from the spans table.
	sp := traceSpan("x1", "", evil, 10, 1)
	sp.TraceID, sp.Project, sp.ThreadID, sp.Phase, sp.Speaker, sp.Agent = "trace-x", evil, thread, evil, evil, evil
	sp.Provider, sp.Model, sp.Status, sp.StatusMsg = evil, evil, schema.StatusError, evil
	testkit.InsertSpans(t, conn, sp)

	pages := []struct {
		path   string
		status int
	}{
		{"/", http.StatusOK},
		{"/?q=" + url.QueryEscape("<script>"), http.StatusOK},
		{"/threads/" + url.PathEscape(thread), http.StatusOK},
		{"/threads/" + url.PathEscape(thread) + "?q=" + url.QueryEscape("<script>"), http.StatusOK},
		{"/threads/" + url.PathEscape(escapeProbes[0]), http.StatusNotFound}, // echoes the id
		{"/nowhere/" + url.PathEscape(escapeProbes[1]), http.StatusNotFound},
		{"/search?q=alert", http.StatusOK},
		{"/traces/trace-x", http.StatusOK},
		{"/cost?from=2020-01-01", http.StatusOK},
	}
	for _, pg := range pages {
		res := get(t, h, pg.path)
		if res.status != pg.status {
			t.Errorf("GET %s: status %d, want %d", pg.path, res.status, pg.status)
		}
		assertProbesEscaped(t, "GET "+pg.path, res)
	}
}
