package viewer_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/synth"
)

// listed is what the threads list says of a thread, as GET /api/threads
// returns it.
type listed struct {
	ID        string   `json:"thread_id"`
	Title     string   `json:"title"`
	Providers []string `json:"providers"`
	LastNS    uint64   `json:"last_ns"`
	Turns     uint64   `json:"turns"`
	TokensIn  *uint64  `json:"tokens_in"`
	TokensOut *uint64  `json:"tokens_out"`
	CostUSD   *float64 `json:"cost_usd"`
	Preview   string   `json:"preview"`
}

func (l listed) String() string {
	return fmt.Sprintf("turns=%d in=%s out=%s cost=%s last=%d providers=%v", l.Turns,
		optional(l.TokensIn), optional(l.TokensOut), optional(l.CostUSD), l.LastNS, l.Providers)
}

func optional[T any](v *T) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprint(*v)
}

// listThreads returns the threads that GET /api/threads + query lists, by id.
func listThreads(t *testing.T, h http.Handler, query string) map[string]listed {
	t.Helper()
	var body struct {
		Threads []listed `json:"threads"`
	}
	getJSON(t, h, "/api/threads?limit=200"+query, http.StatusOK, &body)
	byID := map[string]listed{}
	for _, th := range body.Threads {
		byID[th.ID] = th
	}
	return byID
}

