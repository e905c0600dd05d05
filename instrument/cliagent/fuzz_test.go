package cliagent

import (
	"bytes"
	"os"
	"testing"
)

func seedLines(f *testing.F, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		f.Add(l)
	}
}

// FuzzParseClaude checks that no line panics the parser and that an
// unparseable line is kept whole.
func FuzzParseClaude(f *testing.F) {
	seedLines(f, "testdata/claude.jsonl")
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, e := range parseClaude(line) {
			if e.Kind == KindUnknown && e.Content != string(bytes.TrimSpace(line)) {
				t.Errorf("unknown line %q kept as %q", line, e.Content)
			}
		}
	})
}

// FuzzParseCodex feeds each input as a sequence of lines to one parser.
func FuzzParseCodex(f *testing.F) {
	seedLines(f, "testdata/codex.jsonl")
	f.Fuzz(func(t *testing.T, in []byte) {
		p := newCodexParser()
		for _, l := range bytes.Split(in, []byte("\n")) {
			for _, e := range p.line(l) {
				if e.Kind == KindUnknown && e.Content != string(bytes.TrimSpace(l)) {
					t.Errorf("unknown line %q kept as %q", l, e.Content)
				}
			}
		}
	})
}
