package otlpreceiver_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpreceiver"
	"github.com/convtrace/convtrace/collector/otlpwire"
)

// startGRPC serves the receiver on a loopback port until the test ends and
// returns its address.
func startGRPC(t *testing.T, ing otlpreceiver.Ingester, opts ...otlpreceiver.Option) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := otlpreceiver.NewGRPCServer(ing, append([]otlpreceiver.Option{otlpreceiver.WithLogger(discardLogger())}, opts...)...)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Serve(ln)
	}()
	t.Cleanup(func() {
		s.Stop()
		wg.Wait()
	})
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func fixtureTraceRequest(t *testing.T) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	var req coltracepb.ExportTraceServiceRequest
	if err := otlpwire.DecodeJSON(readFixture(t, "traces.json"), &req); err != nil {
		t.Fatal(err)
	}
	return &req
}

func fixtureLogsRequest(t *testing.T) *collogspb.ExportLogsServiceRequest {
	t.Helper()
	var req collogspb.ExportLogsServiceRequest
	if err := otlpwire.DecodeJSON(readFixture(t, "logs.json"), &req); err != nil {
		t.Fatal(err)
	}
	return &req
}

func TestGRPCTracesFromSDKExporter(t *testing.T) {
	ing := &fakeIngester{}
	addr := startGRPC(t, ing)
	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure(), otlptracegrpc.WithCompressor(gzip.Name))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(ctx, testSpans(t).Snapshots()); err != nil {
		t.Fatalf("ExportSpans: %v", err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	got := ing.spans()
	if len(got) != len(wantSpans) {
		t.Fatalf("ingester got %d spans, want %d: %+v", len(got), len(wantSpans), got)
	}
	for i, w := range wantSpans {
		if g := got[i]; g.traceID != testTraceID || g.spanID != w.spanID || g.parentID != w.parentID || g.name != w.name || g.attrs[w.attr] != w.value {
			t.Errorf("span %d = %+v, want span %s parent %s %q %s=%s", i, g, w.spanID, w.parentID, w.name, w.attr, w.value)
		}
	}
}

func TestGRPCIngesterErrorIsUnavailable(t *testing.T) {
	ing := &fakeIngester{err: collector.ErrNotStored}
	addr := startGRPC(t, ing, otlpreceiver.WithRetryAfter(3*time.Second))
	ctx := context.Background()

	_, err := coltracepb.NewTraceServiceClient(dial(t, addr)).Export(ctx, fixtureTraceRequest(t), grpc.UseCompressor(gzip.Name))
	st := status.Convert(err)
	if st.Code() != codes.Unavailable {
		t.Fatalf("Export = %v, want Unavailable", err)
	}
	var delay time.Duration
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			delay = ri.GetRetryDelay().AsDuration()
		}
	}
	if delay != 3*time.Second {
		t.Errorf("RetryInfo delay = %v, want 3s (details %v)", delay, st.Details())
	}

	// The SDK exporter sees the failure too (its retries off, to see it now).
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	err = exp.ExportSpans(ctx, testSpans(t).Snapshots())
	_ = exp.Shutdown(ctx)
	if err == nil || !strings.Contains(err.Error(), "Unavailable") {
		t.Errorf("exporter ExportSpans = %v, want an Unavailable error", err)
	}
}

func TestGRPCPartialSuccess(t *testing.T) {
	ing := &fakeIngester{result: collector.Result{Rejected: 1, Message: "1 refused"}}
	conn := dial(t, startGRPC(t, ing))
	ctx := context.Background()

	tr, err := coltracepb.NewTraceServiceClient(conn).Export(ctx, fixtureTraceRequest(t))
	if err != nil || tr.GetPartialSuccess().GetRejectedSpans() != 1 || tr.GetPartialSuccess().GetErrorMessage() != "1 refused" {
		t.Errorf("trace Export = %v, %v; want partial success 1 %q", tr, err, "1 refused")
	}
	lr, err := collogspb.NewLogsServiceClient(conn).Export(ctx, fixtureLogsRequest(t), grpc.UseCompressor(gzip.Name))
	if err != nil || lr.GetPartialSuccess().GetRejectedLogRecords() != 1 || lr.GetPartialSuccess().GetErrorMessage() != "1 refused" {
		t.Errorf("logs Export = %v, %v; want partial success 1 %q", lr, err, "1 refused")
	}
	if logs := ing.logRecords(); len(logs) != 1 || logs[0].body != "{content=Review the plan}" || logs[0].traceID != testTraceID {
		t.Errorf("ingester got logs %+v", logs)
	}
}

