package viewer_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

// longPrompt is 180 runes of Korean (3 bytes each in UTF-8), so a title cut
// at 80 bytes instead of 80 runes would split a character.
var longPrompt = strings.Repeat("데이터 파이프라인 ", 20)

func threadsFixture(t *testing.T) (http.Handler, *topology.Conn) {
	h, conn := newServer(t)

	// th-long: two providers, a long first prompt, a later prompt that
	// must not become the title, and its last response delivered twice.
	p1, r1 := call("th-long", "a1", "plan", 0, "planner", "openai", "gpt-5", 100, longPrompt, "plan")
	r1.TokensIn, r1.TokensOut, r1.CostUSD = u32(1200), u32(300), f64(0.25)
	p2, r2 := call("th-long", "a2", "review", 0, "critic", "anthropic", "claude", 110, "second prompt, not the title", "ok")
	r2.TokensIn, r2.TokensOut, r2.TokensCacheRead, r2.CostUSD = u32(800), u32(200), u32(50), f64(0.5)

	// th-nocost: tokens known, cost never reported.
	p3, r3 := call("th-nocost", "b1", "execute", 0, "worker", "ollama", "llama", 50, "count to three", "1 2 3")
	r3.TokensIn, r3.TokensOut = u32(10), u32(5)

	// th-unknown: neither tokens nor cost reported, no provider.
	p4, r4 := call("th-unknown", "c1", "", 0, "cli", "", "", 40, "hello", "hi")

	// th-titled: the user's newest title wins over the prompt and over an
	// older title.
	p5, r5 := call("th-titled", "d1", "plan", 0, "planner", "openai", "gpt-5", 30, "prompt of a titled thread", "ok")

	// th-archived: hidden from the list, still reachable.
	p6, r6 := call("th-archived", "e1", "plan", 0, "planner", "openai", "gpt-5", 200, "archived thread", "ok")

	// A thread id with a slash and a space reaches its page through the
	// escaped link.
	p7, r7 := call("team/a b", "f1", "plan", 0, "planner", "openai", "gpt-5", 20, "slashed thread", "ok")

	// th-msgs: the first prompt is messages JSON; the title is the user's
	// message, not the system prompt.
	p8, r8 := call("th-msgs", "g1", "plan", 0, "planner", "openai", "gpt-5", 5,
		`[{"role":"system","content":"You are a planner."},{"role":"user","content":"Fix issue #418:\nparseConfig crashes"}]`, "ok")

	// Later prompt first, duplicate response last: insert order must not matter.
	testkit.InsertTurns(t, conn, p2, r2, p1, r1, p3, r3, p4, r4, p5, r5, p6, r6, p7, r7, p8, r8)
	testkit.InsertTurns(t, conn, r2)
	insertMeta(t, conn,
		threadMeta{thread: "th-titled", title: "Old title", updatedNS: 1},
		threadMeta{thread: "th-titled", title: "Newer <b>title</b>", updatedNS: 2},
		threadMeta{thread: "th-archived", archived: true, updatedNS: 1},
	)
	return h, conn
}

