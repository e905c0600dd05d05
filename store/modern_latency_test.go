package store

import (
	"fmt"
	"testing"
)

// The latency query runs on a modern server (chDB 26.x) too, returns the
// types the Go side scans and counts a call delivered twice once, read
// live or from its days' summaries (a call that began the day before, with
// an error turn then, folded across the two).
func TestLatencyQueryOnModernClickHouse(t *testing.T) {
	const cols = "INSERT INTO conversations (turn_id, trace_id, span_id, project, thread_id, model, role, seq, status, cost_source, start_ns, duration_ns, ttft_ns) VALUES "
	const day = uint64(86_400_000_000_000)
	rows := fmt.Sprintf(`('a:prompt:0', 't', 'a', 'p', 'th', 'gpt-5', 'prompt', 0, 'ok', '', 1000, 0, 0),
	      ('a:response:1', 't', 'a', 'p', 'th', 'gpt-5', 'response', 1, 'ok', 'none', 2000, 1000, 300),
	      ('b:error:1', 't', 'b', 'p', 'th', 'gpt-5', 'error', 1, 'error', 'none', 3000, 2000, 0),
	      ('c:response:1', 't', 'c', 'p', 'th', 'qwen', 'response', 1, 'ok', 'none', 4000, 500, 100),
	      ('f:error:1', 't', 'f', 'p', 'th', 'qwen', 'error', 1, 'error', '', %d, 0, 0),
	      ('f:response:2', 't', 'f', 'p', 'th', 'qwen', 'response', 2, 'ok', 'none', %d, 1000, 0)`, day-50, day+100)
	fixtures := []string{cols + rows, cols + rows}
	for _, insert := range latencyInserts([]uint32{0, 1}, 5) {
		fixtures = append(fixtures, inlineSQL(t, insert))
	}
	fixtures = append(fixtures, inline(t, insertLatencyStates, sqlArray([]uint32{0, 1}), uint64(5)))
	f := LatencyFilter{FromNS: 1, ToNS: 2 * day, Project: "p"}
	live := liveLatency(f)
	summarized := costPlan{project: "p", fromDay: 0, toDay: 2, versions: []string{"0/5", "1/5"}}
	var queries []string
	for _, p := range []costPlan{live, summarized} {
		queries = append(queries, inlineSQL(t, latencyQuery(p, f)))
	}
	out := runModern(t, fixtures, queries)
	want := "[all/ calls=4 failed=2 d=[1000 2000 2000] ttft(2)=[300 300 300] model/gpt-5 calls=2 failed=1 d=[2000 2000 2000] ttft(1)=[300 300 300] model/qwen calls=2 failed=1 d=[1000 1000 1000] ttft(1)=[100 100 100]]"
	wantTypes := map[string]string{"dimension": "String", "dim_key": "String", "calls": "UInt64", "failed": "UInt64",
		"duration_q": "Array(UInt64)", "ttft_calls": "UInt64", "ttft_q": "Array(UInt64)"}
	for i, name := range []string{"live", "summarized"} {
		for _, c := range out.Results[i].Columns {
			if want, ok := wantTypes[c.Name]; ok && c.Type != want {
				t.Errorf("%s: column %s is %s, want %s", name, c.Name, c.Type, want)
			}
		}
		var got []string
		for _, r := range out.Results[i].Rows {
			if r["dimension"] == "all" || r["dimension"] == "model" {
				got = append(got, fmt.Sprintf("%v/%v calls=%v failed=%v d=%v ttft(%v)=%v", r["dimension"], r["dim_key"], r["calls"], r["failed"], r["duration_q"], r["ttft_calls"], r["ttft_q"]))
			}
		}
		if fmt.Sprint(got) != want {
			t.Errorf("latency on a modern server, %s:\n got %s\nwant %s", name, got, want)
		}
	}
}
