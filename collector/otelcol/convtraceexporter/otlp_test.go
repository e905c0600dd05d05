package convtraceexporter

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/convtrace/convtrace/schema"
)

// What reaches the Ingester is the request as sent, but for the project
// the configuration adds and invalid UTF-8, repaired as convtrace serve's
// receivers repair it.
func TestToOTLP(t *testing.T) {
	for _, c := range []struct {
		name, project string
		resource      []string // key, value, …
		want          string   // the resource's attributes
	}{
		{"no project", "", []string{schema.KeyServiceName, "weather-agent"}, "service.name=weather-agent"},
		{"project added", "shipcode", []string{schema.KeyServiceName, "weather-agent"}, "service.name=weather-agent convtrace.project=shipcode"},
		{"project kept", "shipcode", []string{schema.KeyProject, "own"}, "convtrace.project=own"},
		{"no resource attributes", "shipcode", nil, "convtrace.project=shipcode"},
	} {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		for i := 0; i < len(c.resource); i += 2 {
			rs.Resource().Attributes().PutStr(c.resource[i], c.resource[i+1])
			rl.Resource().Attributes().PutStr(c.resource[i], c.resource[i+1])
		}
		span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		span.SetTraceID(pcommon.TraceID{1, 2, 3})
		span.SetSpanID(pcommon.SpanID{4, 5, 6})
		span.SetName("chat gpt-5")
		span.Attributes().PutStr("gen_ai.prompt", "ok\xff")
		rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Attributes().PutStr("gen_ai.prompt", "ok\xff")

		rss, err := tracesToOTLP(td, c.project)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rls, err := logsToOTLP(ld, c.project)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := rss[0].ScopeSpans[0].Spans[0]
		if s.Name != "chat gpt-5" || s.TraceId[2] != 3 || s.SpanId[2] != 6 {
			t.Errorf("%s: span %v, want the one sent", c.name, s)
		}
		for what, got := range map[string][2]string{
			"span":       {attrs(rss[0].Resource.Attributes), attrs(s.Attributes)},
			"log record": {attrs(rls[0].Resource.Attributes), attrs(rls[0].ScopeLogs[0].LogRecords[0].Attributes)},
		} {
			if want := [2]string{c.want, "gen_ai.prompt=ok\uFFFD"}; got != want {
				t.Errorf("%s: %s with project %q, resource %q: got %q, want %q", c.name, what, c.project, c.resource, got, want)
			}
		}
	}
}

// attrs writes string attributes as key=value, space-separated.
func attrs(kvs []*commonpb.KeyValue) string {
	s := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		s = append(s, kv.Key+"="+kv.Value.GetStringValue())
	}
	return strings.Join(s, " ")
}
