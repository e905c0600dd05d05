package genai

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Strings that exercise every escape rule: quotes, backslashes, each
// control character, HTML characters (kept as they are), the two line
// separators JavaScript cares about, invalid UTF-8 and the replacement
// character itself.
var trickyStrings = []string{
	"", "plain", `say "hi"`, `back\slash`, "a\nb\r\tc\b\f", "\x00\x01\x1f\x7f",
	"<b>&amp;</b>", "\u2028\u2029", "caf\xc3", "\xff\xfe", "\ufffd", "日本語 🙂",
	strings.Repeat("x", 300) + "\n",
}

// randomString mixes the tricky pieces with random bytes.
func randomString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(6) {
		if r.IntN(3) == 0 {
			b.WriteByte(byte(r.IntN(256)))
		} else {
			b.WriteString(trickyStrings[r.IntN(len(trickyStrings))])
		}
	}
	return b.String()
}

func TestAppendStringMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := append([]string{}, trickyStrings...)
	for range 5000 {
		cases = append(cases, randomString(r))
	}
	for _, s := range cases {
		if got, want := string(appendString(nil, s)), string(Marshal(s)); got != want {
			t.Fatalf("appendString(%q) = %s, Marshal = %s", s, got, want)
		}
	}
}

// The fast path gives what the general path gives, in both directions, on
// the stored shape written in every way JSON allows, and declines what it
// does not read.
func TestFastPathMatchesGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var inputs []string
	for range 2000 {
		var ms []Message
		for range 1 + r.IntN(3) {
			m := Message{Role: []string{"system", "user", "assistant", "tool", ""}[r.IntN(5)]}
			if r.IntN(3) == 0 {
				m.FinishReason = "stop"
			}
			m.Parts = []Part{}
			for range r.IntN(3) {
				m.Parts = append(m.Parts, Part{Type: []string{PartText, PartReasoning}[r.IntN(2)], Content: randomString(r)})
			}
			ms = append(ms, m)
		}
		stored := renderAny(ms)
		if got := Render(ms); got != stored {
			t.Fatalf("Render(%+v)\n got %s\nwant %s", ms, got, stored)
		}
		inputs = append(inputs, stored, respaced(stored, r), shuffled(ms, r))
	}
	inputs = append(inputs,
		`[]`, `[null]`, `[{}]`, `{"role":"user"}`, `[{"role":"user","parts":[]}] x`,
		`[{"role":"user","parts":[{"type":"text","content":"a"}],"role":"system"}]`,
		`[{"role":"user","parts":[{"type":"text","text":"a"}]}]`,
		`[{"role":"user","parts":[{"type":"text","content":"a","extra":1}]}]`,
		`[{"role":"user","parts":[{"type":"text","content":7}]}]`,
		`[{"role":"user","parts":[{"type":"tool_call","name":"f","arguments":{}}]}]`,
		`[{"role":"user","content":"hi"}]`,
		`[{"role":"user","parts":[{"type":"text","content":"\ud83d\ude42 \u00e9 \/ \u0000"}]}]`,
		`[{"r\u006fle":"user","parts":[{"type":"text","content":"a\u2028"}]}]`,
		"[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"bad \xff\"}]}]",
		`[{"role":"user","parts":[{"type":"text","content":"cut`,
	)
	fast := 0
	for _, in := range inputs {
		want, wantOK := parseAny(in)
		got, ok := parseTextMessages(in)
		if !ok {
			continue
		}
		fast++
		if !wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("fast path read %s\n as %+v (ok)\ngeneral: %+v (ok %v)", in, got, want, wantOK)
		}
		if Render(got) != Render(want) {
			t.Fatalf("fast render of %s differs from general", in)
		}
	}
	if fast < 6000 {
		t.Errorf("fast path took %d of %d inputs in the stored shape; want every one", fast, len(inputs))
	}
	for _, in := range []string{`[{"role":"user","parts":[{"type":"tool_call","name":"f","arguments":{}}]}]`, `[null]`, "[{\"role\":\"u\",\"parts\":[{\"type\":\"text\",\"content\":\"\xff\"}]}]"} {
		if _, ok := parseTextMessages(in); ok {
			t.Errorf("fast path took %s, which is the general path's", in)
		}
	}
}

// respaced adds insignificant space around the structure of stored JSON
// (never inside its strings).
func respaced(s string, r *rand.Rand) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		switch {
		case in && c == '\\':
			i++
			b.WriteByte(s[i])
		case c == '"':
			in = !in
		case !in && strings.IndexByte("[{,:", c) >= 0 && r.IntN(2) == 0:
			b.WriteString([]string{" ", "\n  ", "\t"}[r.IntN(3)])
		}
	}
	return b.String()
}

// shuffled writes ms with the keys of each object in a random order.
func shuffled(ms []Message, r *rand.Rand) string {
	object := func(fields []string) string {
		r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		return "{" + strings.Join(fields, ",") + "}"
	}
	str := func(s string) string { return string(appendString(nil, s)) }
	var msgs []string
	for _, m := range ms {
		var parts []string
		for _, p := range m.Parts {
			parts = append(parts, object([]string{`"type":` + str(p.Type), `"content":` + str(p.Content)}))
		}
		fields := []string{`"role":` + str(m.Role), `"parts":[` + strings.Join(parts, ",") + "]"}
		if m.FinishReason != "" {
			fields = append(fields, `"finish_reason":`+str(m.FinishReason))
		}
		msgs = append(msgs, object(fields))
	}
	return "[" + strings.Join(msgs, ",") + "]"
}

func BenchmarkParseRender(b *testing.B) {
	in := `[{"role":"system","parts":[{"type":"text","content":"You are a careful reviewer of Go code. Answer briefly."}]},{"role":"user","parts":[{"type":"text","content":"Review this change: the writer now acknowledges stored rows, sends at once after a quiet spell and at most once per interval under load."}]}]`
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			ms, _ := Parse(in)
			_ = Render(ms)
		}
	})
	b.Run("general", func(b *testing.B) {
		for b.Loop() {
			ms, _ := parseAny(in)
			_ = renderAny(ms)
		}
	})
}
