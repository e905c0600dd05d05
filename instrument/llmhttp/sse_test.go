package llmhttp

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

func TestSSEParser(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // event name + "|" + data
	}{
		{"basic", "event: a\ndata: 1\n\ndata: 2\n\n", []string{"a|1", "|2"}},
		{"crlf and multi-line data", "data: x\r\ndata:y\r\n\r\n", []string{"|x\ny"}},
		{"comment and unknown field", ": ping\nid: 7\nretry: 10\ndata: z\n\n", []string{"|z"}},
		{"no final blank line", "data: last", []string{"|last"}},
		{"no data", "event: e\n\n", nil},
	}
	for _, tt := range tests {
		// Feed byte by byte too: events split across reads must come out whole.
		for _, step := range []int{len(tt.in) + 1, 1} {
			var got []string
			p := sseParser{emit: func(ev string, data []byte) { got = append(got, ev+"|"+string(data)) }}
			for in := []byte(tt.in); len(in) > 0; {
				n := min(step, len(in))
				p.write(in[:n])
				in = in[n:]
			}
			p.flush()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s (step %d): input %q\n got  %q\n want %q", tt.name, step, tt.in, got, tt.want)
			}
		}
	}
}

// FuzzSSE feeds arbitrary streams, split at arbitrary points, to the parser
// and each API's event reader: none may panic, and the split must not
// change the events.
func FuzzSSE(f *testing.F) {
	for _, name := range []string{"openai_chat_stream.sse", "openai_chat_stream_tool.sse", "anthropic_stream.sse"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint(len(b)/3))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint) {
		run := func(parts ...[]byte) [][]byte {
			var events [][]byte
			var a [3]answer
			p := sseParser{emit: func(ev string, data []byte) {
				events = append(events, append([]byte(ev+"|"), data...))
				a[0].chatChunk(data)
				a[1].anthropicEvent(data)
				a[2].responsesEvent(data)
			}}
			for _, part := range parts {
				p.write(part)
			}
			p.flush()
			for i := range a {
				_ = a[i].response()
			}
			return events
		}
		c := int(cut % uint(len(in)+1))
		whole, split := run(in), run(in[:c], in[c:])
		if len(whole) != len(split) {
			t.Fatalf("%d events whole, %d split at %d", len(whole), len(split), c)
		}
		for i := range whole {
			if !bytes.Equal(whole[i], split[i]) {
				t.Fatalf("event %d: %q whole, %q split", i, whole[i], split[i])
			}
		}
	})
}
