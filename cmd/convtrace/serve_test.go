package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/internal/testkit"
)

// served is a running `convtrace serve` and the addresses it printed.
type served struct {
	viewer, otlpHTTP, otlpGRPC string
	conn                       driver.Conn
	dsn                        string // of conn's database
}

// startServe runs `convtrace serve` in-process on free ports against a
// fresh database until the test ends.
func startServe(t *testing.T, extra ...string) served {
	t.Helper()
	conn, dsn := testkit.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	args := append([]string{"serve", "--clickhouse", dsn, "--listen", "127.0.0.1:0", "--otlp-http", "127.0.0.1:0", "--otlp-grpc", "127.0.0.1:0"}, extra...)
	go func() {
		done <- run(ctx, args, streams{pw, io.Discard, strings.NewReader("")})
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	s := served{conn: conn, dsn: dsn}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		addr := line[strings.LastIndex(line, " ")+1:]
		switch {
		case strings.HasPrefix(line, "convtrace viewer on "):
			s.viewer = addr
		case strings.HasPrefix(line, "OTLP/HTTP receiver on "):
			s.otlpHTTP = strings.TrimPrefix(addr, "http://")
		case strings.HasPrefix(line, "OTLP/gRPC receiver on "):
			s.otlpGRPC = addr
		case line == "Ctrl-C stops":
			go io.Copy(io.Discard, pr)
			return s
		}
	}
	t.Fatalf("serve stopped before it was ready")
	return s
}

// emitGenAICall records one OTel GenAI chat span through tp, its messages
// as span attributes.
func emitGenAICall(tp trace.TracerProvider, model, question, answer string) {
	_, span := tp.Tracer("py-like").Start(context.Background(), "chat "+model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "openai"),
			attribute.String("gen_ai.request.model", model), attribute.Int("gen_ai.usage.input_tokens", 11),
			attribute.Int("gen_ai.usage.output_tokens", 5),
			attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"`+question+`"}]}]`),
			attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"`+answer+`"}],"finish_reason":"stop"}]`),
		))
	span.End()
}

type storedTurn struct {
	Role, Content, Model, Provider, Project string
	TokensIn                                *uint32
}

func turnsOfModel(t *testing.T, conn driver.Conn, model string) []storedTurn {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT role, content, model, provider, project, tokens_in FROM conversations FINAL WHERE model = ? ORDER BY start_ns, seq", model)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storedTurn
	for rows.Next() {
		var r storedTurn
		if err := rows.Scan(&r.Role, &r.Content, &r.Model, &r.Provider, &r.Project, &r.TokensIn); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestServeReceivesOTLPFromSDKExporters(t *testing.T) {
	s := startServe(t)
	ctx := context.Background()
	res := resource.NewSchemaless(attribute.String("service.name", "py-agents"))

	httpExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(s.otlpHTTP), otlptracehttp.WithInsecure(), otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	grpcExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(s.otlpGRPC), otlptracegrpc.WithInsecure(), otlptracegrpc.WithCompressor("gzip"))
	if err != nil {
		t.Fatal(err)
	}
	for model, exp := range map[string]sdktrace.SpanExporter{"gpt-4o-http": httpExp, "gpt-4o-grpc": grpcExp} {
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSyncer(exp))
		emitGenAICall(tp, model, "Weather in Paris?", "Rainy")
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatalf("%s exporter: %v", model, err)
		}
		// The exporter's export returned: the receiver acknowledged only after storing.
		got := turnsOfModel(t, s.conn, model)
		want := []storedTurn{
			{Role: "prompt", Content: `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`, Model: model, Provider: "openai", Project: "py-agents"},
			{Role: "response", Content: "Rainy", Model: model, Provider: "openai", Project: "py-agents"},
		}
		if len(got) != 2 || got[1].TokensIn == nil || *got[1].TokensIn != 11 {
			t.Fatalf("%s: stored %+v", model, got)
		}
		got[1].TokensIn = nil
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s turn %d:\n got %+v\nwant %+v", model, i, got[i], want[i])
			}
		}
	}

	// The deprecated per-message events sent as OTLP log records, joined to a
	// span without content that arrives after them.
	logExp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(s.otlpHTTP), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewSimpleProcessor(logExp)))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSyncer(httpExp2(t, s.otlpHTTP)))
	spanCtx, span := tp.Tracer("py-like").Start(ctx, "chat gpt-4o-logs", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.system", "openai"),
		attribute.String("gen_ai.request.model", "gpt-4o-logs")))
	logger := lp.Logger("py-like")
	var user otellog.Record
	user.SetEventName("gen_ai.user.message")
	user.SetBody(attribute.MapValue(attribute.String("content", "Weather in Paris?")))
	logger.Emit(spanCtx, user)
	var choice otellog.Record
	choice.SetEventName("gen_ai.choice")
	choice.SetBody(attribute.MapValue(attribute.Int("index", 0), attribute.String("finish_reason", "stop"),
		attribute.Map("message", attribute.String("content", "Rainy"))))
	logger.Emit(spanCtx, choice)
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	span.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	got := turnsOfModel(t, s.conn, "gpt-4o-logs")
	if len(got) != 2 || got[0].Content != `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]` || got[1].Content != "Rainy" || got[1].Provider != "openai" {
		t.Errorf("log-record form through otlploghttp: stored %+v", got)
	}
}