func TestThreadsAPI(t *testing.T) {
	h, _ := threadsFixture(t)
	var got struct {
		Threads []store.Thread `json:"threads"`
	}
	body := getJSON(t, h, "/api/threads", http.StatusOK, &got)

	var ids []string
	for _, th := range got.Threads {
		ids = append(ids, th.ID)
	}
	// Newest first by the start of the last turn; th-archived is hidden.
	want := []string{"th-long", "th-nocost", "th-unknown", "th-titled", "team/a b", "th-msgs"}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("thread order %q, want %q", ids, want)
	}

	byID := map[string]store.Thread{}
	for _, th := range got.Threads {
		byID[th.ID] = th
	}
	long := byID["th-long"]
	wantTitle := string([]rune(strings.TrimSpace(longPrompt))[:80]) + "…"
	if long.Title != wantTitle {
		t.Errorf("th-long title %q, want %q", long.Title, wantTitle)
	}
	if got := strings.Join(long.Providers, ","); got != "anthropic,openai" {
		t.Errorf("th-long providers %q, want anthropic,openai", got)
	}
	if long.Turns != 4 {
		t.Errorf("th-long has %d turns, want 4 (the duplicate response counts once)", long.Turns)
	}
	if long.Tokens == nil || *long.Tokens != 2500 {
		t.Errorf("th-long tokens %v, want 2500 (1200+300+800+200)", long.Tokens)
	}
	if long.CostUSD == nil || *long.CostUSD != 0.75 {
		t.Errorf("th-long cost %v, want 0.75", long.CostUSD)
	}
	if want := at(111); long.LastNS != want {
		t.Errorf("th-long last_ns %d, want %d", long.LastNS, want)
	}
	if got := byID["th-msgs"].Title; got != "Fix issue #418:" {
		t.Errorf("th-msgs title %q, want the first line of the user message", got)
	}
	if got := byID["th-titled"].Title; got != "Newer <b>title</b>" {
		t.Errorf("th-titled title %q, want the newest override", got)
	}
	if nc := byID["th-nocost"]; nc.CostUSD != nil || nc.Tokens == nil || *nc.Tokens != 15 {
		t.Errorf("th-nocost cost %v tokens %v, want null cost and 15 tokens", nc.CostUSD, nc.Tokens)
	}
	if un := byID["th-unknown"]; un.Tokens != nil || un.CostUSD != nil || len(un.Providers) != 0 {
		t.Errorf("th-unknown tokens %v cost %v providers %q, want null, null, none", un.Tokens, un.CostUSD, un.Providers)
	}

	// Unknown sums are JSON null, never 0.
	var raw struct {
		Threads []map[string]json.RawMessage `json:"threads"`
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	for _, th := range raw.Threads {
		if string(th["thread_id"]) != `"th-unknown"` {
			continue
		}
		for _, k := range []string{"tokens", "tokens_in", "tokens_out", "cost_usd"} {
			if string(th[k]) != "null" {
				t.Errorf("th-unknown %s = %s, want null", k, th[k])
			}
		}
		if string(th["providers"]) != "[]" {
			t.Errorf("th-unknown providers = %s, want []", th["providers"])
		}
	}
}

func TestThreadsPage(t *testing.T) {
	h, _ := threadsFixture(t)
	res := get(t, h, "/")
	if res.status != http.StatusOK {
		t.Fatalf("GET /: status %d:\n%s", res.status, res.body)
	}
	page := res.body
	rows := regexp.MustCompile(`(?s)<tr class="thread-row".*?</tr>`).FindAllString(page, -1)
	if len(rows) != 6 {
		t.Fatalf("threads table has %d rows, want 6:\n%s", len(rows), page)
	}
	row := func(href string) string {
		for _, r := range rows {
			if strings.Contains(r, `href="`+href+`"`) {
				return r
			}
		}
		t.Fatalf("no row links to %s:\n%s", href, page)
		return ""
	}

	long := row("/threads/th-long")
	cells := []struct{ name, want string }{
		{"title", ">" + string([]rune(strings.TrimSpace(longPrompt))[:80]) + "…</a>"},
		{"provider badge", `<span class="badge prov-1">anthropic</span>`},
		{"provider badge", `<span class="badge prov-0">openai</span>`},
		{"turns", `<td class="num turns">4</td>`},
		{"tokens", `<td class="num tokens">2,500</td>`},
		{"cost", `<td class="num cost">$0.75</td>`},
		{"last update", `<time datetime="2026-05-01T09:01:51.000Z" title="2026-05-01 09:01:51 UTC">`},
		{"relative last update", ` ago</time>`},
		{"preview", `<div class="preview">ok</div>`},
		{"archive button", `<button type="button" class="archive">Archive</button>`},
	}
	for _, c := range cells {
		if !strings.Contains(long, c.want) {
			t.Errorf("th-long row lacks %s %q:\n%s", c.name, c.want, long)
		}
	}
	if nc := row("/threads/th-nocost"); !strings.Contains(nc, `<td class="num cost">—</td>`) || !strings.Contains(nc, `<td class="num tokens">15</td>`) {
		t.Errorf("th-nocost row: want cost — and 15 tokens:\n%s", nc)
	}
	if un := row("/threads/th-unknown"); !strings.Contains(un, `<td class="num tokens">—</td>`) {
		t.Errorf("th-unknown row: want tokens —:\n%s", un)
	}
	if titled := row("/threads/th-titled"); !strings.Contains(titled, "Newer &lt;b&gt;title&lt;/b&gt;") {
		t.Errorf("th-titled row: want the escaped override title:\n%s", titled)
	}
	if strings.Contains(page, "th-archived") || strings.Contains(page, "archived thread") {
		t.Errorf("archived thread listed:\n%s", page)
	}
	// The slashed id links to an escaped path that reaches its page.
	row("/threads/team%2Fa%20b")
	if res := get(t, h, "/threads/team%2Fa%20b"); res.status != http.StatusOK || !strings.Contains(res.body, "slashed thread") {
		t.Errorf("GET /threads/team%%2Fa%%20b: status %d, want 200 with the thread:\n%s", res.status, res.body)
	}
	// An archived thread keeps its page.
	if res := get(t, h, "/threads/th-archived"); res.status != http.StatusOK || !strings.Contains(res.body, `<span class="pill archived">archived</span>`) {
		t.Errorf("GET /threads/th-archived: status %d, want 200 marked archived:\n%s", res.status, res.body)
	}
}

