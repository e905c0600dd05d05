package viewer_test

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/topology"
	"github.com/convtrace/convtrace/viewer"
)

// internalFixture records thread th-int through the in-process collector:
// a public call, an internal one (instrument.Turn{Internal: true}, alone in
// its phase) and another public call. It returns the viewer, a connection to its
// database, and the internal call's prompt turn id.
func internalFixture(t *testing.T) (http.Handler, *topology.Conn, string) {
	t.Helper()
	conn, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn, collector.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	ctx := instrument.WithThread(context.Background(), "th-int")
	answer := func(text string) func(context.Context) (instrument.Response, error) {
		return func(context.Context) (instrument.Response, error) { return instrument.Response{Content: text}, nil }
	}
	var internalID string
	for _, c := range []struct {
		phase, prompt, answer string
		internal              bool
	}{
		{"plan", "first public question", "first public answer", false},
		{"review", "bookkeeping question", "bookkeeping answer", true},
		{"plan", "second public question", "second public answer", false},
	} {
		turn := instrument.Turn{Provider: "openai", Model: "gpt-5", Phase: c.phase, Prompt: c.prompt, Internal: c.internal}
		resp, err := rec.Call(ctx, turn, answer(c.answer))
		if err != nil {
			t.Fatal(err)
		}
		if c.internal {
			spanID, _, _ := strings.Cut(resp.TurnID, ":")
			internalID = schema.PromptTurnID(spanID)
		}
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return viewer.New(conn).Handler(), conn, internalID
}

// An internal turn stays in the audit trail (SQL, search) but out of the
// recent context, and out of the thread's page and turns API unless
// internal=1 asks for it.
func TestInternalTurns(t *testing.T) {
	h, conn, internalID := internalFixture(t)
	ctx := context.Background()

	var stored uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM conversations WHERE thread_id = 'th-int' AND internal = 1").Scan(&stored); err != nil || stored != 2 {
		t.Errorf("internal rows stored: %d (%v), want the internal call's prompt and response", stored, err)
	}

	msgs, err := store.RecentContext(ctx, conn, "th-int", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := "user:first public question\nassistant:first public answer\nuser:second public question\nassistant:second public answer\n"
	if got := contextLines(msgs); got != want {
		t.Errorf("RecentContext:\n got %s\nwant %s", got, want)
	}
	var api contextAnswer
	getJSON(t, h, "/api/threads/th-int/context", http.StatusOK, &api)
	if got := contextLines(api.Messages); got != want {
		t.Errorf("GET /api/threads/th-int/context:\n got %s\nwant %s", got, want)
	}

	for _, tc := range []struct {
		query         string
		shown         bool
		turns, marked int
	}{
		{"", false, 4, 0},
		{"?internal=0", false, 4, 0},
		{"?internal=1", true, 6, 2},
		{"?internal=1&role=prompt", true, 3, 1},
	} {
		var got turnsBody
		getJSON(t, h, "/api/threads/th-int/turns"+tc.query, http.StatusOK, &got)
		marked, hasInternal := 0, false
		for _, turn := range got.Turns {
			if turn.Internal {
				marked++
			}
			hasInternal = hasInternal || turn.TurnID == internalID
		}
		if len(got.Turns) != tc.turns || marked != tc.marked || hasInternal != tc.shown {
			t.Errorf("turns API %q: %d turns, %d internal, internal prompt shown %v; want %d, %d, %v", tc.query, len(got.Turns), marked, hasInternal, tc.turns, tc.marked, tc.shown)
		}
		page := get(t, h, "/threads/th-int"+tc.query)
		ids, bookkeeping := pageIDs(page.body), strings.Contains(page.body, "bookkeeping")
		if len(ids) != tc.turns || bookkeeping != tc.shown {
			t.Errorf("page %q: %d turns, bookkeeping shown %v; want %d, %v", tc.query, len(ids), bookkeeping, tc.turns, tc.shown)
		}
		// The phase chips count what the page can show: the internal
		// call's phase is listed, with its call only when it shows.
		chip := `value="review" checked> Review <span class="count" title="provider calls">0</span>`
		if tc.shown {
			chip = strings.Replace(chip, ">0<", ">1<", 1)
		}
		if !strings.Contains(page.body, chip) {
			t.Errorf("page %q: no chip %s", tc.query, chip)
		}
		checked := strings.Contains(page.body, `name="internal" value="1" checked`)
		if checked != tc.shown {
			t.Errorf("page %q: the show-internal box checked %v, want %v", tc.query, checked, tc.shown)
		}
		if tc.shown && !strings.Contains(article(t, page.body, internalID), `<span class="pill internal"`) {
			t.Errorf("page %q: the internal turn is not marked internal", tc.query)
		}
	}
	if res := get(t, h, "/api/threads/th-int/turns?internal=maybe"); res.status != http.StatusBadRequest || !strings.Contains(res.body, "internal") {
		t.Errorf("internal=maybe: %d %s, want 400 naming the parameter", res.status, res.body)
	}
	if md := get(t, h, "/api/threads/th-int/markdown"); strings.Contains(md.body, "bookkeeping") {
		t.Error("the thread's markdown holds the internal turn without internal=1")
	}
	if md := get(t, h, "/api/threads/th-int/markdown?internal=1"); !strings.Contains(md.body, "bookkeeping question") {
		t.Error("the thread's markdown lacks the internal turn with internal=1")
	}

	var found searchAnswer
	getJSON(t, h, "/api/search?q=bookkeeping", http.StatusOK, &found)
	if len(found.Results) != 2 || !found.Results[0].Internal || !strings.Contains(found.Results[0].URL, "?internal=1#") {
		t.Errorf("search for the internal turn: %+v, want both its turns, linked to the page that shows them", found.Results)
	}
}

// The thread page's show-internal box, in a real browser: unticked the
// internal call is hidden; ticking it shows it, marked.
func TestInternalToggleInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _, internalID := internalFixture(t)
	base := serve(t, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/th-int"), chromedp.WaitVisible(chromedp.CSS("article.turn"))); err != nil {
		t.Fatal(err)
	}
	count := `document.querySelectorAll("article.turn").length`
	if n := evalJS[int](ctx, t, count); n != 4 {
		t.Errorf("default view: %d turns, want the 4 public ones", n)
	}
	if evalJS[bool](ctx, t, `document.body.textContent.includes("bookkeeping")`) {
		t.Error("default view shows the internal call")
	}
	submitAndWait(ctx, t, chromedp.Click(chromedp.CSS(`input[name=internal]`))) // a box applies at once
	if n := evalJS[int](ctx, t, count); n != 6 {
		t.Errorf("with show internal: %d turns, want 6", n)
	}
	if !evalJS[bool](ctx, t, `location.search.includes("internal=1") && !!document.getElementById(`+strconv.Quote(internalID)+`).querySelector(".pill.internal")`) {
		t.Errorf("with show internal: the URL %q or the internal turn's mark is missing", evalJS[string](ctx, t, `location.href`))
	}
	if !evalJS[bool](ctx, t, `document.querySelector("input[name=internal]").checked`) {
		t.Error("the box is not ticked on the page it asked for")
	}
}