// finalThreads computes per thread, directly from conversations FINAL, the
// numbers the list shows, over the turns that cond (SQL) keeps.
func finalThreads(t *testing.T, conn driver.Conn, cond string, args ...any) map[string]listed {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
SELECT thread_id, count(), sum(tokens_in), sum(tokens_out), sum(cost_usd), max(start_ns),
       arraySort(groupUniqArrayIf(provider, provider != ''))
FROM conversations FINAL
WHERE `+cond+`
GROUP BY thread_id`, args...)
	if err != nil {
		t.Fatalf("direct FINAL computation: %v", err)
	}
	defer rows.Close()
	byID := map[string]listed{}
	for rows.Next() {
		var l listed
		if err := rows.Scan(&l.ID, &l.Turns, &l.TokensIn, &l.TokensOut, &l.CostUSD, &l.LastNS, &l.Providers); err != nil {
			t.Fatalf("scan: %v", err)
		}
		byID[l.ID] = l
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return byID
}

// sameNumbers says whether the list's numbers are the direct ones. Costs
// are sums of floats, which an order of addition can change in the last
// bits: they compare within 1e-9 relative.
func sameNumbers(got, want listed) bool {
	costs := (got.CostUSD == nil) == (want.CostUSD == nil) &&
		(got.CostUSD == nil || math.Abs(*got.CostUSD-*want.CostUSD) <= 1e-9*math.Max(1, math.Abs(*want.CostUSD)))
	return got.Turns == want.Turns && optional(got.TokensIn) == optional(want.TokensIn) &&
		optional(got.TokensOut) == optional(want.TokensOut) && costs && got.LastNS == want.LastNS &&
		slices.Equal(got.Providers, want.Providers)
}

// The summaries the list reads equal a direct FINAL computation, for every
// thread of a synthetic database where a third of the turns were delivered
// twice, one thread spans two projects, and for each filter.
func TestThreadSummariesMatchFinal(t *testing.T) {
	h, conn := newServer(t)
	ctx := context.Background()
	if _, err := synth.Generate(ctx, conn, synth.Config{Turns: 4000, Threads: 60, Project: "synth"}); err != nil {
		t.Fatal(err)
	}
	cols := strings.Join(schema.TurnColumns, ", ")
	err := conn.Exec(ctx, "INSERT INTO conversations ("+cols+") SELECT "+cols+" FROM conversations WHERE cityHash64(turn_id) % 3 = 0")
	if err != nil {
		t.Fatal(err)
	}
	// A thread in two projects, and one with nothing but unknown sums.
	p1, r1 := call("split", "s1", "plan", 0, "planner", "openai", "gpt-5", 10, "첫 질문 🚀", "answer")
	r1.TokensIn, r1.CostUSD = u32(7), f64(0.125)
	p2, r2 := call("split", "s2", "plan", 0, "planner", "ollama", "llama", 20, "second", "later answer")
	p2.Project, r2.Project = "other", "other"
	r2.TokensOut = u32(3)
	p3, r3 := call("bare", "b1", "", 0, "cli", "", "", 30, "hello", "hi")
	testkit.InsertTurns(t, conn, p1, r1, p2, r2, p3, r3)
	testkit.InsertTurns(t, conn, r1, r2)

	for _, c := range []struct {
		query, cond string
		args        []any
	}{
		{"", "1", nil},
		{"&project=synth", "project = ?", []any{"synth"}},
		{"&project=other", "project = ?", []any{"other"}},
		{"&provider=ollama", "thread_id IN (SELECT thread_id FROM conversations WHERE provider = ?)", []any{"ollama"}},
		{"&provider=google&project=synth", "project = ? AND thread_id IN (SELECT thread_id FROM conversations WHERE provider = ?)", []any{"synth", "google"}},
	} {
		got, want := listThreads(t, h, c.query), finalThreads(t, conn, c.cond, c.args...)
		if len(got) != len(want) || len(want) == 0 {
			t.Errorf("list %q: %d threads, want %d (at least 1)", c.query, len(got), len(want))
		}
		for id, w := range want {
			if g, ok := got[id]; !ok || !sameNumbers(g, w) {
				t.Errorf("list %q, thread %s:\ngot  %v\nwant %v", c.query, id, g, w)
			}
		}
	}
	if split := listThreads(t, h, "")["split"]; split.Title != "첫 질문 🚀" || split.Preview != "later answer" {
		t.Errorf("split thread: title %q, preview %q; want the first prompt of one project, the last response of the other", split.Title, split.Preview)
	}
}

// A batch delivered again, then merged away, changes no number of the
// list; the copy's new part has the summary of its thread recomputed (its
// computed_ns moves) and not the other thread's, the merge neither; a new
// turn shows at once; a thread whose rows are dropped leaves the list.
func TestThreadSummaryRedelivery(t *testing.T) {
	h, conn := newServer(t)
	ctx := context.Background()
	p1, r1 := call("th-a", "a1", "plan", 0, "planner", "openai", "gpt-5", 10, "first prompt", "first answer")
	r1.TokensIn, r1.TokensOut, r1.CostUSD = u32(100), u32(20), f64(0.5)
	p2, r2 := call("th-b", "b1", "plan", 0, "planner", "anthropic", "claude", 20, "other prompt", "other answer")
	r2.TokensIn = u32(5)
	// th-old lives in March (partition 202603), a partition of its own,
	// which the test drops.
	p3, r3 := call("th-old", "c1", "plan", 0, "planner", "openai", "gpt-5", 0, "old prompt", "old answer")
	p3.StartNS, r3.StartNS = t0-40*24*uint64(time.Hour), t0-40*24*uint64(time.Hour)+1
	testkit.InsertTurns(t, conn, p1, r1, p2, r2, p3, r3)

	want := listThreads(t, h, "")
	before := testkit.SummaryVersions(t, conn)
	if a := want["th-a"]; a.Turns != 2 || optional(a.TokensIn) != "100" || optional(a.CostUSD) != "0.5" {
		t.Fatalf("th-a first listed as %v, want 2 turns, 100 tokens in, cost 0.5", a)
	}

	exec := func(sql string) {
		t.Helper()
		if err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	steps := []struct {
		name       string
		change     func()
		recomputed bool // th-a's summary
	}{
		// Merges stopped, so that no background merge folds the copy
		// before the list reads it.
		{"the batch delivered again", func() {
			exec("SYSTEM STOP MERGES conversations")
			testkit.InsertTurns(t, conn, p1, r1)
		}, true},
		{"OPTIMIZE TABLE conversations FINAL", func() {
			exec("SYSTEM START MERGES conversations")
			exec("OPTIMIZE TABLE conversations FINAL")
		}, false},
	}
	for _, s := range steps {
		s.change()
		got := listThreads(t, h, "")
		for id, w := range want {
			if g := got[id]; !sameNumbers(g, w) || g.Title != w.Title || g.Preview != w.Preview {
				t.Errorf("after %s, thread %s:\ngot  %v %q %q\nwant %v %q %q", s.name, id, g, g.Title, g.Preview, w, w.Title, w.Preview)
			}
		}
		after := testkit.SummaryVersions(t, conn)
		if (after["th-a"] > before["th-a"]) != s.recomputed || after["th-b"] != before["th-b"] {
			t.Errorf("after %s, computed_ns th-a %d -> %d, th-b %d -> %d; want th-a recomputed %v, th-b not",
				s.name, before["th-a"], after["th-a"], before["th-b"], after["th-b"], s.recomputed)
		}
		before = after
	}

	p4, r4 := call("th-a", "a2", "review", 0, "critic", "ollama", "llama", 30, "next prompt", "newest answer")
	r4.TokensIn = u32(1)
	testkit.InsertTurns(t, conn, p4, r4)
	a := listThreads(t, h, "")["th-a"]
	if a.Turns != 4 || optional(a.TokensIn) != "101" || a.LastNS != r4.StartNS || a.Preview != "newest answer" ||
		!slices.Equal(a.Providers, []string{"ollama", "openai"}) {
		t.Errorf("th-a after a new call = %v %q; want 4 turns, 101 tokens in, last at %d, providers [ollama openai], preview %q",
			a, a.Preview, r4.StartNS, "newest answer")
	}

	exec("ALTER TABLE conversations DROP PARTITION 202603")
	got := listThreads(t, h, "")
	if _, ok := got["th-old"]; ok || len(got) != 2 {
		t.Errorf("after dropping th-old's partition the list holds %v, want th-a and th-b", got)
	}
}

// Title search runs over the summaries' first prompts and the overrides:
// Korean and emoji, messages JSON, a renamed thread found by its new title
// and not by its prompt, and a copy of a thread's turns changing nothing.
func TestThreadSummaryTitleSearch(t *testing.T) {
	h, conn := newServer(t)
	p1, r1 := call("th-ko", "k1", "plan", 0, "planner", "openai", "gpt-5", 10, "데이터 파이프라인 점검", "ok")
	p2, r2 := call("th-emoji", "e1", "plan", 0, "planner", "openai", "gpt-5", 20, "Launch 🚀 checklist", "ok")
	p3, r3 := call("th-json", "j1", "plan", 0, "planner", "openai", "gpt-5", 30,
		`[{"role":"system","content":"You plan."},{"role":"user","content":"Fix the\nLOGIN bug"}]`, "ok")
	p4, r4 := call("th-renamed", "r1", "plan", 0, "planner", "openai", "gpt-5", 40, "original wording", "ok")
	testkit.InsertTurns(t, conn, p1, r1, p2, r2, p3, r3, p4, r4)
	testkit.InsertTurns(t, conn, p1, r1)
	insertMeta(t, conn, threadMeta{thread: "th-renamed", title: "새 이름 🎉", updatedNS: 1})

	for _, c := range []struct{ q, want string }{
		{"파이프라인", "th-ko"},
		{"🚀", "th-emoji"},
		{"fix the login", "th-json"},
		{"🎉", "th-renamed"},
		{"새 이름", "th-renamed"},
		{"original", ""},
		{"checklist", "th-emoji"},
	} {
		got := listThreads(t, h, "&q="+url.QueryEscape(c.q))
		var ids []string
		for id := range got {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if strings.Join(ids, ",") != c.want {
			t.Errorf("q=%q: got %v, want %q", c.q, ids, c.want)
		}
		if c.want == "th-ko" && got["th-ko"].Turns != 2 {
			t.Errorf("q=%q: th-ko has %d turns, want 2 (the copy counted once)", c.q, got["th-ko"].Turns)
		}
	}
}
