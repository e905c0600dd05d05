package viewer_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer"
)

type searchAnswer struct {
	Q        string                `json:"q"`
	Results  []viewer.SearchResult `json:"results"`
	Next     string                `json:"next"`
	Prev     string                `json:"prev"`
	Projects []string              `json:"projects"`
}

// searchFixture stores threads in three scripts, two projects, roles and
// times to filter by; the Korean response is delivered twice.
func searchFixture(t *testing.T) http.Handler {
	t.Helper()
	h, conn := newServer(t)
	ko1, ko2 := call("ko", "k1", "plan", 0, "planner", "openai", "gpt-5", 0, "빈 설정 파일을 처리해 주세요", "요약: 빈 설정 파일이면 기본값을 씁니다")
	ja1, ja2 := call("ja", "j1", "review", 0, "reviewer", "anthropic", "claude", 10, "設定ファイルが空です", "レビュー完了")
	ja1.Project, ja2.Project = "other", "other"
	em1, em2 := call("emoji", "e1", "verify", 0, "Verifier-Bot", "openai", "gpt-5", 20, "ship it 🎉 now", "Hello WORLD")
	fr, _ := call("fr", "f1", "plan", 0, "planner", "openai", "gpt-5", 30, "L'ÉCOLE est fermée", "")
	testkit.InsertTurns(t, conn, ko1, ko2, ja1, ja2, em1, em2, fr)
	testkit.InsertTurns(t, conn, ko2)
	insertMeta(t, conn, threadMeta{thread: "ko", title: "Korean thread", updatedNS: 1})
	return h
}

// searchIDs runs a search and returns the turn ids found, in order.
func searchIDs(t *testing.T, h http.Handler, query string) []string {
	t.Helper()
	var got searchAnswer
	getJSON(t, h, "/api/search?"+query, http.StatusOK, &got)
	ids := []string{}
	for _, r := range got.Results {
		ids = append(ids, r.TurnID)
	}
	return ids
}

