package frameworks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/convtrace/convtrace/collector/otlpwire"
	"github.com/convtrace/convtrace/internal/testkit"
)

// CaptureEnv makes TestCapture rewrite the captured fixtures.
const CaptureEnv = "CONVTRACE_FRAMEWORKS_CAPTURE"

// RequireEnv turns a missing node_modules from a skip into a failure.
const RequireEnv = "CONVTRACE_REQUIRE_FRAMEWORKS"

// fixtureDir is where the captured requests go.
func fixtureDir() string {
	return filepath.Join(Dir(), "..", "..", "collector", "testdata", "recorded", "frameworks")
}

// requireNode skips t when the Node packages are not installed, or fails it
// under CONVTRACE_REQUIRE_FRAMEWORKS=1.
func requireNode(t *testing.T) {
	t.Helper()
	if Installed() {
		return
	}
	msg := fmt.Sprintf("the framework sources need their Node packages: run `npm ci` in %s", Dir())
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s (%s=1)", msg, RequireEnv)
	}
	t.Skipf("skipping: %s (set %s=1 to fail instead)", msg, RequireEnv)
}

// TestCapture runs every source against the fake provider and a capture
// server, and writes what each sent to collector/testdata/recorded/frameworks/
// (NAME/run.traces.json, NAME/run.logs.json) when CONVTRACE_FRAMEWORKS_CAPTURE=1.
// CONVTRACE_FRAMEWORKS_DUMP=DIR also writes the provider's requests and
// the list of OTLP requests there.
func TestCapture(t *testing.T) {
	if os.Getenv(CaptureEnv) != "1" {
		t.Skipf("set %s=1 to rewrite collector/testdata/recorded/frameworks from fresh runs", CaptureEnv)
	}
	requireNode(t)
	if err := os.MkdirAll(fixtureDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, src := range Sources {
		t.Run(src.Name, func(t *testing.T) {
			t.Parallel()
			prov, err := StartProvider()
			if err != nil {
				t.Fatal(err)
			}
			defer prov.Close()
			capt := testkit.NewOTLPCapture(t, testkit.WithDecoders(otlpwire.DecodeJSON, otlpwire.DecodeProto))
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			out, err := RunSource(ctx, src, prov.URL(), capt.URL())
			if dump := os.Getenv("CONVTRACE_FRAMEWORKS_DUMP"); dump != "" {
				writeDump(t, dump, src, out, prov, capt)
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			// Exporters have flushed before the script exits; a request still
			// in flight is given a moment.
			time.Sleep(200 * time.Millisecond)
			spans, logs := capt.Counts()
			t.Logf("%s: %d provider requests, %d spans, %d log records, %d OTLP requests", src.Name, len(prov.Requests()), spans, logs, len(capt.Requests()))
			if err := os.MkdirAll(filepath.Join(fixtureDir(), src.Name), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFixture(t, src.Name+"/run.traces.json", capt.Traces(), spans > 0)
			writeFixture(t, src.Name+"/run.logs.json", capt.Logs(), logs > 0)
		})
	}
}

// writeFixture writes m as OTLP/JSON to the fixture folder, or removes an
// old file of that name when the run sent nothing of its kind.
func writeFixture(t *testing.T, name string, m proto.Message, keep bool) {
	t.Helper()
	path := filepath.Join(fixtureDir(), name)
	if !keep {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}
	b, err := testkit.MarshalOTLPJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeDump(t *testing.T, dir string, src Source, out []byte, prov *Provider, capt *testkit.OTLPCapture) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n## script output\n%s\n## provider requests\n", src.Name, out)
	for _, r := range prov.Requests() {
		fmt.Fprintf(&b, "- %s stream=%v answer=%s\n  %s\n", r.Path, r.Stream, r.Answer, r.Body)
	}
	b.WriteString("\n## OTLP requests\n")
	for _, r := range capt.Requests() {
		j, _ := json.Marshal(r)
		fmt.Fprintf(&b, "- %s pending=%d bytes=%d\n", j, pendingSpans(r.Message), len(r.Raw))
	}
	if err := os.WriteFile(filepath.Join(dir, src.Name+".md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pendingSpans counts the spans Logfire marks pending
// (logfire.span_type = "pending_span") in a traces request.
func pendingSpans(m proto.Message) int {
	n := 0
	tr, _ := m.(*coltracepb.ExportTraceServiceRequest)
	for _, rs := range tr.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				for _, kv := range sp.GetAttributes() {
					if kv.GetKey() == "logfire.span_type" && kv.GetValue().GetStringValue() == "pending_span" {
						n++
					}
				}
			}
		}
	}
	return n
}
