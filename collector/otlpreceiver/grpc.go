package otlpreceiver

import (
	"context"
	"strings"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/gzip" // registers the gzip compressor OTLP senders use
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// NewGRPCServer returns a gRPC server with the OTLP services registered,
// taking gzip. A message over the body limit (decompressed) gets
// ResourceExhausted, a malformed one InvalidArgument, one not stored
// Unavailable with a RetryInfo delay. The caller serves and stops it.
func NewGRPCServer(ing Ingester, opts ...Option) *grpc.Server {
	cfg := newConfig(opts)
	r := newReceiver(ing, cfg)
	sopts := append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(int(min(cfg.maxBody, int64(maxInt)))),
		grpc.ForceServerCodecV2(codec{}),
		// Before the message is read: a sender without the token costs
		// nothing.
		grpc.InTapHandle(func(ctx context.Context, info *tap.Info) (context.Context, error) {
			if !authorized(cfg.tokens, strings.Join(info.Header.Get("authorization"), "")) {
				return nil, status.Error(codes.Unauthenticated, "missing or wrong token: send the metadata authorization: Bearer TOKEN")
			}
			return ctx, nil
		}),
	}, cfg.grpcOpts...)
	s := grpc.NewServer(sopts...)
	s.RegisterService(&traceServiceDesc, &traceServer{r: r})
	s.RegisterService(&logsServiceDesc, &logsServer{r: r})
	s.RegisterService(&metricsServiceDesc, &metricsServer{r: r})
	return s
}

const maxInt = int(^uint(0) >> 1)

// The services are described here, with the generated names and paths,
// so that their handlers decode the raw message themselves (see codec): a
// malformed request is InvalidArgument, not Internal, and invalid UTF-8 is
// repaired (docs/design/otlp.md, "gRPC").
var (
	traceServiceDesc = grpc.ServiceDesc{
		ServiceName: "opentelemetry.proto.collector.trace.v1.TraceService",
		HandlerType: (*coltracepb.TraceServiceServer)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Export", Handler: traceExportHandler}},
		Metadata:    "opentelemetry/proto/collector/trace/v1/trace_service.proto",
	}
	metricsServiceDesc = grpc.ServiceDesc{
		ServiceName: "opentelemetry.proto.collector.metrics.v1.MetricsService",
		HandlerType: (*colmetricspb.MetricsServiceServer)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Export", Handler: metricsExportHandler}},
		Metadata:    "opentelemetry/proto/collector/metrics/v1/metrics_service.proto",
	}
	logsServiceDesc = grpc.ServiceDesc{
		ServiceName: "opentelemetry.proto.collector.logs.v1.LogsService",
		HandlerType: (*collogspb.LogsServiceServer)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Export", Handler: logsExportHandler}},
		Metadata:    "opentelemetry/proto/collector/logs/v1/logs_service.proto",
	}
)

type traceServer struct {
	coltracepb.UnimplementedTraceServiceServer
	r *receiver
}

var _ coltracepb.TraceServiceServer = (*traceServer)(nil)

// Export stores a decoded request.
func (s *traceServer) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	resp, err := s.r.exportGRPC(ctx, traces, req)
	if err != nil {
		return nil, err
	}
	return resp.(*coltracepb.ExportTraceServiceResponse), nil
}

func traceExportHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	s := srv.(*traceServer)
	start := time.Now()
	defer s.r.observe(traces, start)
	req := new(coltracepb.ExportTraceServiceRequest)
	release, err := s.r.decodeGRPC(traces, dec, req)
	if err != nil {
		return nil, err
	}
	defer release()
	if interceptor == nil {
		return s.Export(ctx, req)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: coltracepb.TraceService_Export_FullMethodName}
	return interceptor(ctx, req, info, func(ctx context.Context, req any) (any, error) {
		return s.Export(ctx, req.(*coltracepb.ExportTraceServiceRequest))
	})
}

type logsServer struct {
	collogspb.UnimplementedLogsServiceServer
	r *receiver
}

var _ collogspb.LogsServiceServer = (*logsServer)(nil)

// Export stores a decoded request.
func (s *logsServer) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	resp, err := s.r.exportGRPC(ctx, logs, req)
	if err != nil {
		return nil, err
	}
	return resp.(*collogspb.ExportLogsServiceResponse), nil
}

func logsExportHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	s := srv.(*logsServer)
	start := time.Now()
	defer s.r.observe(logs, start)
	req := new(collogspb.ExportLogsServiceRequest)
	release, err := s.r.decodeGRPC(logs, dec, req)
	if err != nil {
		return nil, err
	}
	defer release()
	if interceptor == nil {
		return s.Export(ctx, req)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: collogspb.LogsService_Export_FullMethodName}
	return interceptor(ctx, req, info, func(ctx context.Context, req any) (any, error) {
		return s.Export(ctx, req.(*collogspb.ExportLogsServiceRequest))
	})
}

func (r *receiver) observe(sig *signal, start time.Time) {
	r.m.duration.WithLabelValues(sig.name, transportGRPC).Observe(time.Since(start).Seconds())
}

// decodeGRPC receives the raw request through dec, admits it to the
// memory limit and decodes it into msg. The caller calls release once the
// request is answered.
func (r *receiver) decodeGRPC(sig *signal, dec func(any) error, msg proto.Message) (release func(), err error) {
	var raw rawMessage
	if err := dec(&raw); err != nil {
		if status.Code(err) == codes.ResourceExhausted {
			r.m.rejectedRequests.WithLabelValues(sig.name, transportGRPC, reasonTooLarge).Inc()
		}
		return nil, err // already a status from gRPC
	}
	defer raw.buf.Free()
	adm := r.adm.admit(int64(raw.buf.Len()))
	if adm == nil {
		r.m.rejectedRequests.WithLabelValues(sig.name, transportGRPC, reasonOverloaded).Inc()
		return nil, r.retryLaterGRPC(codes.ResourceExhausted, errOverloaded)
	}
	if err := r.decodeProto(sig, transportGRPC, raw.buf.ReadOnlyData(), msg); err != nil {
		adm.release()
		r.m.rejectedRequests.WithLabelValues(sig.name, transportGRPC, reasonMalformed).Inc()
		return nil, status.Error(codes.InvalidArgument, "malformed request: "+err.Error())
	}
	return adm.release, nil
}

// exportGRPC stores a request and maps a storage failure to Unavailable
// with the delay senders should wait.
func (r *receiver) exportGRPC(ctx context.Context, sig *signal, req proto.Message) (proto.Message, error) {
	resp, err := r.export(ctx, sig, transportGRPC, req)
	if err == nil {
		return resp, nil
	}
	return nil, r.retryLaterGRPC(codes.Unavailable, err)
}

// retryLaterGRPC is an error with the delay senders should wait, which
// makes the OTel SDKs retry Unavailable and ResourceExhausted alike.
func (r *receiver) retryLaterGRPC(code codes.Code, err error) error {
	st := status.New(code, err.Error())
	if withDelay, derr := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(r.retryAfter)}); derr == nil {
		st = withDelay
	}
	return st.Err()
}

// rawMessage receives a request's bytes undecoded from codec.
type rawMessage struct{ buf mem.Buffer }

// codec is gRPC's protobuf codec, except that it hands a rawMessage the
// message's bytes so the handler decodes them itself.
type codec struct{}

var protoCodec = encoding.GetCodecV2(grpcproto.Name)

func (codec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (codec) Unmarshal(data mem.BufferSlice, v any) error {
	if raw, ok := v.(*rawMessage); ok {
		raw.buf = data.MaterializeToBuffer(mem.DefaultBufferPool())
		return nil
	}
	return protoCodec.Unmarshal(data, v)
}

func (codec) Name() string { return grpcproto.Name }

type metricsServer struct {
	colmetricspb.UnimplementedMetricsServiceServer
	r *receiver
}

var _ colmetricspb.MetricsServiceServer = (*metricsServer)(nil)

// Export takes a decoded request (metricPoints: not stored).
func (s *metricsServer) Export(ctx context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	resp, err := s.r.exportGRPC(ctx, metricPoints, req)
	if err != nil {
		return nil, err
	}
	return resp.(*colmetricspb.ExportMetricsServiceResponse), nil
}

func metricsExportHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	s := srv.(*metricsServer)
	start := time.Now()
	defer s.r.observe(metricPoints, start)
	req := new(colmetricspb.ExportMetricsServiceRequest)
	release, err := s.r.decodeGRPC(metricPoints, dec, req)
	if err != nil {
		return nil, err
	}
	defer release()
	if interceptor == nil {
		return s.Export(ctx, req)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: colmetricspb.MetricsService_Export_FullMethodName}
	return interceptor(ctx, req, info, func(ctx context.Context, req any) (any, error) {
		return s.Export(ctx, req.(*colmetricspb.ExportMetricsServiceRequest))
	})
}
