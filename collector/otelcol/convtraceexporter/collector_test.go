package convtraceexporter_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/goleak"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otelcol/convtraceexporter"
	convtracereceiver "github.com/convtrace/convtrace/collector/otlpreceiver"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/internal/demo"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The demo pipeline and a GenAI call whose content comes as log records
// before its span, sent over OTLP/HTTP to a Collector (otlp receiver,
// convtrace exporter) and to convtrace serve's receiver, are stored alike:
// the same turns, spans and history, each call once.
func TestCollectorStoresAsServe(t *testing.T) {
	viaCollector, viaServe := testkit.DSN(t), testkit.DSN(t) // the shared server's goroutines start here
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	collectorURL := startCollector(t, viaCollector)
	serveURL := startServeReceiver(t, viaServe)

	for _, url := range []string{collectorURL, serveURL} {
		postJSON(t, url+"/v1/logs", "../../testdata/genai/chat_log_events.logs.json")
		postJSON(t, url+"/v1/traces", "../../testdata/genai/chat_log_events.traces.json")
	}
	res := runDemo(t, collectorURL, serveURL)
	calls := len(res.Calls) + 1 // the demo's attempts and the fixture's call

	got, want := openExisting(t, viaCollector), openExisting(t, viaServe)
	for _, conn := range []driver.Conn{got, want} {
		waitCalls(t, conn, calls)
	}
	for _, q := range []string{turnsQuery, spansQuery, messagesQuery} {
		g, w := testkit.Strings(t, got, q), testkit.Strings(t, want, q)
		if len(g) == 0 || !slices.Equal(g, w) {
			t.Errorf("%s\nthrough the Collector (%d rows):\n%s\nthrough convtrace serve (%d rows):\n%s", q, len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
		}
		t.Logf("%d rows alike: %.40s…", len(g), q)
	}
	for _, c := range []struct {
		query string
		args  []any
		want  uint64
	}{
		{"SELECT count() FROM conversations FINAL WHERE cost_source != ''", nil, uint64(calls)},
		{"SELECT uniqExact(span_id) FROM conversations WHERE cost_source != ''", nil, uint64(calls)},
		{"SELECT count() FROM conversations FINAL WHERE cost_source != '' AND thread_id = ?", []any{res.ThreadID}, uint64(len(res.Calls))},
		{"SELECT toUInt64(count() - uniqExact(thread_id, id)) FROM messages", nil, 0},
		// The fixture's answer comes in a log record sent before its span.
		{"SELECT count() FROM conversations FINAL WHERE turn_id = 'eee19b7ec3c1b174:response:1' AND content LIKE 'The weather in Paris%'", nil, 1},
		{"SELECT count() FROM conversations WHERE project != 'shipcode'", nil, 0},
	} {
		var n uint64
		if err := got.QueryRow(context.Background(), c.query, c.args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if n != c.want {
			t.Errorf("%s: %d, want %d", c.query, n, c.want)
		}
	}
}

// Every column of a turn but its project, which the Collector's
// configuration sets and serve's senders do.
const turnsQuery = `SELECT concat(turn_id, '|', thread_id, '|', span_id, '|', parent_turn_id, '|', speaker, '|', phase, '|',
  toString(round), '|', role, '|', provider, '|', model, '|', tool_name, '|', content, '|', toString(history), '|', status, '|', error, '|',
  cost_source, '|', ifNull(toString(tokens_in), '-'), '|', ifNull(toString(tokens_out), '-'), '|', ifNull(toString(cost_usd), '-'), '|',
  toString(start_ns), '|', toString(duration_ns))
FROM conversations FINAL ORDER BY turn_id`

const spansQuery = `SELECT concat(trace_id, '|', span_id, '|', name) FROM spans FINAL ORDER BY trace_id, span_id`

const messagesQuery = `SELECT concat(thread_id, '|', id, '|', message) FROM messages ORDER BY thread_id, id`

// startCollector runs a Collector built from factories with
// testdata/collector.yaml, storing into dsn, until the test ends, and
// returns the base URL of its OTLP/HTTP receiver.
func startCollector(t *testing.T, dsn string) string {
	t.Helper()
	addr := freeAddr(t)
	t.Setenv("CONVTRACE_TEST_CLICKHOUSE", dsn)
	t.Setenv("CONVTRACE_TEST_OTLP_HTTP", addr)
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.NewDefaultBuildInfo(),
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"file:testdata/collector.yaml"},
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		}},
		DisableGracefulShutdown: true,
		SkipSettingGRPCLogger:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- col.Run(context.Background()) }()
	t.Cleanup(func() {
		col.Shutdown()
		if err := <-ran; err != nil {
			t.Errorf("collector: %v", err)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); col.GetState() != otelcol.StateRunning; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-ran:
			t.Fatalf("collector stopped before running: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector not running after 30 s: %v", col.GetState())
		}
	}
	return "http://" + addr
}

func factories() (otelcol.Factories, error) {
	receivers, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exporters, err := otelcol.MakeFactoryMap[exporter.Factory](convtraceexporter.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{Receivers: receivers, Exporters: exporters, Telemetry: otelconftelemetry.NewFactory()}, nil
}

// startServeReceiver serves convtrace serve's OTLP/HTTP receiver, storing
// into dsn with serve's defaults, and returns its base URL.
func startServeReceiver(t *testing.T, dsn string) string {
	t.Helper()
	in, err := collector.NewIngester(dsn)
	if err != nil {
		t.Fatal(err)
	}
	srv := testkit.LoopbackServer(convtracereceiver.NewHTTPHandler(in))
	t.Cleanup(func() {
		srv.Close()
		if err := in.Shutdown(context.Background()); err != nil {
			t.Errorf("shut down the ingester: %v", err)
		}
	})
	return srv.URL
}

// freeAddr returns a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// postJSON sends the OTLP/JSON request in file to url and fails unless it
// is acknowledged.
func postJSON(t *testing.T, url, file string) {
	t.Helper()
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s to %s: %s", file, url, resp.Status)
	}
}

// runDemo records the demo pipeline once, exporting the same spans over
// OTLP/HTTP to every base URL.
func runDemo(t *testing.T, urls ...string) demo.Result {
	t.Helper()
	ctx := context.Background()
	provider, err := demo.StartProvider()
	if err != nil {
		t.Fatal(err)
	}
	defer provider.Shutdown(ctx)
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(resource.NewSchemaless(attribute.String(schema.KeyServiceName, "demo-pipeline"))),
		sdktrace.WithSpanProcessor(instrument.NewSpanProcessor()),
	}
	for _, url := range urls {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url+"/v1/traces"))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	res, err := demo.Run(ctx, instrument.NewRecorder(instrument.WithTracerProvider(tp)), provider.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("export the demo: %v", err)
	}
	return res
}

func openExisting(t *testing.T, dsn string) driver.Conn {
	t.Helper()
	conn, err := ddl.OpenExisting(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// waitCalls waits until conn holds calls calls: a staged call may be
// completed by a sweep after its request was acknowledged.
func waitCalls(t *testing.T, conn driver.Conn, calls int) {
	t.Helper()
	var n uint64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := conn.QueryRow(context.Background(), "SELECT uniqExact(span_id) FROM conversations WHERE cost_source != ''").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n >= uint64(calls) {
			return
		}
	}
	t.Fatalf("%d calls stored, want %d", n, calls)
}
