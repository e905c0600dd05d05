package viewer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
)

// payloads are what a model (or anyone who can send OTLP) might put in a
// turn to attack the viewer's users.
var payloads = []string{
	`<script>alert(1)</script>`,
	`<img src=x onerror=alert(1)>`,
	`javascript:alert(1)`,
}

// raw are the markers that would mean a payload reached a page unescaped:
// a script or img tag, or a link or source whose value is a javascript: URL.
var raw = []string{"<script>alert", "<img src=x", `href="javascript:`, `src="javascript:`, `action="javascript:`}

// Every page shows the hostile strings as text: in content, speaker, agent,
// model, provider, project, phase, tool name, error, title and thread id.
func TestEveryPageEscapesModelOutput(t *testing.T) {
	h, conn := newServer(t)
	evil := strings.Join(payloads, " ")
	thread := "th-" + payloads[2]
	p, r := call(thread, "x1", evil, 0, evil, evil, evil, 10, evil, evil)
	for _, row := range []*schema.Turn{&p, &r} {
		row.Project, row.Agent, row.ToolName, row.TraceID = evil, evil, evil, "trace-x"
	}
	r.Role, r.Status, r.Error = schema.RoleError, schema.StatusError, evil
	r.Attributes = []schema.Attr{{Key: evil, Value: evil}}
	insertTurns(t, conn, p, r)
	insertMeta(t, conn, threadMeta{thread: thread, title: evil, updatedNS: 1})

	pages := []string{
		"/",
		"/?q=" + url.QueryEscape("<script>"),
		"/threads/" + url.PathEscape(thread),
		"/threads/" + url.PathEscape(thread) + "?q=" + url.QueryEscape("<script>"),
		"/threads/" + url.PathEscape(payloads[0]), // not found, echoes the id
		"/nowhere/" + url.PathEscape(payloads[1]),
	}
	for _, path := range pages {
		res := get(t, h, path)
		if res.status >= 500 {
			t.Errorf("GET %s: status %d", path, res.status)
			continue
		}
		for _, m := range raw {
			if i := strings.Index(res.body, m); i >= 0 {
				t.Errorf("GET %s: page holds %q unescaped: …%s…", path, m, res.body[max(0, i-80):min(len(res.body), i+80)])
			}
		}
		if res.status == http.StatusOK && !strings.Contains(res.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("GET %s: the script payload is not shown escaped", path)
		}
	}
}
