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
		if w, ok := want[name]; ok && !reflect.DeepEqual(plain(cols[i]), w) {
			t.Errorf("column %s: %#v, want %#v", name, plain(cols[i]), w)
		}
	}
	if v := turns[0].Values(); len(v) != len(TurnColumns) || v[0] != "a" || v[len(v)-1] != uint64(13) {
		t.Errorf("Values: %v", v)
	}
}

// A reset block holds no row of before, and the rows added after it are
// stored as they are, arrays included, though the block reuses its memory.
func TestBlockReset(t *testing.T) {
	turns := []Turn{
		{TurnID: "a", Project: "p", History: []string{"h1"}, Attributes: []Attr{{"k1", "v1"}, {"k2", "v2"}}},
		{TurnID: "b", Project: "p", Attributes: []Attr{{"k3", "v3"}}},
	}
	var tb TurnBlock
	tb.Add(&turns[0])
	tb.Reset()
	tb.Add(&turns[1])
	oneRow(t, tb.Columns(), TurnColumns)
	if got := firstRow(tb.Columns()); !reflect.DeepEqual(got, turns[1].Values()) {
		t.Errorf("row after Reset: %v, want %v", got, turns[1].Values())
	}
	if tb.Bytes() != len("k3v3") {
		t.Errorf("Bytes after Reset: %d, want %d", tb.Bytes(), len("k3v3"))
	}

	spans := []Span{
		{SpanID: "a", Attributes: []Attr{{"k1", "v1"}}, EventNames: []string{"e"}, EventTimesNS: []uint64{1}},
		{SpanID: "b", Resource: []Attr{{"r", "s"}}},
	}
	var sb SpanBlock
	sb.Add(&spans[0])
	sb.Reset()
	sb.Add(&spans[1])
	oneRow(t, sb.Columns(), SpanColumns)
	want := map[string]any{"span_id": "b", "attributes.key": []string{}, "resource.key": []string{"r"},
		"resource.value": []string{"s"}, "events.name": []string{}, "events.time_ns": []uint64{}}
	for i, v := range spans[1].Values() {
		if w, ok := want[SpanColumns[i]]; ok && !reflect.DeepEqual(v, w) {
			t.Errorf("span column %s: %#v, want %#v", SpanColumns[i], v, w)
		}
	}
}

// oneRow checks that each of a block's columns holds one row.
func oneRow(t *testing.T, cols []any, names []string) {
	t.Helper()
	for i, col := range cols {
		if n := reflect.ValueOf(col).Len(); n != 1 {
			t.Errorf("column %s: %d rows after Reset and one Add, want 1", names[i], n)
		}
	}
}

// A value repeated within two rows is one pointer, so that a
// LowCardinality column sends it once; a value not seen in the two rows
// before is a pointer of its own.
func TestBlockSharesRuns(t *testing.T) {
	turns := []Turn{{Project: "p"}, {Project: "p"}, {Project: "q"}, {Project: "p"}, {Project: "r"}, {Project: "s"}, {Project: "p"}}
	var b TurnBlock
	for i := range turns {
		b.Add(&turns[i])
	}
	got := b.project
	if got[0] != got[1] || got[1] == got[2] || got[3] != got[1] || got[6] == got[3] {
		t.Errorf("project pointers %v: want rows 0, 1 and 3 shared, 2 and 6 not", got)
	}
	if p := plain(got); !reflect.DeepEqual(p, []string{"p", "p", "q", "p", "r", "s", "p"}) {
		t.Errorf("project column %v", p)
	}
}
