package transfer

import (
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Each JSONL record is checked as untrusted input: the line, what the
// check says of it ("" when valid).
func TestDecodeAndValidate(t *testing.T) {
	const turn = `"turn_id":"s:prompt:0","thread_id":"t","span_id":"s","role":"prompt","start_ns":1777000000000000000`
	long := strings.Repeat("x", maxID+1)
	tests := []struct{ line, want string }{
		{`{"type":"turn","turn":{` + turn + `}}`, ""},
		{`{"type":"turn","turn":{` + turn + `,"cost_usd":0.5,"cost_source":"priced","tokens_in":3,"attributes":[{"key":"k","value":"v"}],"heartbeat_ns":1777000000000000001,"revision":2}}`, ""},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `"s:prompt:0"`, `""`, 1) + `}}`, "empty turn_id"},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `"thread_id":"t"`, `"thread_id":"`+long+`"`, 1) + `}}`, "thread_id longer than 1024 bytes"},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `"role":"prompt"`, `"role":""`, 1) + `}}`, "empty role"},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `"role":"prompt"`, `"role":"a\nb"`, 1) + `}}`, "role holds the control character U+000A"},
		// schema.CheckTime: the times OTLP ingest stores, no others.
		{`{"type":"turn","turn":{` + strings.Replace(turn, `1777000000000000000`, `0`, 1) + `}}`,
			"start_ns 0 (1970-01-01T00:00:00Z) is outside the times convtrace stores, 2000-01-01T00:00:00Z to 2106-02-07T06:28:15Z"},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `1777000000000000000`, `5000000000`, 1) + `}}`, "start_ns 5000000000 (1970-01-01T00:00:05Z) is outside"},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `1777000000000000000`, `7258118400000000000`, 1) + `}}`, "start_ns 7258118400000000000 (2200-01-01T00:00:00Z) is outside"},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `1777000000000000000`, `18000000000000000000`, 1) + `}}`, "start_ns 18000000000000000000"},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `1777000000000000000`, `946684800000000000`, 1) + `}}`, ""},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `1777000000000000000`, `4294967295000000000`, 1) + `}}`, ""},
		{`{"type":"turn","turn":{` + turn + `,"duration_ns":4000000000000000000}}`, ""},
		{`{"type":"turn","turn":{` + turn + `,"duration_ns":5000000000000000000}}`, "duration_ns over 136 years"},
		{`{"type":"turn","turn":{` + turn + `,"heartbeat_ns":7}}`, "heartbeat_ns 7 (1970-01-01T00:00:00.000000007Z) is outside"},
		{`{"type":"span","span":{"trace_id":"a","span_id":"b","start_ns":1777000000000000000,"event_names":["x"],"event_times_ns":[1]}}`, "event_times_ns 1 (1970"},
		{`{"type":"turn","turn":{` + strings.Replace(turn, `1777000000000000000`, `-1`, 1) + `}}`, "cannot unmarshal number -1"},
		{`{"type":"turn","turn":{` + turn + `,"tokens_in":5000000000}}`, "cannot unmarshal number 5000000000"},
		{`{"type":"turn","turn":{` + turn + `,"cost_usd":-1}}`, "cost_usd below zero"},
		{`{"type":"turn","turn":{` + turn + `,"cost_source":"guessed"}}`, `cost_source "guessed"`},
		{`{"type":"turn","turn":{` + turn + `,"history":["a"]}}`, `unknown field "history"`},
		{`{"type":"turn","turn":{` + turn + `},"note":{"thread_id":"t"}}`, `a turn record holds a "note" field`},
		{`{"type":"turn"}`, `a turn record without its "turn" field`},
		{`{"type":"header","schemaVersion":1}`, "a header record after the first line"},
		{`{"type":"span","span":{"trace_id":"a","span_id":"b","start_ns":1777000000000000000,"event_names":["x"],"event_times_ns":[]}}`, "event_names and event_times_ns differ in length"},
		{`{"type":"span","span":{"trace_id":"a","span_id":"b","start_ns":1777000000000000000}}`, ""},
		{`{"type":"span","span":{"trace_id":"","span_id":"b","start_ns":1777000000000000000}}`, "empty trace_id"},
		{`{"type":"note","note":{"thread_id":"t","turn_id":"u","starred":true,"memo":"m","updated_ns":5}}`, ""},
		{`{"type":"note","note":{"thread_id":"t","turn_id":"u","memo":"` + strings.Repeat("é", 8001) + `","updated_ns":5}}`, "memo over 8000 characters"},
		{`{"type":"note","note":{"thread_id":"t","turn_id":"u","updated_ns":0}}`, "updated_ns 0"},
		{`{"type":"thread","thread":{"id":"t","project":"p","title":"x","updated_ns":0}}`, "metadata (title, archived, starred) without its version"},
		{`{"type":"thread","thread":{"id":"t","project":"p","updated_ns":0}}`, ""},
		{`{"type":"thread","thread":{"id":"t"}} {}`, "more than one JSON value"},
		{`{"type":"thread","thread":{"id":"t"},"exportedAt":"now"}`, "a thread record holds exportedAt"},
	}
	for _, tt := range tests {
		rec, err := decodeLine([]byte(tt.line))
		if err == nil {
			err = validate(&rec)
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("line %.120s\n got %q\nwant %q", tt.line, got, tt.want)
		}
	}
}

// An export's format is told by its name, else by its first line, once
// decompressed.
func TestFormat(t *testing.T) {
	header := "{\"type\":\"header\",\"schemaVersion\":1,\"exportedAt\":\"x\"}\n{\"type\":\"thread\"}"
	tests := []struct {
		name, content string
		want          Format
	}{
		{"a.json", `{"type":"header","schemaVersion":1}`, JSON},
		{"a.JSONL", `{}`, JSONL},
		{"a.ndjson", `{}`, JSONL},
		{"a.jsonl.zst", zstdOf(t, `{}`), JSONL},
		{"-", header, JSONL},
		{"-", zstdOf(t, header), JSONL},
		{"-", `{"schemaVersion":1,"exportedAt":"x","threads":[]}`, JSON},
		{"-", "{\n  \"schemaVersion\": 1\n}", JSON},
		{"-", "", JSON},
	}
	for _, tt := range tests {
		src, err := newSource(strings.NewReader(tt.content), tt.name, 0)
		var got Format
		if err == nil {
			got, err = src.format()
		}
		if err != nil || got != tt.want {
			t.Errorf("format of %q, %.40q = %v, %v; want %v", tt.name, tt.content, got, err, tt.want)
		}
	}
}

func zstdOf(t *testing.T, s string) string {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(enc.EncodeAll([]byte(s), nil))
}
