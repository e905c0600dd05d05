package viewer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// threadsAnswer is the body of GET /api/threads.
type threadsAnswer struct {
	Threads   []store.Thread `json:"threads"`
	Next      string         `json:"next"`
	Prev      string         `json:"prev"`
	Projects  []string       `json:"projects"`
	Providers []string       `json:"providers"`
}

func (a threadsAnswer) ids() string {
	var ids []string
	for _, t := range a.Threads {
		ids = append(ids, t.ID)
	}
	return strings.Join(ids, ",")
}

// inProject returns the turns of call moved to project.
func inProject(project string, turns ...schema.Turn) []schema.Turn {
	for i := range turns {
		turns[i].Project = project
	}
	return turns
}

// listFixture holds threads in two projects with several providers and
// titles in Korean, Japanese and emoji, newest first: k1, j1, e1, t1, m1;
// a1 is archived.
func listFixture(t *testing.T) (http.Handler, driver.Conn) {
	h, conn := newServer(t)
	var turns []schema.Turn
	add := func(project string, ts ...schema.Turn) { turns = append(turns, inProject(project, ts...)...) }

	p, r := call("k1", "k1", "plan", 0, "planner", "openai", "gpt-5", 600, "데이터 파이프라인 점검", "점검 완료")
	add("alpha", p, r)
	p, r = call("j1", "j1", "plan", 0, "planner", "anthropic", "claude", 500, "日本語のタイトル 🚀 launch", "了解")
	add("alpha", p, r)
	p, r = call("e1", "e1a", "plan", 0, "planner", "openai", "gpt-5", 400, "Fix the LOGIN bug", "patched")
	p2, r2 := call("e1", "e1b", "verify", 0, "verifier", "ollama", "llama", 401, "check it", "looks right")
	add("beta", p, r, p2, r2)
	p, r = call("t1", "t1", "plan", 0, "planner", "anthropic", "claude", 300, "untitled prompt", "ok")
	add("beta", p, r)
	p, r = call("m1", "m1", "plan", 0, "planner", "openai", "gpt-5", 200,
		`[{"role":"system","content":"You are terse."},{"role":"user","content":"\nSummarise the release notes\nKeep it short."}]`,
		`[{"role":"assistant","content":"Three fixes,\n one feature."}]`)
	add("beta", p, r)
	p, r = call("a1", "a1", "plan", 0, "planner", "openai", "gpt-5", 700, "archived 데이터", "ok")
	add("alpha", p, r)
	testkit.InsertTurns(t, conn, turns...)
	insertMeta(t, conn,
		threadMeta{thread: "t1", title: "Renamed Émoji 🎉 thread", updatedNS: 1},
		threadMeta{thread: "a1", archived: true, updatedNS: 1},
	)
	return h, conn
}

