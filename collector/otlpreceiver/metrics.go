package otlpreceiver

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a request or its items were refused: the reason label.
const (
	reasonPartialSuccess   = "partial_success" // items the ingester refused
	reasonUnavailable      = "unavailable"     // items of a request that could not be stored
	reasonMalformed        = "malformed"       // requests whose body does not decode
	reasonTooLarge         = "too_large"       // requests over the body limit
	reasonMediaType        = "unsupported_media_type"
	reasonEncoding         = "unsupported_encoding"
	reasonMethodNotAllowed = "method_not_allowed"
	reasonUnauthorized     = "unauthorized"
	reasonOverloaded       = "overloaded" // past the memory limit: the sender retries
)

// metrics are the receiver's counters. The label signal is traces or logs,
// transport is http or grpc.
type metrics struct {
	receivedSpans, receivedLogs *prometheus.CounterVec // {transport}
	droppedPoints               *prometheus.CounterVec // {transport}: metric data points, taken and not stored
	rejectedSpans, rejectedLogs *prometheus.CounterVec // {transport, reason}
	rejectedRequests            *prometheus.CounterVec // {signal, transport, reason}
	ingestFailures              *prometheus.CounterVec // {signal, transport}
	repaired                    *prometheus.CounterVec // {signal, transport}
	duration                    *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "convtrace", Subsystem: "otlp", Name: name, Help: help,
		}, labels))
	}
	m := &metrics{
		receivedSpans:    counter("received_spans_total", "Spans in OTLP requests that decoded, stored or not.", "transport"),
		receivedLogs:     counter("received_log_records_total", "Log records in OTLP requests that decoded, stored or not.", "transport"),
		droppedPoints:    counter("dropped_metric_points_total", "Metric data points in OTLP requests that decoded: taken (answered 200) and not stored, as the conversations and their spans and records carry the usage.", "transport"),
		rejectedSpans:    counter("rejected_spans_total", "Received spans not stored: refused by the ingester (partial_success) or in a request that failed to store (unavailable, the sender retries).", "transport", "reason"),
		rejectedLogs:     counter("rejected_log_records_total", "Received log records not stored: refused by the ingester (partial_success) or in a request that failed to store (unavailable, the sender retries).", "transport", "reason"),
		rejectedRequests: counter("rejected_requests_total", "OTLP requests refused before their items could be counted, by reason.", "signal", "transport", "reason"),
		ingestFailures:   counter("ingest_failures_total", "OTLP requests the ingester failed to store; the sender was told to retry.", "signal", "transport"),
		repaired:         counter("invalid_utf8_repaired_requests_total", "OTLP requests accepted after replacing invalid UTF-8 in their strings.", "signal", "transport"),
		duration: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "convtrace", Subsystem: "otlp", Name: "request_duration_seconds",
			Help:    "Time from receiving an OTLP request to answering it, storage included.",
			Buckets: prometheus.DefBuckets,
		}, []string{"signal", "transport"})),
	}
	// Zero series from the start, so a dashboard shows 0 rather than nothing.
	for _, tr := range []string{transportHTTP, transportGRPC} {
		m.receivedSpans.WithLabelValues(tr)
		m.receivedLogs.WithLabelValues(tr)
		m.droppedPoints.WithLabelValues(tr)
		for _, sig := range []*signal{traces, logs} {
			m.ingestFailures.WithLabelValues(sig.name, tr)
		}
	}
	return m
}

func (m *metrics) received(sig *signal, transport string) prometheus.Counter {
	switch sig {
	case traces:
		return m.receivedSpans.WithLabelValues(transport)
	case metricPoints:
		return m.droppedPoints.WithLabelValues(transport)
	}
	return m.receivedLogs.WithLabelValues(transport)
}

func (m *metrics) rejected(sig *signal, transport, reason string) prometheus.Counter {
	if sig == traces {
		return m.rejectedSpans.WithLabelValues(transport, reason)
	}
	return m.rejectedLogs.WithLabelValues(transport, reason)
}

// register registers c in reg, or returns the collector already registered
// there under the same name, so an HTTP handler and a gRPC server built
// with one registry share their metrics.
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(err) // a name clash with a different metric type is a programming error
}