func TestThreadLimit(t *testing.T) {
	_, conn := threadsFixture(t)
	h := viewer.New(conn, viewer.WithThreadLimit(2)).Handler()
	var got struct {
		Threads []store.Thread `json:"threads"`
	}
	getJSON(t, h, "/api/threads", http.StatusOK, &got)
	if len(got.Threads) != 2 || got.Threads[0].ID != "th-long" || got.Threads[1].ID != "th-nocost" {
		t.Errorf("WithThreadLimit(2) listed %+v, want th-long and th-nocost", got.Threads)
	}
}

// A database the viewer cannot read (here: never migrated) yields a 500
// with no detail, the error going to the log.
func TestQueryFailure(t *testing.T) {
	conn, err := ddl.Open(context.Background(), testkit.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var logged strings.Builder
	h := viewer.New(conn, viewer.WithLogger(slog.New(slog.NewTextHandler(&logged, nil)))).Handler()

	tests := []struct{ path, contentType, want string }{
		{"/", "text/html", "Something went wrong"},
		{"/threads/x", "text/html", "Something went wrong"},
		{"/api/threads", "application/json", `{"error":"internal error"}`},
		{"/api/threads/x/turns", "application/json", `{"error":"internal error"}`},
	}
	for _, tt := range tests {
		res := get(t, h, tt.path)
		if res.status != http.StatusInternalServerError || !strings.HasPrefix(res.header.Get("Content-Type"), tt.contentType) ||
			!strings.Contains(res.body, tt.want) || strings.Contains(res.body, "doesn't exist") {
			t.Errorf("GET %s: status %d, Content-Type %q; want 500 %s with %q and no detail:\n%s",
				tt.path, res.status, res.header.Get("Content-Type"), tt.contentType, tt.want, res.body)
		}
	}
	if !strings.Contains(logged.String(), "query failed") || !strings.Contains(logged.String(), "doesn't exist") {
		t.Errorf("log lacks the failed query:\n%s", logged.String())
	}
}

func TestEmptyThreadsPage(t *testing.T) {
	h, _ := newServer(t)
	if res := get(t, h, "/"); res.status != http.StatusOK || !strings.Contains(res.body, "No threads recorded yet") {
		t.Errorf("GET / on an empty database: status %d, want 200 and the empty note:\n%s", res.status, res.body)
	}
	var got struct {
		Threads []store.Thread `json:"threads"`
	}
	if body := getJSON(t, h, "/api/threads", http.StatusOK, &got); !strings.Contains(body, `"threads":[]`) {
		t.Errorf("GET /api/threads on an empty database = %s, want an empty list", body)
	}
}