func TestServeOpsEndpoints(t *testing.T) {
	s := startServe(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(httpExp2(t, s.otlpHTTP)))
	emitGenAICall(tp, "gpt-4o-ops", "ping", "pong")
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + s.otlpHTTP + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with ClickHouse up: %d %s", code, body)
	}
	_, metrics := get("/metrics")
	for _, want := range []string{
		`convtrace_otlp_received_spans_total{transport="http"} 1`,
		"convtrace_turns_mapped_total 2",
		// The span's row, its staged record, its 2 turns and the mark
		// that they were written (every provider call span is staged).
		"convtrace_rows_written_total 5",
		"convtrace_values_sanitised_total 0",
		"convtrace_resume_failures_unrecognised_total 0",
		"convtrace_spool_set_aside_bytes_total 0",
		"convtrace_insert_duration_seconds_count",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func httpExp2(t *testing.T, endpoint string) sdktrace.SpanExporter {
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

// telemetrygenVersion is the opentelemetry-collector-contrib release whose
// telemetrygen the test runs, a third-party OTLP client.
const telemetrygenVersion = "v0.161.0"

func TestServeTakesTenThousandSpansFromTelemetrygen(t *testing.T) {
	if testing.Short() {
		t.Skip("builds telemetrygen from the Go module proxy")
	}
	s := startServe(t)
	gobin := t.TempDir()
	build := exec.Command("go", "install", "github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen@"+telemetrygenVersion)
	build.Env = append(os.Environ(), "GOBIN="+gobin)
	bin := filepath.Join(gobin, "telemetrygen")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build telemetrygen: %v\n%s", err, out)
	}
	// 5,000 traces of 2 spans. Unthrottled, telemetrygen makes them faster
	// than its own batch processor's 2,048-span queue drains through any
	// exporter, and it drops the rest; at 1,000 traces/s it drops none.
	cmd := exec.Command(bin, "traces", "--otlp-http", "--otlp-insecure", "--otlp-endpoint", s.otlpHTTP,
		"--traces", "5000", "--child-spans", "1", "--workers", "1", "--rate", "1000", "--service", "telemetrygen")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("telemetrygen: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "dropped") {
		t.Logf("telemetrygen:\n%s", out)
	}
	// telemetrygen exited after its exports were acknowledged, and the
	// receiver acknowledges only stored spans: all must be there now.
	var n uint64
	if err := s.conn.QueryRow(context.Background(), "SELECT count() FROM spans FINAL WHERE project = 'telemetrygen'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 10_000 {
		t.Errorf("spans stored from telemetrygen: %d, want 10000", n)
	}
}

// Without a token the viewer stays on loopback; with one, every request
// must carry it.
func TestServeViewerToken(t *testing.T) {
	var stderr strings.Builder
	code := run(context.Background(), []string{"serve", "--clickhouse", "clickhouse://127.0.0.1:1/x", "--listen", "0.0.0.0:0"},
		streams{io.Discard, &stderr, strings.NewReader("")})
	if code != 1 || !strings.Contains(stderr.String(), "not a loopback address: set --token") {
		t.Errorf("serve --listen 0.0.0.0:0 without a token: exit %d, stderr %q; want 1 and a refusal naming --token", code, stderr.String())
	}

	s := startServe(t, "--token", "s3cret")
	for _, tc := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer wrong", http.StatusUnauthorized}, {"Bearer s3cret", http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodGet, s.viewer+"/api/threads", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("GET /api/threads with Authorization %q: status %d, want %d", tc.auth, res.StatusCode, tc.want)
		}
	}
}