// rawCodec sends and receives bytes as they are, to put on the wire what
// the Go protobuf encoder refuses to write.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

func TestGRPCRawRequests(t *testing.T) {
	for _, c := range []struct {
		name     string
		body     []byte
		opts     []otlpreceiver.Option
		wantCode codes.Code
		wantMsg  string
		wantName string // the span name the ingester must get
	}{
		{"invalid UTF-8 repaired", rawTraceRequest([]byte("chat \xff"), []byte("k"), []byte("v\xc3")), nil, codes.OK, "", "chat \uFFFD"},
		{"malformed", []byte("\x0a\xff\xff\xff\x0fshort"), nil, codes.InvalidArgument, "invalid protobuf ExportTraceServiceRequest", ""},
		{"over the limit after decompression", make([]byte, 4096), []otlpreceiver.Option{otlpreceiver.WithMaxBodySize(1024)}, codes.ResourceExhausted, "larger than max", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ing := &fakeIngester{}
			conn := dial(t, startGRPC(t, ing, c.opts...))
			var resp []byte
			err := conn.Invoke(context.Background(), coltracepb.TraceService_Export_FullMethodName, &c.body, &resp,
				grpc.ForceCodecV2(rawCodec{}), grpc.UseCompressor(gzip.Name))
			if st := status.Convert(err); st.Code() != c.wantCode || !strings.Contains(st.Message(), c.wantMsg) {
				t.Fatalf("Export = %v, want %v naming %q", err, c.wantCode, c.wantMsg)
			}
			if c.wantCode != codes.OK {
				if ing.callCount() != 0 {
					t.Errorf("ingester called for a refused request")
				}
				return
			}
			if err := proto.Unmarshal(resp, new(coltracepb.ExportTraceServiceResponse)); err != nil {
				t.Errorf("response does not decode: %v", err)
			}
			if spans := ing.spans(); len(spans) != 1 || spans[0].name != c.wantName || spans[0].attrs["k"] != "v\uFFFD" {
				t.Errorf("ingester got %+v, want one span %q with k=v\uFFFD", spans, c.wantName)
			}
		})
	}
}

// TestGRPCInterceptorSeesTypedRequest checks the hand-described service
// still runs the caller's interceptors with the decoded request.
func TestGRPCInterceptorSeesTypedRequest(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	deny := errors.New("denied")
	intercept := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		switch r := req.(type) {
		case *coltracepb.ExportTraceServiceRequest:
			seen = append(seen, info.FullMethod+" "+r.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0].GetName())
			return handler(ctx, req)
		case *collogspb.ExportLogsServiceRequest:
			seen = append(seen, info.FullMethod)
			return nil, status.Error(codes.PermissionDenied, deny.Error())
		}
		return nil, errors.New("unexpected request type")
	}
	ing := &fakeIngester{}
	conn := dial(t, startGRPC(t, ing, otlpreceiver.WithGRPCServerOptions(grpc.UnaryInterceptor(intercept))))
	ctx := context.Background()
	if _, err := coltracepb.NewTraceServiceClient(conn).Export(ctx, fixtureTraceRequest(t)); err != nil {
		t.Fatalf("trace Export: %v", err)
	}
	_, err := collogspb.NewLogsServiceClient(conn).Export(ctx, fixtureLogsRequest(t))
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("logs Export = %v, want the interceptor's PermissionDenied", err)
	}
	want := coltracepb.TraceService_Export_FullMethodName + " chat gpt-5 " + collogspb.LogsService_Export_FullMethodName
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("interceptor saw %q, want %q", got, want)
	}
	if ing.callCount() != 1 {
		t.Errorf("ingester called %d times, want 1 (logs denied)", ing.callCount())
	}
}
