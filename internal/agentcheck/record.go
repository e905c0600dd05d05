package agentcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/convtrace/convtrace/internal/testkit"
)

// WriteFixtures writes the captured telemetry into dir as PREFIX.traces.json,
// PREFIX.logs.json and PREFIX.metrics.json, each signal's captured requests
// merged into one OTLP/JSON request (no file for an empty signal). A non-nil
// replace is applied to the JSON text, e.g. to swap a temporary home out.
func WriteFixtures(dir, prefix string, c *testkit.OTLPCapture, replace *strings.Replacer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range []struct {
		sig testkit.OTLPSignal
		msg proto.Message
		n   int
	}{
		{testkit.OTLPTraces, c.Traces(), len(c.Traces().GetResourceSpans())},
		{testkit.OTLPLogs, c.Logs(), len(c.Logs().GetResourceLogs())},
		{testkit.OTLPMetrics, c.Metrics(), len(c.Metrics().GetResourceMetrics())},
	} {
		if s.n == 0 {
			continue
		}
		b, err := testkit.MarshalOTLPJSON(s.msg)
		if err != nil {
			return err
		}
		if replace != nil {
			b = []byte(replace.Replace(string(b)))
		}
		name := filepath.Join(dir, fmt.Sprintf("%s.%s.json", prefix, s.sig))
		if err := os.WriteFile(name, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// DumpRun writes everything about one run into dir for inspection: the
// CLI's output, each provider request, each OTLP request as received and
// as OTLP/JSON, and the refused outside targets.
func DumpRun(dir string, res *RunResult, p *FakeProvider, c *testkit.OTLPCapture, proxy *BlackholeProxy) error {
	if err := os.MkdirAll(filepath.Join(dir, "otlp"), 0o755); err != nil {
		return err
	}
	write := func(name string, b []byte) error {
		return os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	if res != nil {
		if err := write("stdout.txt", res.Stdout); err != nil {
			return err
		}
		if err := write("stderr.txt", res.Stderr); err != nil {
			return err
		}
		meta, _ := json.MarshalIndent(map[string]any{
			"args": res.Args, "env": SortedEnv(res.Env), "exit_code": res.ExitCode,
			"duration": res.Duration.String(), "session_id": res.SessionID, "final_text": res.FinalText,
		}, "", "  ")
		if err := write("run.json", meta); err != nil {
			return err
		}
	}
	if p != nil {
		f, err := os.Create(filepath.Join(dir, "provider.jsonl"))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(f)
		for _, r := range p.Requests() {
			var body any
			if json.Unmarshal(r.Body, &body) != nil {
				body = string(r.Body)
			}
			_ = enc.Encode(map[string]any{
				"method": r.Method, "path": r.Path, "query": r.Query, "model": r.Model,
				"stream": r.Stream, "kind": r.Kind, "tools": r.Tools, "header": r.Header,
				"time": r.Time, "body": body,
			})
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if c != nil {
		for i, r := range c.Requests() {
			base := fmt.Sprintf("%03d.%s", i, r.Signal)
			if err := os.WriteFile(filepath.Join(dir, "otlp", base+".json"), r.JSON, 0o644); err != nil {
				return err
			}
			ext := "pb"
			if r.Encoding == "json" {
				ext = "raw.json"
			}
			if err := os.WriteFile(filepath.Join(dir, "otlp", base+"."+ext), r.Raw, 0o644); err != nil {
				return err
			}
		}
		errs, _ := json.MarshalIndent(c.Errors(), "", "  ")
		if err := write("otlp-errors.json", errs); err != nil {
			return err
		}
	}
	if proxy != nil {
		t, _ := json.MarshalIndent(proxy.Targets(), "", "  ")
		if err := write("outside-targets.json", t); err != nil {
			return err
		}
	}
	return nil
}
