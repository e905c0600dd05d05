package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/chserver"
	"github.com/convtrace/convtrace/store/ddl"
)

// load sends GenAI calls with their content inline through the OTel SDK's
// OTLP/HTTP exporter, retrying as the SDK does, and keeps the span ids of
// every export the collector acknowledged.
type load struct {
	endpoint string
	content  int // bytes of answer text a call carries

	mu    sync.Mutex
	sent  int
	acked []string
}

func (l *load) exporter(t *testing.T) *otlptrace.Exporter {
	t.Helper()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(l.endpoint), otlptracehttp.WithInsecure(),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 200 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: 4 * time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

// export sends one request of n calls and records them when acknowledged.
func (l *load) export(t *testing.T, exp *otlptrace.Exporter, n int) {
	stubs := make(tracetest.SpanStubs, n)
	ids := make([]string, n)
	answer := strings.Repeat("x", l.content)
	res := resource.NewSchemaless(attribute.String("service.name", "fault-load"))
	for i := range stubs {
		var tid trace.TraceID
		var sid trace.SpanID
		_, _ = rand.Read(tid[:])
		_, _ = rand.Read(sid[:])
		start := time.Now()
		stubs[i] = tracetest.SpanStub{
			Name:        "chat gpt-4o",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
			SpanKind:    trace.SpanKindClient, StartTime: start, EndTime: start.Add(time.Millisecond), Resource: res,
			Attributes: []attribute.KeyValue{
				attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "openai"),
				attribute.String("gen_ai.request.model", "gpt-4o"), attribute.String("gen_ai.conversation.id", "fault-load"),
				attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Go on."}]}]`),
				attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"`+answer+`"}]}]`),
			},
		}
		ids[i] = sid.String()
	}
	l.mu.Lock()
	l.sent += n
	l.mu.Unlock()
	if err := exp.ExportSpans(context.Background(), stubs.Snapshots()); err != nil {
		t.Logf("export of %d calls not acknowledged: %v", n, err)
		return
	}
	l.mu.Lock()
	l.acked = append(l.acked, ids...)
	l.mu.Unlock()
}

// run keeps senders exporting requests of n calls until stop is closed.
func (l *load) run(t *testing.T, senders, n int, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range senders {
		exp := l.exporter(t)
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				l.export(t, exp, n)
			}
		})
	}
	return &wg
}

// check asserts that every acknowledged call is stored, each turn once
// under FINAL, and reports what was sent, acknowledged and found.
func (l *load) check(t *testing.T, conn driver.Conn) {
	t.Helper()
	ctx := context.Background()
	var spans, turns, rows, unique uint64
	// A call whose turns a request could not write once its records were
	// stored (storage went away in between) is written by the next sweep
	// once it settles, seconds after storage is back.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if err := conn.QueryRow(ctx, "SELECT uniqExact(span_id) FROM spans WHERE has(?, span_id)", l.acked).Scan(&spans); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, "SELECT uniqExactIf(span_id, has(?, span_id)), count(), uniqExact(turn_id) FROM conversations FINAL", l.acked).Scan(&turns, &rows, &unique); err != nil {
			t.Fatal(err)
		}
		if int(min(spans, turns)) == len(l.acked) || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("calls sent %d, acknowledged %d; found %d spans and the turns of %d calls; %d rows of %d turns under FINAL",
		l.sent, len(l.acked), spans, turns, rows, unique)
	if len(l.acked) == 0 {
		t.Fatal("no export was acknowledged")
	}
	if missing := len(l.acked) - int(min(spans, turns)); missing != 0 {
		t.Errorf("%d acknowledged calls missing", missing)
	}
	if rows != unique {
		t.Errorf("%d duplicate turns under FINAL", rows-unique)
	}
}

// ready polls /readyz until it answers want, and returns how long that took.
func ready(t *testing.T, p *testkit.Process, want int, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < within {
		res, err := http.Get("http://" + p.OTLPHTTP + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == want {
				return time.Since(start)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("/readyz did not answer %d within %s", want, within)
	return 0
}

func faultSetup(t *testing.T, extra ...string) (*chserver.Server, driver.Conn, *testkit.Process) {
	t.Helper()
	srv := testkit.OwnClickHouse(t)
	dsn := srv.DSN("fault")
	p := testkit.Serve(t, nil, append([]string{"--clickhouse", dsn}, extra...)...)
	conn, err := ddl.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return srv, conn, p
}

// TestIngestThroughFrozenClickHouse is fault test (a): ClickHouse frozen
// (SIGSTOP) for 20 s under steady OTLP load, then resumed.
func TestIngestThroughFrozenClickHouse(t *testing.T) {
	underLoad(t, "freeze", func(srv *chserver.Server) {
		testkit.Signal(t, srv, syscall.SIGSTOP)
	}, 20*time.Second, func(srv *chserver.Server) {
		testkit.Signal(t, srv, syscall.SIGCONT)
	})
}

// TestIngestThroughKilledClickHouse is fault test (b): ClickHouse killed
// with kill -9 mid-load, and restarted.
func TestIngestThroughKilledClickHouse(t *testing.T) {
	underLoad(t, "kill", func(srv *chserver.Server) {
		testkit.Signal(t, srv, syscall.SIGKILL)
	}, 3*time.Second, func(srv *chserver.Server) {
		testkit.Restart(t, srv)
	})
}

// underLoad runs four senders against a collector, breaks its ClickHouse
// with fault, mends it after a while with mend, and checks that every
// acknowledged call is stored once and that /readyz followed.
func underLoad(t *testing.T, what string, fault func(*chserver.Server), after time.Duration, mend func(*chserver.Server)) {
	srv, conn, p := faultSetup(t)
	l := &load{endpoint: p.OTLPHTTP, content: 200}
	stop := make(chan struct{})
	senders := l.run(t, 4, 20, stop)
	time.Sleep(3 * time.Second)
	fault(srv)
	t.Logf("/readyz not ready %s after the %s", ready(t, p, http.StatusServiceUnavailable, 10*time.Second).Round(10*time.Millisecond), what)
	time.Sleep(after)
	mend(srv)
	t.Logf("/readyz ready %s after ClickHouse was back", ready(t, p, http.StatusOK, 20*time.Second).Round(10*time.Millisecond))
	time.Sleep(3 * time.Second)
	close(stop)
	senders.Wait()
	l.check(t, conn)
}

// TestIngestMemoryBound is fault test (f): 64 clients each sending an 8 MB
// request at once keep the collector's peak RSS under 1 GiB; every request
// is stored through the SDK's retries, and memory falls back afterwards.
func TestIngestMemoryBound(t *testing.T) {
	_, conn, p := faultSetup(t)
	idle := rss(t, p, "VmRSS")
	l := &load{endpoint: p.OTLPHTTP, content: 8 << 20}
	var wg sync.WaitGroup
	for range 64 {
		exp := l.exporter(t)
		wg.Go(func() { l.export(t, exp, 1) })
	}
	wg.Wait()
	peak := rss(t, p, "VmHWM")
	l.check(t, conn)
	after := rss(t, p, "VmRSS")
	for deadline := time.Now().Add(60 * time.Second); after > idle+256<<20 && time.Now().Before(deadline); after = rss(t, p, "VmRSS") {
		time.Sleep(time.Second)
	}
	t.Logf("RSS idle %d MiB, peak %d MiB, after %d MiB", idle>>20, peak>>20, after>>20)
	if peak >= 1<<30 {
		t.Errorf("peak RSS %d MiB, want under 1024 MiB", peak>>20)
	}
	if after > idle+256<<20 {
		t.Errorf("RSS %d MiB a minute after the load, idle was %d MiB; runtime:\n%s", after>>20, idle>>20, memstats(t, p))
	}
}

// rss reads a memory figure of the process from /proc, in bytes.
func rss(t *testing.T, p *testkit.Process, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, p.Cmd.Process.Pid)
	return 0
}

// memstats returns the Go runtime's memory figures from /metrics.
func memstats(t *testing.T, p *testkit.Process) string {
	res, err := http.Get("http://" + p.OTLPHTTP + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "go_memstats_heap") || strings.HasPrefix(line, "go_memstats_sys") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
