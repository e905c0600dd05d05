package convtraceexporter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otelcol/convtraceexporter"
)

// While ClickHouse does not answer, an export fails with an error that is
// not permanent, for the Collector's retry and queue to keep the spans; a
// log record convtrace never stores is dropped, not retried. The traces
// and logs exporters share one ingester, stopped with the last of them.
func TestExportFailsUntilStored(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	f := convtraceexporter.NewFactory()
	cfg := f.CreateDefaultConfig()
	conf := confmap.NewFromStringMap(map[string]any{
		"dsn":              "clickhouse://127.0.0.1:1/convtrace", // nothing listens on port 1
		"timeout":          "300ms",
		"sending_queue":    map[string]any{"enabled": false},
		"retry_on_failure": map[string]any{"enabled": false},
	})
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	set := exportertest.NewNopSettings(convtraceexporter.Type)
	traces, err := f.CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := f.CreateLogs(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	host := componenttest.NewNopHost()
	if err := traces.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	if err := logs.Start(ctx, host); err != nil {
		t.Fatal(err)
	}

	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetTraceID(pcommon.TraceID{1})
	span.SetSpanID(pcommon.SpanID{1})
	span.SetName("GET /")
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	err = traces.ConsumeTraces(ctx, td)
	if !errors.Is(err, collector.ErrNotStored) || consumererror.IsPermanent(err) {
		t.Errorf("spans exported while ClickHouse is down: %v, want a retryable %v", err, collector.ErrNotStored)
	}

	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("GET / 200")
	if err := logs.ConsumeLogs(ctx, ld); err != nil {
		t.Errorf("a log record that is no GenAI event: %v, want it dropped", err)
	}

	shutdownCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := errors.Join(traces.Shutdown(shutdownCtx), logs.Shutdown(shutdownCtx)); err != nil {
		t.Errorf("shut down: %v", err)
	}
}
