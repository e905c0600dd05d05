package store

import (
	"fmt"
	"testing"
)

// The detail pane's SQL on a modern server (chDB 26.x): a span's
// attributes, resource and events capped, with their counts, in the types
// ReadSpanAttributes scans, and whether its row carries the content marker;
// and a call's turns by span, with their cost source.
func TestDetailQueriesOnModernClickHouse(t *testing.T) {
	fixtures := []string{
		`INSERT INTO spans (trace_id, span_id, project, thread_id, name, start_ns, attributes.key, attributes.value, resource.key, resource.value, events.name, events.time_ns)
		 VALUES ('tr', 'a', 'p', 'th', 'chat', 1000, ['k1', 'k2', 'k3'], ['설정 파일', 'v2', 'v3'], ['service.name'], ['demo'], ['e1', 'e2', 'e3'], [1, 2, 3]),
		        ('tr', 'm', 'p', 'th', 'chat', 1000, ['k1', 'convtrace.content'], ['v1', 'turns'], [], [], [], [])`,
		`INSERT INTO conversations (turn_id, trace_id, span_id, project, thread_id, role, seq, content, tokens_in, cost_usd, cost_source, start_ns)
		 VALUES ('a:prompt:0', 'tr', 'a', 'p', 'th', 'prompt', 0, 'q', NULL, NULL, '', 1000),
		        ('a:response:1', 'tr', 'a', 'p', 'th', 'response', 1, 'r', 10, 0.5, 'priced', 2000),
		        ('b:prompt:0', 'tr', 'b', 'p', 'th', 'prompt', 0, 'other', NULL, NULL, '', 3000)`,
	}
	turns := turnsQuery("th", TurnFilter{SpanID: "a"}, 0, 10, 100)
	cappedSQL := func(spanID string) string {
		return inlineSQL(t, spanAttributes("tr", spanID, 2, 2))
	}
	queries := []string{
		cappedSQL("a"),
		inlineSQL(t, spanAttributes("tr", "a", allEntries, allEntries)),
		cappedSQL("nope"),
		inline(t, turns.text, turns.args...),
		cappedSQL("m"),
	}
	out := runModern(t, fixtures, queries)
	capped := out.Results[0].Rows
	if len(capped) != 1 || fmt.Sprint(capped[0]["attr_keys"]) != "[k1 k2]" || fmt.Sprint(capped[0]["attr_values"]) != "[설정 v2]" ||
		fmt.Sprint(capped[0]["attr_total"]) != "3" || fmt.Sprint(capped[0]["event_names"]) != "[e1 e2]" ||
		fmt.Sprint(capped[0]["event_times"]) != "[1 2]" || fmt.Sprint(capped[0]["events_total"]) != "3" || fmt.Sprint(capped[0]["res_total"]) != "1" ||
		fmt.Sprint(capped[0]["content_in_turns"]) != "0" {
		t.Errorf("capped span attributes: %v; want the first 2 of 3 attributes and events, values cut to 2 runes", capped)
	}
	types := map[string]string{}
	for _, c := range out.Results[0].Columns {
		types[c.Name] = c.Type
	}
	if types["attr_total"] != "UInt64" || types["event_times"] != "Array(UInt64)" || types["attr_values"] != "Array(String)" || types["content_in_turns"] != "UInt8" {
		t.Errorf("span attribute columns %v", types)
	}
	if all := out.Results[1].Rows; len(all) != 1 || fmt.Sprint(all[0]["attr_values"]) != "[설정 파일 v2 v3]" || fmt.Sprint(all[0]["event_names"]) != "[e1 e2 e3]" {
		t.Errorf("all span attributes: %v", all)
	}
	if none := out.Results[2].Rows; len(none) != 0 {
		t.Errorf("a span without a row: %v, want none", none)
	}
	var got []string
	for _, r := range out.Results[3].Rows {
		got = append(got, fmt.Sprint(r["turn_id"], "/", r["cost_source"]))
	}
	if fmt.Sprint(got) != "[a:response:1/priced a:prompt:0/]" {
		t.Errorf("turns of span a, newest first: %q, want its response (priced) and prompt only", got)
	}
	if m := out.Results[4].Rows; len(m) != 1 || fmt.Sprint(m[0]["content_in_turns"]) != "1" {
		t.Errorf("a span whose row carries the content marker: %v, want content_in_turns 1", m)
	}
}
