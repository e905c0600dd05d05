package collector

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/collector/otlpwire"
	"github.com/convtrace/convtrace/schema"
)

// Fixtures under testdata/<convention>/ are OTLP/JSON requests written from
// each convention's published specification: NAME.traces.json (an
// ExportTraceServiceRequest) and/or NAME.logs.json (an
// ExportLogsServiceRequest), with NAME.turns.json the turns they must map
// to. `go test -run Fixture -update` rewrites the expected turns; review the
// diff before keeping it.
var update = flag.Bool("update", false, "rewrite testdata/*/*.turns.json from the current mapping")

// goldenTurn is the part of a turn the fixtures pin down.
type goldenTurn struct {
	TurnID           string  `json:"turn_id"`
	Role             string  `json:"role"`
	Seq              uint16  `json:"seq"`
	Content          string  `json:"content"`
	Operation        string  `json:"operation,omitempty"`
	Provider         string  `json:"provider,omitempty"`
	Model            string  `json:"model,omitempty"`
	TokensIn         *uint32 `json:"tokens_in,omitempty"`
	TokensOut        *uint32 `json:"tokens_out,omitempty"`
	TokensCacheRead  *uint32 `json:"tokens_cache_read,omitempty"`
	TokensCacheWrite *uint32 `json:"tokens_cache_write,omitempty"`
	TokensReasoning  *uint32 `json:"tokens_reasoning,omitempty"`
	ToolName         string  `json:"tool_name,omitempty"`
	ToolCallID       string  `json:"tool_call_id,omitempty"`
	ThreadID         string  `json:"thread_id"`
	Project          string  `json:"project"`
	Phase            string  `json:"phase,omitempty"`
	Status           string  `json:"status"`
	Error            string  `json:"error,omitempty"`
}

func goldenOf(turns []schema.Turn) []goldenTurn {
	g := make([]goldenTurn, 0, len(turns))
	for _, t := range turns {
		g = append(g, goldenTurn{
			TurnID: t.TurnID, Role: t.Role, Seq: t.Seq, Content: t.Content,
			Operation: t.Operation, Provider: t.Provider, Model: t.Model,
			TokensIn: t.TokensIn, TokensOut: t.TokensOut, TokensCacheRead: t.TokensCacheRead,
			TokensCacheWrite: t.TokensCacheWrite, TokensReasoning: t.TokensReasoning,
			ToolName: t.ToolName, ToolCallID: t.ToolCallID, ThreadID: t.ThreadID, Project: t.Project,
			Phase: t.Phase, Status: t.Status, Error: t.Error,
		})
	}
	return g
}

func TestFixtures(t *testing.T) {
	goldens, err := filepath.Glob("testdata/*/*.turns.json")
	if err != nil {
		t.Fatal(err)
	}
	if names := fixtureNames(t); *update {
		goldens = names
	} else if len(names) != len(goldens) {
		t.Errorf("fixtures %v, expected turns %v: every fixture needs its NAME.turns.json (run with -update)", names, goldens)
	}
	if len(goldens) == 0 {
		t.Fatal("no fixtures under testdata")
	}
	for _, golden := range goldens {
		base := strings.TrimSuffix(golden, ".turns.json")
		t.Run(strings.TrimPrefix(base, "testdata/"), func(t *testing.T) {
			got := marshalGolden(t, goldenOf(fixtureTurns(t, base)))
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("fixture %s:\n got %s\nwant %s", base, got, want)
			}
		})
	}
}

// fixtureNames lists the NAME.turns.json every fixture should have.
func fixtureNames(t *testing.T) []string {
	inputs, err := filepath.Glob("testdata/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var names []string
	for _, in := range inputs {
		for _, suffix := range []string{".traces.json", ".logs.json"} {
			if base, ok := strings.CutSuffix(in, suffix); ok && !seen[base] {
				seen[base] = true
				names = append(names, base+".turns.json")
			}
		}
	}
	return names
}

// marshalGolden writes a golden file's JSON: indented, HTML not escaped.
func marshalGolden(t *testing.T, g any) []byte {
	t.Helper()
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fixtureTurns decodes a fixture's requests and maps them.
func fixtureTurns(t *testing.T, base string) []schema.Turn {
	t.Helper()
	spans, logs := readFixture(t, base)
	return joinAndMap(t, spans, logs)
}

func readFixture(t *testing.T, base string) ([]mapping.Span, []mapping.LogRecord) {
	t.Helper()
	var (
		spans []mapping.Span
		logs  []mapping.LogRecord
	)
	if data, err := os.ReadFile(base + ".traces.json"); err == nil {
		var req coltracepb.ExportTraceServiceRequest
		if err := otlpwire.DecodeJSON(data, &req); err != nil {
			t.Fatalf("%s.traces.json: %v", base, err)
		}
		spans = spansFromOTLP(req.GetResourceSpans())
	}
	if data, err := os.ReadFile(base + ".logs.json"); err == nil {
		var req collogspb.ExportLogsServiceRequest
		if err := otlpwire.DecodeJSON(data, &req); err != nil {
			t.Fatalf("%s.logs.json: %v", base, err)
		}
		logs = logsFromOTLP(req.GetResourceLogs())
	}
	if spans == nil && logs == nil {
		t.Fatalf("fixture %s has neither .traces.json nor .logs.json", base)
	}
	return spans, logs
}

// joinAndMap does what the collector's join does, without its window:
// each span gets the log records that name it, and records whose span is
// absent are mapped on their own.
func joinAndMap(t *testing.T, spans []mapping.Span, logs []mapping.LogRecord) []schema.Turn {
	t.Helper()
	mapping.FoldCalls(spans)
	byID := map[string][]mapping.LogRecord{}
	var order []string
	for _, l := range logs {
		k := l.TraceID + "/" + l.SpanID
		if _, ok := byID[k]; !ok {
			order = append(order, k)
		}
		byID[k] = append(byID[k], l)
	}
	var turns []schema.Turn
	for _, s := range spans {
		k := s.TraceID + "/" + s.SpanID
		if ls, ok := byID[k]; ok {
			if !mapping.NeedsLogs(s) {
				t.Errorf("span %s %q has log records but needsLogs says it does not need them", s.SpanID, s.Name)
			}
			s.AttachLogs(ls)
			delete(byID, k)
		}
		turns = append(turns, mapping.Turns(s)...)
	}
	for _, k := range order {
		if ls, ok := byID[k]; ok {
			turns = append(turns, mapping.Turns(mapping.SpanFromLogs(ls))...)
		}
	}
	return turns
}

// The same call recorded as span attributes, as an inference details log
// record and as deprecated per-message log records maps to the same turns.
func TestConventionGenAIFormsAgree(t *testing.T) {
	forms := []string{"chat_span_attributes", "chat_log_details", "chat_log_events"}
	var want []byte
	for i, name := range forms {
		turns := fixtureTurns(t, "testdata/genai/"+name)
		if len(turns) != 2 {
			t.Fatalf("%s: got %d turns, want 2: %+v", name, len(turns), turns)
		}
		for j := range turns {
			turns[j].Attributes = nil // the forms differ in the attributes the mapping does not read
		}
		got, err := json.MarshalIndent(turns, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = got
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s maps differently from %s:\n got %s\nwant %s", name, forms[0], got, want)
		}
	}
}
