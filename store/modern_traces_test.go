package store

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The trace, search and context SQL on a modern server (chDB 26.x), as
// TestThreadQueriesOnModernClickHouse runs the thread page's SQL: same
// columns, types the Go code scans into, a duplicate delivery counted once.
func TestTraceSearchContextQueriesOnModernClickHouse(t *testing.T) {
	const turns = "INSERT INTO conversations (turn_id, trace_id, span_id, parent_span_id, project, thread_id, speaker, role, seq, model, content, tokens_in, tokens_out, cost_usd, status, start_ns, duration_ns) VALUES "
	const spans = "INSERT INTO spans (trace_id, span_id, parent_span_id, project, thread_id, name, start_ns, duration_ns, status, status_message, model, tokens_in, tokens_out, cost_usd) VALUES "
	fixtures := []string{
		spans + `('tr', 'root', '', 'p', 'th1', 'pipeline', 1000, 9000, 'ok', '', '', NULL, NULL, NULL),
		       ('tr', 'a', 'root', 'p', 'th1', 'chat gpt', 2000, 1000, 'ok', '', 'gpt', 10, 20, 0.5)`,
		spans + `('tr', 'a', 'root', 'p', 'th1', 'chat gpt', 2000, 1000, 'ok', '', 'gpt', 10, 20, 0.5)`,
		turns + `('a:prompt:0', 'tr', 'a', 'root', 'p', 'th1', 'Planner', 'prompt', 0, 'gpt', 'Hello 설정 파일 world', NULL, NULL, NULL, 'ok', 2000, 0),
		       ('a:response:1', 'tr', 'a', 'root', 'p', 'th1', 'Planner', 'response', 1, 'gpt', 'answer 🎉', 10, 20, 0.5, 'ok', 3000, 1000),
		       ('b:prompt:0', 'tr', 'b', 'root', 'q', 'th2', 'Critic', 'prompt', 0, 'gpt', 'still running 설정', NULL, NULL, NULL, 'ok', 5000, 0),
		       ('c:prompt:0', 'tr2', 'c', '', 'r', 'th3', 'Writer', 'prompt', 0, 'gpt', '100%_off or 100 percent, a\\b not axb', NULL, NULL, NULL, 'ok', 6000, 0)`,
		turns + `('a:response:1', 'tr', 'a', 'root', 'p', 'th1', 'Planner', 'response', 1, 'gpt', 'answer 🎉', 10, 20, 0.5, 'ok', 3000, 1000)`,
		// Four granules of other text, for the indexes to skip.
		`INSERT INTO conversations (turn_id, project, thread_id, speaker, role, content, start_ns)
		 SELECT concat('n', toString(number)), 'r', 'th9', 'Filler', 'prompt', concat('ordinary words ', toString(number)), 7000 + number
		 FROM numbers(4096)`,
		// A heartbeat refresh of b's prompt.
		`INSERT INTO conversations (turn_id, trace_id, span_id, parent_span_id, project, thread_id, speaker, role, model, content, status, start_ns, heartbeat_ns)
		 VALUES ('b:prompt:0', 'tr', 'b', 'root', 'q', 'th2', 'Critic', 'prompt', 'gpt', 'still running 설정', 'ok', 5000, 8000)`,
		`INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns) VALUES ('th1', 'My thread', 0, 0, 1)`,
		// The summaries the search results' titles come from.
		inlineSummaries(t, "p", []string{"th1"}, []uint64{0}, []uint64{0}),
		inlineSummaries(t, "q", []string{"th2"}, []uint64{0}, []uint64{0}),
	}
	q := "설정"
	filteredKeys, filteredArgs := searchKeysQuery(SearchFilter{Q: q, Project: "p",
		TurnFilter: TurnFilter{Role: "prompt", FromNS: 1, ToNS: 10000}, After: &SearchCursor{StartNS: 10000, TurnID: "z"}},
		searchMonthsUpTo, searchMatch, 0, 197001)
	window := uint64(aroundBytesBefore + len(q) + aroundBytesAfter)
	queries := []string{
		inlineSQL(t, ofTrace(selectTraceSpans, "tr")),
		inlineSQL(t, traceCalls("tr", 6000)),
		inlineSQL(t, spanTurns("tr", "a")),
		// The snippets of the keys the query below finds.
		inline(t, fmt.Sprintf(selectSearchHits, searchMatchAt), q, uint64(aroundBytesBefore), window, uint64(searchTextBytes), sqlLiteral("('p', 'th1', 2000, 'a:prompt:0')")),
		// Keys of the month of ts 0, the fixtures', by speaker: the
		// response delivered twice is one key once folded in Go.
		inline(t, fmt.Sprintf(selectSearchKeys, searchMonthIs, searchMatch)+searchNewer+searchOldestFirst, uint32(197001), "PLANNER", "PLANNER",
			uint64(0), uint64(0), "", uint64(101)),
		inline(t, threadsOfIDs("IN ?"), sqlLiteral("('th1', 'th2')"), sqlLiteral("('th1', 'th2')")) + " ORDER BY thread_id",
		inlineSQL(t, contextQuery("th1", &contextCursor{StartNS: 9000}, 12)),
		inlineSQL(t, sqlf(selectThreadExists, holes{"thread": arg("th1")})),
		inlineSQL(t, sqlf(selectThreadExists, holes{"thread": arg("nope")})),
		inlineSQL(t, traceCalls("tr", 9000)),
		inline(t, filteredKeys, append(append([]any{uint32(197001)}, filteredArgs...), uint64(101))...),
	}
	// The same searches in the shape the search indexes serve, which this
	// server has (ddl/sql/0016_search_indexes.sql), and one for LIKE's own
	// wildcards: each finds what the plain match finds.
	// Unescaped, "1%0" and "a_b" would match "100%_off" and "axb".
	searches := []struct {
		q     string
		found bool
	}{{"PLANNER", true}, {q, true}, {"100%_", true}, {"a\\b", true}, {"1%0", false}, {"a_b", false}}
	for _, c := range searches {
		q := c.q
		for _, match := range []string{searchMatch, searchMatchIndexed} {
			queries = append(queries, inline(t, fmt.Sprintf(selectSearchKeys, searchMonthsUpTo, match)+searchNewestFirst,
				uint32(197001), q, q, uint64(101)))
		}
	}
	queries = append(queries, inline(t, selectSearchIndexes, "conversations"),
		"EXPLAIN indexes = 1 "+inline(t, fmt.Sprintf(selectSearchKeys, searchMonthsUpTo, searchMatchIndexed)+searchNewestFirst,
			uint32(197001), "100%_OFF", "100%_OFF", uint64(101)))
	out := runModern(t, fixtures, queries)
	rows := func(i int) string {
		var b strings.Builder
		for _, r := range out.Results[i].Rows {
			fmt.Fprintln(&b, r)
		}
		return b.String()
	}
	types := func(i int) map[string]string {
		m := map[string]string{}
		for _, c := range out.Results[i].Columns {
			m[c.Name] = c.Type
		}
		return m
	}

	if got := out.Results[0].Rows; len(got) != 2 || got[0]["span_id"] != "root" || got[1]["span_id"] != "a" {
		t.Errorf("trace spans:\n%s\nwant root, a once", rows(0))
	}
	if ty := types(0); ty["tokens_in"] != "Nullable(UInt32)" || ty["cost_usd"] != "Nullable(Float64)" || ty["duration_ns"] != "UInt64" {
		t.Errorf("trace span columns %v", ty)
	}

	calls := map[string]map[string]any{}
	for _, r := range out.Results[1].Rows {
		calls[fmt.Sprint(r["span_id"])] = r
	}
	if a := calls["a"]; len(calls) != 2 || fmt.Sprint(a["call_turns"]) != "2" || fmt.Sprint(a["call_in"]) != "10" ||
		fmt.Sprint(a["call_ended"]) != "1" || fmt.Sprint(calls["b"]["call_ended"]) != "0" || calls["b"]["call_in"] != nil ||
		fmt.Sprint(calls["b"]["call_turns"]) != "1" || fmt.Sprint(calls["b"]["call_alive"]) != "1" {
		t.Errorf("trace calls:\n%s\nwant a with 2 turns, 10 tokens in, ended; b one turn, running (heartbeat 8000 ≥ 6000) with unknown usage", rows(1))
	}
	bAlive := "missing"
	for _, r := range out.Results[9].Rows {
		if r["span_id"] == "b" {
			bAlive = fmt.Sprint(r["call_alive"])
		}
	}
	if bAlive != "0" {
		t.Errorf("trace calls with cutoff 9000:\n%s\nwant b no longer alive: interrupted", rows(9))
	}
	wantCall := map[string]string{"call_start": "UInt64", "call_end": "UInt64", "call_turns": "UInt64", "call_in": "Nullable(UInt64)",
		"call_out": "Nullable(UInt64)", "call_cost": "Nullable(Float64)", "call_ended": "UInt8", "call_failed": "UInt8", "call_alive": "UInt8", "call_round": "UInt16"}
	for name, ty := range types(1) {
		if want, ok := wantCall[name]; ok && ty != want {
			t.Errorf("trace calls column %s is %s, want %s", name, ty, want)
		}
	}

	if got := out.Results[2].Rows; len(got) != 2 || got[0]["content_head"] != "Hello 설정 파일 world" || fmt.Sprint(got[0]["content_cut"]) != "0" {
		t.Errorf("span turns:\n%s\nwant the prompt and the response once, uncut", rows(2))
	}

	if got := out.Results[3].Rows; len(got) != 1 || got[0]["turn_id"] != "a:prompt:0" || got[0]["around"] != "Hello 설정 파일 world" ||
		fmt.Sprint(got[0]["around_from"]) != "1" || fmt.Sprint(got[0]["cut_after"]) != "0" {
		t.Errorf("search 설정 in p, prompts:\n%s\nwant a:prompt:0 with its whole content", rows(3))
	}
	if ty := types(3); ty["around_from"] != "UInt64" || ty["cut_after"] != "UInt8" || ty["match_byte"] != "UInt64" {
		t.Errorf("search columns %v", ty)
	}
	var ids []string
	for _, r := range out.Results[4].Rows {
		ids = append(ids, fmt.Sprint(r["turn_id"]))
	}
	if strings.Join(ids, ",") != "a:prompt:0,a:response:1,a:response:1" {
		t.Errorf("search keys of PLANNER by speaker, oldest first = %q, want a:prompt:0,a:response:1 (twice: a copy)", ids)
	}
	if ty := types(4); ty["start_ns"] != "UInt64" || ty["turn_id"] != "String" {
		t.Errorf("search key columns %v", ty)
	}

	if got := out.Results[5].Rows; len(got) != 2 || got[0]["meta_title"] != "My thread" || got[1]["meta_title"] != "" ||
		got[1]["thread_first_prompt"] != "still running 설정" {
		t.Errorf("the search results' threads:\n%s\nwant th1 with its title, th2 with its first prompt", rows(5))
	}
	ids = nil
	for _, r := range out.Results[6].Rows {
		ids = append(ids, fmt.Sprint(r["turn_id"]))
	}
	if strings.Join(ids, ",") != "a:response:1,a:prompt:0" {
		t.Errorf("context turns of th1 = %q, want a:response:1,a:prompt:0", ids)
	}
	if ty := types(6); ty["seq"] != "UInt16" || ty["start_ns"] != "UInt64" {
		t.Errorf("context columns %v", ty)
	}
	if got := out.Results[10].Rows; len(got) != 1 || got[0]["turn_id"] != "a:prompt:0" {
		t.Errorf("search keys of 설정 in p, prompts, in range, older than the cursor:\n%s\nwant a:prompt:0", rows(10))
	}
	n := len(out.Results)
	if got := out.Results[n-2].Rows; fmt.Sprint(got[0]["count()"]) != "2" {
		t.Errorf("search indexes on the modern server: %v, want both", got)
	}
	// The plan: after the indexes, fewer granules than the table has.
	plan, combined := rows(n-1), regexp.MustCompile(`(?s)Combined skip indexes.*?Granules: (\d+)/(\d+)`)
	if m := combined.FindStringSubmatch(plan); m == nil || m[1] == m[2] {
		t.Errorf("a rare phrase's search skips no granule:\n%s", plan)
	}
	for j, c := range searches {
		if plain, indexed := rows(11+2*j), rows(12+2*j); plain != indexed || (plain != "") != c.found {
			t.Errorf("search keys of %q, plain match:\n%s\nindexed match:\n%s\nwant the same, found %v", c.q, plain, indexed, c.found)
		}
	}
	if a, b := rows(7), rows(8); a != "map[found:1]\n" || b != "map[found:0]\n" {
		t.Errorf("thread exists: th1 %q, nope %q; want found 1 and 0", a, b)
	}
	if ty := types(7); ty["found"] != "UInt64" {
		t.Errorf("thread exists column found is %s, want UInt64", ty["found"])
	}
}
