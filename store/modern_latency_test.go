package store

import (
	"fmt"
	"testing"
)

// The latency query runs on a modern server (chDB 26.x) too, returns the
// types the Go side scans and counts a call delivered twice once.
func TestLatencyQueryOnModernClickHouse(t *testing.T) {
	const cols = "INSERT INTO conversations (turn_id, trace_id, span_id, project, thread_id, model, role, seq, status, cost_source, start_ns, duration_ns, ttft_ns) VALUES "
	rows := `('a:prompt:0', 't', 'a', 'p', 'th', 'gpt-5', 'prompt', 0, 'ok', '', 1000, 0, 0),
	      ('a:response:1', 't', 'a', 'p', 'th', 'gpt-5', 'response', 1, 'ok', 'none', 2000, 1000, 300),
	      ('b:error:1', 't', 'b', 'p', 'th', 'gpt-5', 'error', 1, 'error', 'none', 3000, 2000, 0),
	      ('c:response:1', 't', 'c', 'p', 'th', 'qwen', 'response', 1, 'ok', 'none', 4000, 500, 100)`
	f := LatencyFilter{FromNS: 1, ToNS: 10_000, Project: "p"}
	args := []any{uint64(0), uint64(1), f.FromNS, f.ToNS}
	for _, v := range []string{f.Project, "", "", "", ""} {
		args = append(args, v, v)
	}
	out := runModern(t, []string{cols + rows, cols + rows}, []string{inline(t, selectLatency, args...)})
	wantTypes := map[string]string{"dimension": "String", "dim_key": "String", "calls": "UInt64", "failed": "UInt64",
		"duration_q": "Array(UInt64)", "ttft_calls": "UInt64", "ttft_q": "Array(UInt64)"}
	for _, c := range out.Results[0].Columns {
		if want, ok := wantTypes[c.Name]; ok && c.Type != want {
			t.Errorf("column %s is %s, want %s", c.Name, c.Type, want)
		}
	}
	var got []string
	for _, r := range out.Results[0].Rows {
		if r["dimension"] == "all" || r["dimension"] == "model" {
			got = append(got, fmt.Sprintf("%v/%v calls=%v failed=%v d=%v ttft(%v)=%v", r["dimension"], r["dim_key"], r["calls"], r["failed"], r["duration_q"], r["ttft_calls"], r["ttft_q"]))
		}
	}
	want := "[all/ calls=3 failed=1 d=[1000 2000 2000] ttft(2)=[300 300 300] model/gpt-5 calls=2 failed=1 d=[2000 2000 2000] ttft(1)=[300 300 300] model/qwen calls=1 failed=0 d=[500 500 500] ttft(1)=[100 100 100]]"
	if fmt.Sprint(got) != want {
		t.Errorf("latency on a modern server:\n got %s\nwant %s", got, want)
	}
}
