package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The threads list's SQL on a modern server (chDB 26.x): every filter,
// both cursors, the texts of a page, the filter choices, and the
// thread_meta write, which must carry starred over and pass the newest
// updated_ns.
func TestThreadsQueriesOnModernClickHouse(t *testing.T) {
	const cols = "INSERT INTO conversations (turn_id, span_id, project, thread_id, role, seq, provider, content, tokens_in, tokens_out, cost_usd, status, start_ns) VALUES "
	fixtures := []string{
		cols + `('a:prompt:0', 'a', 'alpha', 'th1', 'prompt', 0, 'openai', '데이터 파이프라인 🚀', NULL, NULL, NULL, 'ok', 1000),
		      ('a:response:1', 'a', 'alpha', 'th1', 'response', 1, 'openai', 'answer\none', 10, 20, 0.5, 'ok', 2000),
		      ('b:prompt:0', 'b', 'alpha', 'th1', 'prompt', 0, 'anthropic', 'second prompt', NULL, NULL, NULL, 'ok', 3000),
		      ('c:prompt:0', 'c', 'beta', 'th2', 'prompt', 0, 'ollama', '[{"role":"user","content":"Fix the\\nLOGIN bug"}]', NULL, NULL, NULL, 'ok', 3000),
		      ('d:prompt:0', 'd', 'beta', 'th3', 'prompt', 0, 'openai', 'archived one', NULL, NULL, NULL, 'ok', 400),
		      ('e:prompt:0', 'e', 'gamma', 'th4', 'prompt', 0, 'openai', 'marked gone', NULL, NULL, NULL, 'ok', 100)`,
		// The same response delivered again, in a part of its own.
		cols + `('a:response:1', 'a', 'alpha', 'th1', 'response', 1, 'openai', 'answer\none', 10, 20, 0.5, 'ok', 2000)`,
		`INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns) VALUES ('th2', 'old', 0, 1, 1), ('th3', '', 1, 0, 1)`,
		// th2: renamed at a clock behind its newest row; th3: restored then
		// archived again; th1: archived, having no metadata yet.
		inlineSQL(t, ThreadChange{Title: ptr("Émoji 🎉 title")}.insert("th2", 0)),
		inlineSQL(t, ThreadChange{Archived: ptr(false)}.insert("th3", 50)),
		inlineSQL(t, ThreadChange{Archived: ptr(true)}.insert("th3", 50)),
		inlineSQL(t, ThreadChange{Archived: ptr(true)}.insert("th1", 60)),
		inlineSQL(t, ThreadChange{Archived: ptr(false)}.insert("th1", 70)),
		// The summaries the list reads; th3 marked gone, then recomputed:
		// the newest row wins.
		inlineSummaries(t, "alpha", []string{"th1"}, []uint64{4}, []uint64{7}),
		inlineSummaries(t, "beta", []string{"th2", "th3"}, []uint64{1, 1}, []uint64{8, 9}),
		inline(t, insertGone, uint64(0), "beta", sqlLiteral("('th3')")),
		inlineSummaries(t, "beta", []string{"th3"}, []uint64{1}, []uint64{9}),
		// th4 marked gone last: its older row must not come back, even
		// if a condition on turns were applied before taking the newest.
		inlineSummaries(t, "gamma", []string{"th4"}, []uint64{1}, []uint64{5}),
		inline(t, insertGone, uint64(0), "gamma", sqlLiteral("('th4')")),
	}
	type listCase struct {
		f    ThreadFilter
		want string
	}
	cases := []listCase{
		{ThreadFilter{}, "th1,th2"}, // tied at 3000: by id
		{ThreadFilter{Project: "alpha"}, "th1"},
		{ThreadFilter{Provider: "anthropic"}, "th1"},
		{ThreadFilter{Query: "파이프"}, "th1"},
		{ThreadFilter{Query: "🎉"}, "th2"},
		{ThreadFilter{Query: "émoji"}, "th2"},
		{ThreadFilter{Query: "login"}, ""}, // the override replaced the prompt
		{ThreadFilter{Archived: true}, "th3"},
		{ThreadFilter{Archived: true, Project: "beta", Provider: "openai", Query: "ARCHIVED"}, "th3"},
		{ThreadFilter{Before: &Cursor{LastNS: 3000, ID: "th1"}}, "th2"},
		{ThreadFilter{Before: &Cursor{LastNS: 3000, ID: "th0"}}, "th1,th2"},
		{ThreadFilter{After: &Cursor{LastNS: 3000, ID: "th2"}}, "th1"}, // oldest first
	}
	var queries []string
	for _, c := range cases {
		c.f.Limit = 10
		q, args := threadsQuery(c.f, 0)
		queries = append(queries, inline(t, q, args...))
	}
	queries = append(queries,
		inline(t, threadQuery, "th1", "th1"),
		// As clickhouse-go writes a clickhouse.GroupSet.
		inline(t, threadsOfIDs("IN ?"), sqlLiteral("('th1', 'th2')"), sqlLiteral("('th1', 'th2')"))+" ORDER BY thread_id",
		inline(t, threadsOfIDs("IN ?"), sqlLiteral("('th2')"), sqlLiteral("('th2')")),
		selectListChoices,
		`SELECT thread_id, title, archived, starred, updated_ns FROM thread_meta FINAL ORDER BY thread_id`,
		sqlf(selectFingerprints, holes{"cond": raw("1")}).text+" ORDER BY project, thread_id",
		selectSummaryFingerprints+" ORDER BY project, thread_id",
		selectListChoices,
		sqlf(selectTouchedThreads, holes{"table": raw("conversations"), "parts": raw(activeParts)}).text+" ORDER BY project, thread_id",
		summarizePlainThreads(raw("1")).text+" ORDER BY project, thread_id",
	)
	out := runModern(t, fixtures, queries)

	for i, c := range cases {
		var ids []string
		for _, r := range out.Results[i].Rows {
			ids = append(ids, fmt.Sprint(r["thread_id"]))
		}
		if got := strings.Join(ids, ","); got != c.want {
			t.Errorf("threads %+v = %q, want %q", c.f, got, c.want)
		}
	}
	// Types the Go side scans into: *uint64, *float64, []string, uint8.
	wantTypes := map[string]string{
		"thread_id": "String", "thread_project": "String", "thread_last_ns": "UInt64", "turn_count": "UInt64",
		"sum_in": "Nullable(UInt64)", "sum_out": "Nullable(UInt64)", "cost_total": "Nullable(Float64)",
		"meta_title": "String", "meta_archived": "UInt8",
	}
	for _, c := range out.Results[0].Columns {
		if want, ok := wantTypes[c.Name]; ok && c.Type != want {
			t.Errorf("threads column %s is %s, want %s", c.Name, c.Type, want)
		}
		if c.Name == "thread_providers" && !strings.HasPrefix(c.Type, "Array(") {
			t.Errorf("threads column thread_providers is %s, want an array", c.Type)
		}
	}
	if th2 := out.Results[0].Rows[1]; th2["sum_in"] != nil || th2["cost_total"] != nil || th2["meta_title"] != "Émoji 🎉 title" {
		t.Errorf("th2 = %v, want NULL sums and the new title", th2)
	}

	n := len(cases)
	if one := out.Results[n].Rows; len(one) != 1 || fmt.Sprint(one[0]["turn_count"]) != "3" ||
		fmt.Sprint(one[0]["sum_in"]) != "10" || fmt.Sprint(one[0]["cost_total"]) != "0.5" {
		t.Errorf("thread th1 = %v, want one row of 3 turns, 10 tokens in, cost 0.5 (the copy counted once)", one)
	}
	texts := out.Results[n+1].Rows
	if len(texts) != 2 || texts[0]["thread_first_prompt"] != "데이터 파이프라인 🚀" || texts[0]["thread_last_response"] != "answer\none" ||
		texts[0]["thread_last_turn"] != "second prompt" || texts[1]["thread_last_response"] != "" {
		t.Errorf("texts of th1, th2 = %v", texts)
	}
	if one := out.Results[n+2].Rows; len(one) != 1 || one[0]["thread_id"] != "th2" {
		t.Errorf("texts of th2 alone = %v", one)
	}
	choices := out.Results[n+3].Rows
	if len(choices) != 1 || fmt.Sprint(choices[0]["projects"]) == "[]" {
		t.Errorf("choices = %v, want the projects and providers", choices)
	}
	for _, c := range out.Results[n+3].Columns {
		if c.Type != "Array(String)" && c.Type != "Array(LowCardinality(String))" {
			t.Errorf("choices column %s is %s, want an array of strings", c.Name, c.Type)
		}
	}
	var metas []string
	for _, r := range out.Results[n+4].Rows {
		metas = append(metas, fmt.Sprintf("%v %q archived=%v starred=%v at %v", r["thread_id"], r["title"], r["archived"], r["starred"], r["updated_ns"]))
	}
	want := `th1 "" archived=0 starred=0 at 70,th2 "Émoji 🎉 title" archived=0 starred=1 at 2,th3 "" archived=1 starred=0 at 51`
	if got := strings.Join(metas, ","); got != want {
		t.Errorf("thread_meta after the changes:\n%s\nwant\n%s", got, want)
	}
	var fps []string
	for _, r := range out.Results[n+5].Rows {
		fps = append(fps, fmt.Sprintf("%v/%v n=%v", r["project"], r["thread_id"], r["n"]))
	}
	if got, want := strings.Join(fps, ","), "alpha/th1 n=4,beta/th2 n=1,beta/th3 n=1,gamma/th4 n=1"; got != want {
		t.Errorf("fingerprints = %s, want %s (the copy not folded)", got, want)
	}
	var stored []string
	for _, r := range out.Results[n+6].Rows {
		stored = append(stored, fmt.Sprintf("%v/%v n=%v h=%v turns=%v", r["project"], r["thread_id"], r["seen"], r["rows_hash"], r["turns"]))
	}
	if got, want := strings.Join(stored, ","), "alpha/th1 n=4 h=7 turns=3,beta/th2 n=1 h=8 turns=1,beta/th3 n=1 h=9 turns=1,gamma/th4 n=0 h=0 turns=0"; got != want {
		t.Errorf("stored fingerprints = %s, want %s", got, want)
	}
	// The list's choices come from the summaries of threads not gone.
	if lc := out.Results[n+7].Rows; len(lc) != 1 || !sameSet(lc[0]["projects"], "alpha", "beta") {
		t.Errorf("list choices = %v, want the projects alpha and beta (gamma's thread is gone)", lc)
	}
	// Every part is new to a summary that has read none.
	var touched []string
	for _, r := range out.Results[n+8].Rows {
		touched = append(touched, fmt.Sprintf("%v/%v", r["project"], r["thread_id"]))
	}
	if got, want := strings.Join(touched, ","), "alpha/th1,beta/th2,beta/th3,gamma/th4"; got != want {
		t.Errorf("threads of the parts = %s, want %s", got, want)
	}
	// Read as they are, the threads whose turns have no copy; th1's has.
	var plain []string
	for _, r := range out.Results[n+9].Rows {
		plain = append(plain, fmt.Sprintf("%v/%v turns=%v", r["project"], r["thread_id"], r["turns"]))
	}
	if got, want := strings.Join(plain, ","), "beta/th2 turns=1,beta/th3 turns=1,gamma/th4 turns=1"; got != want {
		t.Errorf("plain summaries = %s, want %s", got, want)
	}
}

// sameSet says whether v, a JSON array chDB returned, holds exactly want.
func sameSet(v any, want ...string) bool {
	got, ok := v.([]any)
	if !ok || len(got) != len(want) {
		return false
	}
	for _, g := range got {
		if !slices.Contains(want, fmt.Sprint(g)) {
			return false
		}
	}
	return true
}

// inlineSummaries is insertSummaries of the threads ids of project, with
// the fingerprints given, its arguments inlined as clickhouse-go binds
// them.
func inlineSummaries(t *testing.T, project string, ids []string, counts, hashes []uint64) string {
	t.Helper()
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = quoteString(id)
	}
	tuple := sqlLiteral("(" + strings.Join(quoted, ", ") + ")")
	q := sqlf(insertSummaries, holes{"computed": arg(uint64(0)), "counts": arg(sqlArray(counts)), "hashes": arg(sqlArray(hashes)),
		"ids": arg(sqlArray(ids)), "summaries": summarizeThreads(sqlf(threadsOf, holes{"project": arg(project), "ids": arg(tuple)}))})
	return inline(t, q.text, q.args...)
}
