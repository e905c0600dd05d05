package otlpreceiver

import (
	"context"
	"errors"
	"log/slog"
	"time"
	"unicode/utf8"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/collector/otlpwire"
)

// Ingester stores what a request carries, returning only once its rows are
// stored or have failed. Both methods are called concurrently, once per
// request; ctx ends when the sender gives up. A Result with Rejected > 0 or
// a Message is a partial success (acknowledged, not resent); an error means
// nothing was stored and the sender retries (the receiver does not).
type Ingester interface {
	Traces(ctx context.Context, rs []*tracepb.ResourceSpans) (collector.Result, error)
	Logs(ctx context.Context, rl []*logspb.ResourceLogs) (collector.Result, error)
}

var _ Ingester = (*collector.Ingester)(nil)

// errUnavailable is what an export returns when the ingester failed.
var errUnavailable = errors.New("storage unavailable, retry later")

// signal is what differs between traces and logs on the way from a decoded
// request to its response.
type signal struct {
	name       string // traces or logs: the metric label and the HTTP path
	items      string // spans or log records, for messages
	newRequest func() proto.Message
	// export counts a request's items and hands them to the ingester;
	// a request without items never reaches it.
	export      func(ctx context.Context, ing Ingester, req proto.Message) (n int64, res collector.Result, err error)
	newResponse func(collector.Result) proto.Message
}

var traces = &signal{
	name:       "traces",
	items:      "spans",
	newRequest: func() proto.Message { return new(coltracepb.ExportTraceServiceRequest) },
	export: func(ctx context.Context, ing Ingester, req proto.Message) (int64, collector.Result, error) {
		rs := req.(*coltracepb.ExportTraceServiceRequest).GetResourceSpans()
		var n int64
		for _, r := range rs {
			for _, ss := range r.GetScopeSpans() {
				n += int64(len(ss.GetSpans()))
			}
		}
		if n == 0 {
			return 0, collector.Result{}, nil
		}
		res, err := ing.Traces(ctx, rs)
		return n, res, err
	},
	newResponse: func(res collector.Result) proto.Message {
		resp := new(coltracepb.ExportTraceServiceResponse)
		if res.Rejected > 0 || res.Message != "" {
			resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: res.Rejected, ErrorMessage: res.Message}
		}
		return resp
	},
}

var logs = &signal{
	name:       "logs",
	items:      "log records",
	newRequest: func() proto.Message { return new(collogspb.ExportLogsServiceRequest) },
	export: func(ctx context.Context, ing Ingester, req proto.Message) (int64, collector.Result, error) {
		rl := req.(*collogspb.ExportLogsServiceRequest).GetResourceLogs()
		var n int64
		for _, r := range rl {
			for _, sl := range r.GetScopeLogs() {
				n += int64(len(sl.GetLogRecords()))
			}
		}
		if n == 0 {
			return 0, collector.Result{}, nil
		}
		res, err := ing.Logs(ctx, rl)
		return n, res, err
	},
	newResponse: func(res collector.Result) proto.Message {
		resp := new(collogspb.ExportLogsServiceResponse)
		if res.Rejected > 0 || res.Message != "" {
			resp.PartialSuccess = &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: res.Rejected, ErrorMessage: res.Message}
		}
		return resp
	},
}

// metricPoints is OTLP metrics: answered as stored so that an SDK that
// exports all three signals to one endpoint (Claude Code, Codex) logs no
// errors, and dropped: the usage and cost they count are already in the
// calls, from the agents' records and spans, and a second count would
// disagree with them.
var metricPoints = &signal{
	name:       "metrics",
	items:      "data points",
	newRequest: func() proto.Message { return new(colmetricspb.ExportMetricsServiceRequest) },
	export: func(_ context.Context, _ Ingester, req proto.Message) (int64, collector.Result, error) {
		var n int64
		for _, r := range req.(*colmetricspb.ExportMetricsServiceRequest).GetResourceMetrics() {
			for _, sm := range r.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					n += int64(dataPoints(m))
				}
			}
		}
		return n, collector.Result{}, nil
	},
	newResponse: func(collector.Result) proto.Message { return new(colmetricspb.ExportMetricsServiceResponse) },
}

// dataPoints counts a metric's data points, whatever its kind.
func dataPoints(m *metricspb.Metric) int {
	return len(m.GetGauge().GetDataPoints()) + len(m.GetSum().GetDataPoints()) + len(m.GetHistogram().GetDataPoints()) +
		len(m.GetExponentialHistogram().GetDataPoints()) + len(m.GetSummary().GetDataPoints())
}

// Transports, the metrics' transport label.
const (
	transportHTTP = "http"
	transportGRPC = "grpc"
)

// receiver is what the HTTP and gRPC front ends share.
type receiver struct {
	ing          Ingester
	maxBody      int64
	retryAfter   time.Duration
	storeTimeout time.Duration
	tokens       []string
	adm          *admission
	logger       *slog.Logger
	m            *metrics
}

func newReceiver(ing Ingester, cfg config) *receiver {
	return &receiver{ing: ing, maxBody: cfg.maxBody, retryAfter: cfg.retryAfter, storeTimeout: cfg.storeTimeout,
		tokens: cfg.tokens, adm: newAdmission(cfg.memoryLimit), logger: cfg.logger, m: newMetrics(cfg.registry)}
}

// decodeProto decodes a protobuf body, counting a repair of invalid UTF-8.
func (r *receiver) decodeProto(sig *signal, transport string, body []byte, msg proto.Message) error {
	if err := proto.Unmarshal(body, msg); err == nil {
		return nil
	}
	if err := otlpwire.DecodeProto(body, msg); err != nil {
		return err
	}
	r.m.repaired.WithLabelValues(sig.name, transport).Inc()
	return nil
}

// decodeJSON decodes an OTLP/JSON body, counting a repair of invalid UTF-8.
func (r *receiver) decodeJSON(sig *signal, transport string, body []byte, msg proto.Message) error {
	if err := otlpwire.DecodeJSON(body, msg); err != nil {
		return err
	}
	if !utf8.Valid(body) {
		r.m.repaired.WithLabelValues(sig.name, transport).Inc()
	}
	return nil
}

// export hands a decoded request to the ingester and returns the response
// to send, or errUnavailable when nothing was stored within the store
// timeout.
func (r *receiver) export(ctx context.Context, sig *signal, transport string, req proto.Message) (proto.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, r.storeTimeout)
	defer cancel()
	n, res, err := sig.export(ctx, r.ing, req)
	r.m.received(sig, transport).Add(float64(n))
	if err != nil {
		r.m.ingestFailures.WithLabelValues(sig.name, transport).Inc()
		r.m.rejected(sig, transport, reasonUnavailable).Add(float64(n))
		r.logger.Warn("convtrace: OTLP request not stored; the sender will retry",
			"signal", sig.name, "transport", transport, "items", n, "err", err)
		return nil, errUnavailable
	}
	if res.Rejected > 0 {
		r.m.rejected(sig, transport, reasonPartialSuccess).Add(float64(res.Rejected))
	}
	return sig.newResponse(res), nil
}