func TestThreadsFilters(t *testing.T) {
	h, _ := listFixture(t)
	tests := []struct{ query, want string }{
		{"", "k1,j1,e1,t1,m1"},
		{"project=alpha", "k1,j1"},
		{"project=beta&provider=anthropic", "t1"},
		{"provider=openai", "k1,e1,m1"},
		{"provider=ollama", "e1"},
		{"provider=nobody", ""},
		{"q=" + url.QueryEscape("파이프"), "k1"},
		{"q=" + url.QueryEscape("데이터"), "k1"}, // a1 has it too, but is archived
		{"q=" + url.QueryEscape("🚀"), "j1"},
		{"q=" + url.QueryEscape("タイトル"), "j1"},
		{"q=login", "e1"},                         // case-insensitive
		{"q=" + url.QueryEscape("émoji 🎉"), "t1"}, // the override, folded
		{"q=untitled", ""},                        // the override replaces the prompt
		{"q=the+release", "m1"},                   // in the title, its first line
		{"q=summarise", "m1"},
		{"archived=1", "a1"},
		{"archived=1&q=" + url.QueryEscape("데이터"), "a1"},
		{"archived=1&project=beta", ""},
		{"archived=0", "k1,j1,e1,t1,m1"},
	}
	for _, tt := range tests {
		var got threadsAnswer
		getJSON(t, h, "/api/threads?"+tt.query, http.StatusOK, &got)
		if got.ids() != tt.want {
			t.Errorf("GET /api/threads?%s = %q, want %q", tt.query, got.ids(), tt.want)
		}
		// The page lists the same threads.
		res := get(t, h, "/?"+tt.query)
		if res.status != http.StatusOK {
			t.Errorf("GET /?%s: status %d", tt.query, res.status)
			continue
		}
		if n := strings.Count(res.body, `<tr class="thread-row"`); n != len(got.Threads) {
			t.Errorf("GET /?%s: %d rows, want %d", tt.query, n, len(got.Threads))
		}
	}

	var all threadsAnswer
	getJSON(t, h, "/api/threads?provider=openai", http.StatusOK, &all)
	if got := strings.Join(all.Projects, ","); got != "alpha,beta" {
		t.Errorf("projects %q, want alpha,beta", got)
	}
	if got := strings.Join(all.Providers, ","); got != "anthropic,ollama,openai" {
		t.Errorf("providers %q, want anthropic,ollama,openai", got)
	}
	// A provider filter picks threads, not turns: e1 keeps its ollama turns.
	for _, th := range all.Threads {
		if th.ID == "e1" && (th.Turns != 4 || strings.Join(th.Providers, ",") != "ollama,openai") {
			t.Errorf("e1 under provider=openai: %d turns, providers %q; want 4 and ollama,openai", th.Turns, th.Providers)
		}
		if th.ID == "m1" && th.Title != "Summarise the release notes" || th.ID == "m1" && th.Preview != "Three fixes, one feature." {
			t.Errorf("m1 title %q preview %q, want the user message's first line and the answer on one line", th.Title, th.Preview)
		}
	}

	// The form keeps the filters; the toggle link keeps them too.
	page := get(t, h, "/?project=beta&provider=anthropic&q=%C3%A9moji").body
	for _, want := range []string{
		`<option value="beta" selected>beta</option>`,
		`<option value="anthropic" selected>anthropic</option>`,
		`name="q" value="émoji"`,
		`<a class="archived-toggle" href="/?archived=1&amp;project=beta&amp;provider=anthropic&amp;q=%C3%A9moji">Archived</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("filtered page lacks %s:\n%s", want, page)
		}
	}
	archived := get(t, h, "/?archived=1").body
	for _, want := range []string{`<h1>Archived threads</h1>`, `<input type="hidden" name="archived" value="1">`,
		`href="/">Active threads</a>`, `<button type="button" class="archive">Restore</button>`} {
		if !strings.Contains(archived, want) {
			t.Errorf("archived page lacks %s:\n%s", want, archived)
		}
	}
	if none := get(t, h, "/?provider=nobody").body; !strings.Contains(none, "No threads match.") {
		t.Errorf("page with no match lacks the note:\n%s", none)
	}
}

// Paging follows the cursors newest first to the end and back, across
// threads whose last turns start at the same time, with no thread twice
// and none left out.
func TestThreadsPaging(t *testing.T) {
	h, conn := newServer(t)
	var turns []schema.Turn
	var want []string
	for i := range 7 {
		id := fmt.Sprintf("p%d", i)
		// p0..p2 share their last start; the thread id orders them.
		start := 100 - 10*max(i, 2)
		p, r := call(id, id, "plan", 0, "planner", "openai", "gpt-5", start, "prompt "+id, "answer "+id)
		turns = append(turns, p, r)
		want = append(want, id)
	}
	testkit.InsertTurns(t, conn, turns...)
	testkit.InsertTurns(t, conn, turns[4:6]...) // delivered twice: still one thread

	var pages []string
	var seen []string
	next, last := "/api/threads?limit=3", ""
	for next != "" {
		var a threadsAnswer
		getJSON(t, h, next, http.StatusOK, &a)
		if (len(pages) == 0) != (a.Prev == "") {
			t.Errorf("page %d (%s): prev %q; want one on every page but the first", len(pages), next, a.Prev)
		}
		pages = append(pages, a.ids())
		for _, th := range a.Threads {
			seen = append(seen, th.ID)
		}
		last, next = next, a.Next
		if len(pages) > 5 {
			t.Fatalf("pages never end: %q", pages)
		}
	}
	if got := strings.Join(pages, " | "); got != "p0,p1,p2 | p3,p4,p5 | p6" {
		t.Errorf("pages of 3 = %q, want p0,p1,p2 | p3,p4,p5 | p6", got)
	}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("paged through %q, want %q", seen, want)
	}
	if !strings.Contains(last, "limit=3") {
		t.Errorf("next URL %q dropped the limit", last)
	}

	// Back from the last page through prev.
	var a threadsAnswer
	getJSON(t, h, last, http.StatusOK, &a)
	var back []string
	for prev := a.Prev; prev != ""; {
		var b threadsAnswer
		getJSON(t, h, prev, http.StatusOK, &b)
		back = append(back, b.ids())
		prev = b.Prev
		if len(back) > 5 {
			t.Fatalf("prev pages never end: %q", back)
		}
	}
	if got := strings.Join(back, " | "); got != "p3,p4,p5 | p0,p1,p2" {
		t.Errorf("prev pages from the last = %q, want p3,p4,p5 | p0,p1,p2", got)
	}

	// The page links the same pages.
	page := get(t, h, "/?limit=3").body
	if !strings.Contains(page, `<a class="older" href="/?before=`) || strings.Contains(page, `class="newer"`) {
		t.Errorf("first page: want an Older link and no Newer one:\n%s", page)
	}
}