func TestSearchFilters(t *testing.T) {
	h := searchFixture(t)
	q := url.QueryEscape
	tests := []struct {
		query string
		want  []string
	}{
		{"q=" + q("설정 파일"), []string{"k1:response:1", "k1:prompt:0"}},
		{"q=" + q("ファイル"), []string{"j1:prompt:0"}},
		{"q=" + q("🎉"), []string{"e1:prompt:0"}},
		{"q=world", []string{"e1:response:1"}},
		{"q=" + q("école EST FERMÉE"), []string{"f1:prompt:0"}},
		{"q=" + q("HELLO world"), []string{"e1:response:1"}},
		{"q=verifier-bot", []string{"e1:response:1", "e1:prompt:0"}}, // by speaker
		{"q=" + q("설정") + "&role=response", []string{"k1:response:1"}},
		{"q=" + q("設定") + "&project=other", []string{"j1:prompt:0"}},
		{"q=" + q("설정") + "&project=other", []string{}},
		{"q=e&from=2026-05-01T09:00:10Z&to=2026-05-01T09:00:11Z", []string{"j1:response:1", "j1:prompt:0"}},
		{"q=nothing-like-this", []string{}},
	}
	for _, tt := range tests {
		if got := searchIDs(t, h, tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("search %s = %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestSearchResultFields(t *testing.T) {
	h := searchFixture(t)
	var got searchAnswer
	getJSON(t, h, "/api/search?q="+url.QueryEscape("요약"), http.StatusOK, &got)
	if len(got.Results) != 1 {
		t.Fatalf("results = %+v, want the Korean response once", got.Results)
	}
	r := got.Results[0]
	want := viewer.SearchResult{TurnID: "k1:response:1", ThreadID: "ko", ThreadTitle: "Korean thread", Project: "proj",
		Phase: "plan", Speaker: "planner", Role: "response", Model: "gpt-5", StartNS: at(1), URL: "/threads/ko#k1:response:1"}
	r.Time, r.Snippet = want.Time, nil
	if fmt.Sprint(r) != fmt.Sprint(want) {
		t.Errorf("result = %+v, want %+v", r, want)
	}
	if seg := got.Results[0].Snippet; len(seg) != 2 || !seg[0].Match || seg[0].Text != "요약" || strings.Contains(seg[1].Text, "…") {
		t.Errorf("snippet = %+v, want the match 요약 then the rest of the turn, uncut", seg)
	}
	var fr searchAnswer
	getJSON(t, h, "/api/search?q="+url.QueryEscape("école"), http.StatusOK, &fr)
	if len(fr.Results) != 1 || fmt.Sprint(fr.Results[0].Snippet) != "[{L' false} {ÉCOLE true} { est fermée false}]" {
		t.Errorf("search école = %+v, want the ÉCOLE of thread fr marked", fr.Results)
	}
	if strings.Join(got.Projects, ",") != "other,proj" {
		t.Errorf("projects = %q, want other,proj", got.Projects)
	}
}

// A match deep in a long turn shows the text around it, cut with …, and
// the match as it is written.
func TestSearchSnippet(t *testing.T) {
	h, conn := newServer(t)
	content := strings.Repeat("앞 ", 5000) + "the NEEDLE is here " + strings.Repeat("뒤 ", 5000)
	p, r := call("th1", "s1", "plan", 0, "planner", "openai", "gpt-5", 0, content, "ok")
	testkit.InsertTurns(t, conn, p, r)
	var got searchAnswer
	getJSON(t, h, "/api/search?q=needle", http.StatusOK, &got)
	if len(got.Results) != 1 {
		t.Fatalf("results = %+v, want one", got.Results)
	}
	var b strings.Builder
	for _, s := range got.Results[0].Snippet {
		if s.Match {
			fmt.Fprintf(&b, "[%s]", s.Text)
		} else {
			b.WriteString(s.Text)
		}
	}
	s := b.String()
	if !strings.HasPrefix(s, "…") || !strings.Contains(s, "앞 앞 the [NEEDLE] is here 뒤 뒤") || !strings.HasSuffix(s, "…") || len([]rune(s)) > 170 {
		t.Errorf("snippet = %q (%d runes), want …, the match marked, … and at most 170 runes", s, len([]rune(s)))
	}
	page := get(t, h, "/search?q=needle").body
	if !strings.Contains(page, "the <mark>NEEDLE</mark> is here") {
		t.Errorf("search page does not mark the match:\n%s", page)
	}
}

// A turn stored as messages JSON shows the text of its messages around
// the match, never the JSON around them.
func TestSearchSnippetFromMessages(t *testing.T) {
	h, conn := newServer(t)
	prompt := `[{"role":"system","parts":[{"type":"text","content":"You plan releases."}]},` +
		`{"role":"user","parts":[{"type":"text","content":"Check the 배포 NEEDLE\nbefore Friday"}]}]`
	// A turn too long to read whole: the window around its match, its JSON
	// taken away.
	long := `[{"role":"user","parts":[{"type":"text","content":"` + strings.Repeat("filler ", 20_000) + `"}]},` +
		`{"role":"assistant","parts":[{"type":"text","content":"Check the 배포 NEEDLE\nbefore Friday"}]},` +
		`{"role":"user","parts":[{"type":"text","content":"` + strings.Repeat("more ", 20_000) + `"}]}]`
	p, r := call("th1", "s1", "plan", 0, "planner", "openai", "gpt-5", 0, prompt, "ok")
	lp, lr := call("th2", "s2", "plan", 0, "planner", "openai", "gpt-5", 10, long, "ok")
	testkit.InsertTurns(t, conn, p, r, lp, lr)
	var got searchAnswer
	getJSON(t, h, "/api/search?q=needle", http.StatusOK, &got)
	if len(got.Results) != 2 {
		t.Fatalf("results = %+v, want two", got.Results)
	}
	for _, res := range got.Results {
		var b strings.Builder
		for _, s := range res.Snippet {
			if s.Match {
				fmt.Fprintf(&b, "[%s]", s.Text)
			} else {
				b.WriteString(s.Text)
			}
		}
		if s := b.String(); !strings.Contains(s, "Check the 배포 [NEEDLE] before Friday") ||
			strings.Contains(s, `"role"`) || strings.Contains(s, "parts") || strings.Contains(s, "{") {
			t.Errorf("snippet of %s = %q, want the messages' text around the match, no JSON", res.ThreadID, s)
		}
	}
}

// The page shows each thread's title once, then its hits, threads in the
// order of their newest hit.
func TestSearchGroupsByThread(t *testing.T) {
	h, conn := newServer(t)
	var turns []schema.Turn
	for i, th := range []string{"alpha", "alpha", "beta", "alpha"} {
		p, r := call(th, fmt.Sprintf("s%d", i), "plan", 0, "planner", "openai", "gpt-5", 10*i, "the "+th+" marker question", "a marker answer")
		turns = append(turns, p, r)
	}
	testkit.InsertTurns(t, conn, turns...)
	page := get(t, h, "/search?q=marker").body
	if n := strings.Count(page, `class="result"`); n != 8 {
		t.Errorf("%d hits on the page, want 8", n)
	}
	heads := regexp.MustCompile(`class="group-link" href="/threads/(\w+)">`).FindAllStringSubmatch(page, -1)
	var order []string
	for _, m := range heads {
		order = append(order, m[1])
	}
	if strings.Join(order, ",") != "alpha,beta" {
		t.Errorf("groups %v, want alpha (newest hit) then beta, each once", order)
	}
	if !strings.Contains(page, "6 hits") || !strings.Contains(page, "2 hits") {
		t.Errorf("group counts missing: want 6 hits under alpha and 2 under beta")
	}
}

// Paging forward then back visits every match once, in order, newest first:
// 250 matches over 3 pages, some at the same instant, some delivered twice.
func TestSearchPaging(t *testing.T) {
	h, conn := newServer(t)
	var rows, again []schema.Turn
	var want []string
	for i := range 250 {
		p, _ := call("th1", fmt.Sprintf("s%03d", i), "plan", 0, "planner", "openai", "gpt-5", i/3, fmt.Sprintf("needle %d", i), "")
		rows = append(rows, p)
		if i%7 == 0 {
			again = append(again, p)
		}
		want = append(want, p.TurnID)
	}
	testkit.InsertTurns(t, conn, rows...)
	testkit.InsertTurns(t, conn, again...)
	// Newest first: later start, then the greater turn id.
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(b, a) })
	slices.SortStableFunc(want, func(a, b string) int {
		ai, bi := 0, 0
		fmt.Sscanf(a, "s%03d", &ai)
		fmt.Sscanf(b, "s%03d", &bi)
		return bi/3 - ai/3
	})

	var pages [][]string
	var prevs []string
	query := "/api/search?q=NEEDLE"
	for range 5 {
		var got searchAnswer
		getJSON(t, h, query, http.StatusOK, &got)
		var ids []string
		for _, r := range got.Results {
			ids = append(ids, r.TurnID)
		}
		pages, prevs = append(pages, ids), append(prevs, got.Prev)
		if got.Next == "" {
			break
		}
		query = "/api/search?q=NEEDLE&after=" + url.QueryEscape(got.Next)
	}
	var sizes []int
	var all []string
	for _, p := range pages {
		sizes = append(sizes, len(p))
		all = append(all, p...)
	}
	if fmt.Sprint(sizes) != "[100 100 50]" || !slices.Equal(all, want) {
		t.Fatalf("pages of %v results; got\n%q\nwant\n%q", sizes, all, want)
	}
	if prevs[0] != "" || prevs[1] == "" || prevs[2] == "" {
		t.Errorf("prev cursors %q, want none on the first page only", prevs)
	}

	// Back from the last page.
	var back searchAnswer
	getJSON(t, h, "/api/search?q=NEEDLE&before="+url.QueryEscape(prevs[2]), http.StatusOK, &back)
	var ids []string
	for _, r := range back.Results {
		ids = append(ids, r.TurnID)
	}
	if !slices.Equal(ids, pages[1]) || back.Prev == "" || back.Next == "" {
		t.Errorf("back from page 3 = %q (prev %q, next %q), want page 2 with both cursors", ids, back.Prev, back.Next)
	}
	getJSON(t, h, "/api/search?q=NEEDLE&before="+url.QueryEscape(back.Prev), http.StatusOK, &back)
	if len(back.Results) != 100 || back.Results[0].TurnID != want[0] || back.Prev != "" {
		t.Errorf("back from page 2: %d results from %v, prev %q; want page 1 without prev", len(back.Results), back.Results[0].TurnID, back.Prev)
	}

	page := get(t, h, "/search?q=NEEDLE").body
	if !strings.Contains(page, `rel="next" href="/search?after=`) || strings.Contains(page, `rel="prev"`) {
		t.Errorf("first page lacks its Older link or has a Newer one")
	}
}

func TestSearchBadParams(t *testing.T) {
	h := searchFixture(t)
	tests := []struct {
		query, field string
	}{
		{"q=a&from=yesterday", "from"},
		{"q=a&to=soon", "to"},
		{"q=a&from=2026-05-02&to=2026-05-01", "to"},
		{"q=a&after=12", "after"},
		{"q=a&before=x.y", "before"},
		{"q=a&after=1.a&before=2.b", "before"},
		{"q=" + strings.Repeat("a", 1001), "q"},
		// Without a word, as with one.
		{"status=done", "status"}, {"q=x&status=OK", "status"}, {"starred=yes", "starred"},
		{"from=last+week", "from"}, {"role=prompt&to=soon", "to"}, {"tool=Bash&after=12", "after"},
		{"tool=Bash&after=1.a&before=2.b", "before"},
	}
	for _, tt := range tests {
		var e struct{ Error string }
		getJSON(t, h, "/api/search?"+tt.query, http.StatusBadRequest, &e)
		if !strings.HasPrefix(e.Error, tt.field+":") {
			t.Errorf("search %.40s: error %q, want it to name %s", tt.query, e.Error, tt.field)
		}
		if res := get(t, h, "/search?"+tt.query); res.status != http.StatusBadRequest || !strings.Contains(res.body, tt.field+":") {
			t.Errorf("search page %.40s: status %d, want 400 naming %s", tt.query, res.status, tt.field)
		}
	}
}

func TestSearchEmptyQuery(t *testing.T) {
	h := searchFixture(t)
	var got searchAnswer
	getJSON(t, h, "/api/search", http.StatusOK, &got)
	if len(got.Results) != 0 || len(got.Projects) != 2 {
		t.Errorf("empty search = %+v, want no results and the projects", got)
	}
	res := get(t, h, "/search?q=+")
	if res.status != http.StatusOK || !strings.Contains(res.body, `<form class="search-form"`) || strings.Contains(res.body, `class="result"`) {
		t.Errorf("empty search page: status %d, want the form and no results:\n%s", res.status, res.body)
	}
	if !strings.Contains(res.body, `<option value="other">other</option>`) {
		t.Errorf("search page lacks the project dropdown")
	}
	res = get(t, h, "/search?q=x&project=gone&role=tool_result_error")
	for _, want := range []string{`<option value="gone" selected>gone</option>`, `<option value="tool_result_error" selected>tool_result_error</option>`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("search page with filters from the URL lacks %s", want)
		}
	}
}

func TestSearchEscapesHostileText(t *testing.T) {
	h, conn := newServer(t)
	for i, bad := range escapeProbes {
		id := fmt.Sprintf("s%d", i)
		p, r := call(bad, id, bad, 0, bad, "openai", bad, i, "probe "+bad, "probe")
		p.Project, r.Project = bad, bad
		testkit.InsertTurns(t, conn, p, r)
		insertMeta(t, conn, threadMeta{thread: bad, title: bad, updatedNS: 1})
	}
	res := get(t, h, "/search?q=probe")
	if res.status != http.StatusOK || strings.Count(res.body, `class="result"`) != 6 {
		t.Fatalf("status %d, want 6 results:\n%s", res.status, res.body)
	}
	assertProbesEscaped(t, "search page", res)
	res = get(t, h, "/search?q="+url.QueryEscape(escapeProbes[0]))
	if res.status != http.StatusOK {
		t.Fatalf("search for a script tag: status %d, want 200", res.status)
	}
	assertProbesEscaped(t, "search page for a script tag", res)
}