// OTLP is guarded like the viewer: a non-loopback receiver needs a token,
// and with one every export and /metrics must carry it; --otlp-token is a
// separate ingest token.
func TestServeIngestToken(t *testing.T) {
	for _, args := range [][]string{{"--otlp-http", "0.0.0.0:0"}, {"--otlp-grpc", "0.0.0.0:0"}} {
		var stderr strings.Builder
		code := run(context.Background(), append([]string{"serve", "--clickhouse", "clickhouse://127.0.0.1:1/x"}, args...),
			streams{io.Discard, &stderr, strings.NewReader("")})
		if code != 1 || !strings.Contains(stderr.String(), args[0]+" 0.0.0.0:0 is not a loopback address: set --token") {
			t.Errorf("serve %s without a token: exit %d, stderr %q; want 1 and a refusal naming the flag", args, code, stderr.String())
		}
	}

	s := startServe(t, "--token", "viewer-token", "--otlp-token", "ingest-token")
	ctx := context.Background()
	for _, tc := range []struct {
		token  string
		stored bool
	}{{"", false}, {"viewer-token", false}, {"ingest-token", true}} {
		model := "gpt-token-" + tc.token
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(s.otlpHTTP), otlptracehttp.WithInsecure(),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
		if tc.token != "" {
			opts = append(opts, otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer " + tc.token}))
		}
		exp, err := otlptracehttp.New(ctx, opts...)
		if err != nil {
			t.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		emitGenAICall(tp, model, "Who may write?", "Whoever holds the token.")
		_ = tp.Shutdown(ctx)
		if got := turnsOfModel(t, s.conn, model); (len(got) == 2) != tc.stored {
			t.Errorf("export with token %q: stored %d turns, want stored %v", tc.token, len(got), tc.stored)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://"+s.otlpHTTP+"/metrics", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if (res.StatusCode == http.StatusOK) != tc.stored {
			t.Errorf("GET /metrics with token %q: %d", tc.token, res.StatusCode)
		}
	}
}

// A busy port fails serve before it records anything: no demo run is
// stored for a viewer that never served, and the error says which flag
// moves it.
func TestServeBusyPortRecordsNothing(t *testing.T) {
	conn, dsn := testkit.Open(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	code, _, stderr := runCapture(t, "serve", "--demo", "--clickhouse", dsn, "--listen", busy.Addr().String(),
		"--otlp-http", "", "--otlp-grpc", "")
	if code != 1 || !strings.Contains(stderr, "--listen: "+busy.Addr().String()+" is in use by another program") {
		t.Errorf("serve on a busy port: exit %d, stderr %q; want 1 and the flag that moves it", code, stderr)
	}
	var turns uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations").Scan(&turns); err == nil && turns != 0 {
		t.Errorf("serve on a busy port recorded %d turns of a demo run", turns)
	}
}