func TestThreadsBadParams(t *testing.T) {
	h, _ := listFixture(t)
	tests := []struct{ query, field string }{
		{"limit=0", "limit"},
		{"limit=201", "limit"},
		{"limit=ten", "limit"},
		{"archived=yes", "archived"},
		{"before=nonsense", "before"},
		{"after=12.%21%21", "after"},
		{"before=1.YQ&after=1.YQ", "after"},
		{"q=" + strings.Repeat("가", 201), "q"},
	}
	for _, tt := range tests {
		for _, path := range []string{"/api/threads?", "/?"} {
			res := get(t, h, path+tt.query)
			if res.status != http.StatusBadRequest || !strings.Contains(res.body, tt.field+":") {
				t.Errorf("GET %s%s: status %d, want 400 naming %s:\n%s", path, tt.query, res.status, tt.field, res.body)
			}
		}
	}
}

// patchJSON patches a thread and decodes the thread it answers.
func patchJSON(t *testing.T, h http.Handler, id, body string) store.Thread {
	t.Helper()
	res := send(t, h, http.MethodPatch, "/api/threads/"+url.PathEscape(id), "application/json", body)
	if res.status != http.StatusOK {
		t.Fatalf("PATCH %s %s: status %d:\n%s", id, body, res.status, res.body)
	}
	var th store.Thread
	if err := json.Unmarshal([]byte(res.body), &th); err != nil {
		t.Fatalf("PATCH %s: decode %s: %v", id, res.body, err)
	}
	return th
}

