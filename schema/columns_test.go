package schema

import (
	"reflect"
	"testing"
)

// A TurnBlock's columns are TurnColumns, in order, each a typed slice of
// the rows' values: a columnar insert stores what the row would.
func TestTurnBlockColumns(t *testing.T) {
	in, cost := uint32(7), 0.5
	turns := []Turn{
		{TurnID: "a", TraceID: "t", SpanID: "s", ParentSpanID: "p", ParentTurnID: "pt", Project: "pr", ThreadID: "th",
			SessionID: "se", Phase: "plan", Speaker: "sp", Agent: "ag", Round: 2, Role: RolePrompt, Seq: 3,
			Operation: "chat", Provider: "openai", Model: "m", ToolName: "tn", ToolCallID: "tc", Content: "c",
			History: []string{"h1", "h2"}, ContentBytes: 9, Truncated: true, Internal: true, TokensIn: &in,
			TokensReasoning: &in, CostUSD: &cost, Status: StatusOK, Error: "e", StartNS: 10, DurationNS: 11,
			HeartbeatNS: 12, Attributes: []Attr{{"k", "v"}}, Revision: 13},
		{TurnID: "b", Role: RoleResponse, TokensOut: &in},
	}
	var b TurnBlock
	for i := range turns {
		b.Add(&turns[i])
	}
	cols := b.Columns()
	if len(cols) != len(TurnColumns) || b.Len() != len(turns) {
		t.Fatalf("%d columns of %d rows, want %d of %d", len(cols), b.Len(), len(TurnColumns), len(turns))
	}
	want := map[string]any{
		"turn_id": []string{"a", "b"}, "parent_turn_id": []string{"pt", ""}, "project": []string{"pr", ""},
		"round": []uint16{2, 0}, "seq": []uint16{3, 0}, "tool_call_id": []string{"tc", ""},
		"content": []string{"c", ""}, "history": [][]string{{"h1", "h2"}, {}}, "content_bytes": []uint32{9, 0},
		"truncated": []uint8{1, 0}, "internal": []uint8{1, 0}, "tokens_in": []*uint32{&in, nil},
		"tokens_out": []*uint32{nil, &in}, "tokens_reasoning": []*uint32{&in, nil}, "cost_usd": []*float64{&cost, nil},
		"cost_source": []string{CostProvided, CostUnknown}, "status": []string{StatusOK, ""}, "error": []string{"e", ""},
		"start_ns": []uint64{10, 0}, "duration_ns": []uint64{11, 0}, "heartbeat_ns": []uint64{12, 0},
		"attributes.key": [][]string{{"k"}, {}}, "attributes.value": [][]string{{"v"}, {}}, "revision": []uint64{13, 0},
	}
	for i, name := range TurnColumns {
		if w, ok := want[name]; ok && !reflect.DeepEqual(cols[i], w) {
			t.Errorf("column %s: %#v, want %#v", name, cols[i], w)
		}
	}
	if v := turns[0].Values(); len(v) != len(TurnColumns) || v[0] != "a" || v[len(v)-1] != uint64(13) {
		t.Errorf("Values: %v", v)
	}
}
