package viewer_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/viewer"
)

// A read-only viewer (serve --read-only) refuses every write of the JSON
// API with 403 and a reason, changes nothing, and its pages show no
// control that would write; reading and exporting still work.
func TestReadOnlyViewer(t *testing.T) {
	conn, _ := testkit.Open(t)
	p, r := call("th", "s1", "plan", 0, "planner", "openai", "gpt-5", 1, "plan it", "the plan")
	op, or := call("other", "s2", "plan", 0, "planner", "openai", "gpt-5", 3, "elsewhere", "ok")
	op.Project, or.Project = "other-project", "other-project"
	testkit.InsertTurns(t, conn, p, r, op, or)
	h := viewer.New(conn, viewer.WithReadOnly()).Handler()

	for _, w := range []struct{ method, path, body string }{
		{http.MethodPatch, "/api/threads/th", `{"title":"renamed"}`},
		{http.MethodDelete, "/api/threads/th", `{}`},
		{http.MethodPut, "/api/threads/th/turns/" + p.TurnID + "/note", `{"starred":true}`},
		{http.MethodPost, "/api/import", `{}`},
	} {
		res := send(t, h, w.method, w.path, "application/json", w.body)
		if res.status != http.StatusForbidden || !strings.Contains(res.body, "read-only") {
			t.Errorf("%s %s on a read-only viewer: %d %s; want 403 saying it is read-only", w.method, w.path, res.status, res.body)
		}
	}
	var th struct {
		Title string `json:"title"`
	}
	getJSON(t, h, "/api/threads/th", http.StatusOK, &th)
	if th.Title == "renamed" {
		t.Error("a read-only viewer renamed the thread")
	}
	if res := get(t, h, "/api/threads/th/export"); res.status != http.StatusOK {
		t.Errorf("export on a read-only viewer: %d", res.status)
	}
	// A project's export, linked from the list filtered by that project.
	res := get(t, h, "/api/projects/proj/export?format=jsonl")
	if res.status != http.StatusOK || !strings.Contains(res.body, `"th"`) || strings.Contains(res.body, `"other"`) {
		t.Errorf("export of project proj: %d, want thread th and not other:\n%s", res.status, res.body)
	}
	if list := get(t, h, "/?project=proj"); !strings.Contains(list.body, `href="/api/projects/proj/export"`) {
		t.Error("the threads list filtered by a project links no export of it")
	}
	list, page := get(t, h, "/"), get(t, h, "/threads/th")
	for _, c := range []struct{ page, control string }{
		{list.body, `class="thread-actions"`}, {list.body, `class="import-file"`},
		{page.body, `class="thread-actions"`}, {page.body, `class="star"`}, {page.body, `class="memo-open"`},
	} {
		if strings.Contains(c.page, c.control) {
			t.Errorf("a read-only viewer's page shows the control %s", c.control)
		}
	}
	if writable := get(t, viewer.New(conn).Handler(), "/threads/th"); !strings.Contains(writable.body, `class="star"`) {
		t.Error("the page of a viewer that writes shows no star control: the check above cannot fail")
	}
}