func TestPatchThread(t *testing.T) {
	h, conn := listFixture(t)
	list := func(query string) string {
		var a threadsAnswer
		getJSON(t, h, "/api/threads?"+query, http.StatusOK, &a)
		return a.ids()
	}

	// Rename: trimmed and on one line; the list and the page show it.
	th := patchJSON(t, h, "k1", `{"title": "  점검\n 결과 🚀  "}`)
	if th.Title != "점검 결과 🚀" || th.ID != "k1" || th.Turns != 2 {
		t.Errorf("renamed k1 = %+v, want title %q", th, "점검 결과 🚀")
	}
	if got := list("q=" + url.QueryEscape("결과")); got != "k1" {
		t.Errorf("search for the new title = %q, want k1", got)
	}
	if page := get(t, h, "/threads/k1").body; !strings.Contains(page, "<h1>점검 결과 🚀</h1>") {
		t.Errorf("thread page lacks the new title:\n%s", page)
	}

	// Archive keeps the title; the list hides the thread, archived=1 shows it.
	th = patchJSON(t, h, "k1", `{"archived": true}`)
	if !th.Archived || th.Title != "점검 결과 🚀" {
		t.Errorf("archived k1 = %+v, want archived with its title", th)
	}
	if got := list(""); strings.Contains(got, "k1") {
		t.Errorf("list after archiving k1 = %q", got)
	}
	if got := list("archived=1"); got != "a1,k1" {
		t.Errorf("archived list = %q, want a1,k1", got)
	}
	// Restore and reset the title in one change: the first prompt again.
	th = patchJSON(t, h, "k1", `{"archived": false, "title": "   "}`)
	if th.Archived || th.Title != "데이터 파이프라인 점검" {
		t.Errorf("restored k1 = %+v, want active with the automatic title", th)
	}
	if got := list(""); got != "k1,j1,e1,t1,m1" {
		t.Errorf("list after restoring = %q", got)
	}

	// A thread id with a slash is reachable.
	p, r := call("team/x y", "s1", "plan", 0, "planner", "openai", "gpt-5", 10, "slashed", "ok")
	testkit.InsertTurns(t, conn, p, r)
	if th := patchJSON(t, h, "team/x y", `{"title":"Slashed"}`); th.Title != "Slashed" {
		t.Errorf("renamed team/x y = %q, want Slashed", th.Title)
	}

	// Starred (set by another feature) carries over, and quick edits never
	// share an updated_ns.
	ctx := context.Background()
	if err := conn.Exec(ctx, "INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns) SELECT 'j1', 'Starred one', 0, 1, 5"); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"archived":true}`, `{"archived":false}`, `{"title":"Quick"}`} {
		patchJSON(t, h, "j1", body)
	}
	var rows, stamps uint64
	var title string
	var starred, archivedNow uint8
	err := conn.QueryRow(ctx, `SELECT count(), uniqExact(updated_ns), argMax(title, updated_ns), argMax(starred, updated_ns), argMax(archived, updated_ns)
		FROM thread_meta WHERE thread_id = 'j1'`).Scan(&rows, &stamps, &title, &starred, &archivedNow)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 4 || stamps != 4 || title != "Quick" || starred != 1 || archivedNow != 0 {
		t.Errorf("j1 meta: %d rows, %d distinct updated_ns, title %q, starred %d, archived %d; want 4, 4, Quick, 1, 0",
			rows, stamps, title, starred, archivedNow)
	}
	var merged uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM thread_meta FINAL WHERE thread_id = 'j1' AND title = 'Quick' AND starred = 1").Scan(&merged); err != nil || merged != 1 {
		t.Errorf("thread_meta FINAL for j1: %d rows with the last edit (err %v), want 1", merged, err)
	}
}

func TestPatchThreadRefused(t *testing.T) {
	h, _ := listFixture(t)
	ct := "application/json"
	tests := []struct {
		name, path, contentType, body string
		header                        []string
		status                        int
		want                          string
	}{
		{"unknown thread", "/api/threads/nope", ct, `{"title":"x"}`, nil, 404, "not found"},
		{"unknown field", "/api/threads/k1", ct, `{"title":"x","starred":true}`, nil, 400, `body: unknown field \"starred\"`},
		{"title not a string", "/api/threads/k1", ct, `{"title":5}`, nil, 400, "title: want a string"},
		{"archived not a bool", "/api/threads/k1", ct, `{"archived":"yes"}`, nil, 400, "archived: want true or false"},
		{"title too long", "/api/threads/k1", ct, `{"title":"` + strings.Repeat("한", 201) + `"}`, nil, 400, "title: 201 characters, at most 200"},
		{"nothing to change", "/api/threads/k1", ct, `{}`, nil, 400, "body: nothing to change"},
		{"null", "/api/threads/k1", ct, `null`, nil, 400, "body: nothing to change"},
		{"not JSON", "/api/threads/k1", ct, `title=x`, nil, 400, "body: not a JSON object"},
		{"empty", "/api/threads/k1", ct, ``, nil, 400, "body: empty"},
		{"two objects", "/api/threads/k1", ct, `{"title":"a"}{"title":"b"}`, nil, 400, "body: send one JSON object"},
		{"array", "/api/threads/k1", ct, `[{"title":"a"}]`, nil, 400, "body: not a JSON object"},
		{"cross-site", "/api/threads/k1", ct, `{"archived":true}`, []string{"Sec-Fetch-Site", "cross-site"}, 403, "cross-origin request refused"},
		{"other origin", "/api/threads/k1", ct, `{"archived":true}`, []string{"Origin", "https://evil.example"}, 403, "cross-origin request refused"},
		{"form body", "/api/threads/k1", "application/x-www-form-urlencoded", `archived=true`, nil, 415, "application/json"},
		{"text body", "/api/threads/k1", "text/plain", `{"archived":true}`, nil, 415, "application/json"},
	}
	for _, tt := range tests {
		res := send(t, h, http.MethodPatch, tt.path, tt.contentType, tt.body, tt.header...)
		if res.status != tt.status || !strings.Contains(res.body, tt.want) {
			t.Errorf("%s: PATCH %s (%s) %s: status %d %s, want %d with %q", tt.name, tt.path, tt.contentType, tt.body,
				res.status, res.body, tt.status, tt.want)
		}
	}
	// Nothing refused changed anything.
	var a threadsAnswer
	getJSON(t, h, "/api/threads", http.StatusOK, &a)
	if a.ids() != "k1,j1,e1,t1,m1" || a.Threads[0].Title != "데이터 파이프라인 점검" {
		t.Errorf("after refused changes: %q, first title %q; want unchanged", a.ids(), a.Threads[0].Title)
	}
}

// Model output and user input are escaped wherever the list shows them.
func TestThreadsEscaping(t *testing.T) {
	h, conn := newServer(t)
	const (
		script = `<script>alert(1)</script>`
		img    = `<img src=x onerror=alert(1)>`
		js     = `javascript:alert(1)`
	)
	p, r := call("x1", "x1", "plan", 0, "planner", img, "m", 10, script+" title", "answer "+img+" "+script)
	p2, r2 := call("x2", "x2", "plan", 0, "planner", "openai", "m", 5, "plain", js)
	turns := append(inProject(js, p, r), inProject(script, p2, r2)...)
	testkit.InsertTurns(t, conn, turns...)
	patchJSON(t, h, "x2", `{"title":"`+strings.ReplaceAll(img, `"`, `\"`)+` `+js+`"}`)

	for _, path := range []string{"/", "/?project=" + url.QueryEscape(js), "/?provider=" + url.QueryEscape(img), "/threads/x2"} {
		assertProbesEscaped(t, "GET "+path, get(t, h, path))
	}
	page := get(t, h, "/").body
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt; title",                          // title from the prompt
		"answer &lt;img src=x onerror=alert(1)&gt; &lt;script&gt;alert(1)&lt;", // preview
		`&lt;img src=x onerror=alert(1)&gt;</span>`,                            // provider badge
		`<span class="project">javascript:alert(1)</span>`,                     // project, inert as text
		`<span class="project">&lt;script&gt;alert(1)&lt;/script&gt;</span>`,   // project
		`&lt;img src=x onerror=alert(1)&gt; javascript:alert(1)</a>`,           // override title
	} {
		if !strings.Contains(page, want) {
			t.Errorf("GET / lacks escaped %s:\n%s", want, page)
		}
	}
}
