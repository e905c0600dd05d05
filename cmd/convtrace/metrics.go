package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/convtrace/convtrace/collector"
)

// registerIngestMetrics exposes the ingester's counters on reg, read when
// Prometheus scrapes. What arrives and what is refused the receivers count
// themselves (convtrace_otlp_*).
func registerIngestMetrics(reg *prometheus.Registry, ing *collector.Ingester) {
	counter := func(name, help string, read func(collector.IngestStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "convtrace", Name: name, Help: help},
			func() float64 { return float64(read(ing.Stats())) })
	}
	gauge := func(name, help string, read func(collector.IngestStats) int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "convtrace", Name: name, Help: help},
			func() float64 { return float64(read(ing.Stats())) })
	}
	reg.MustRegister(
		counter("turns_mapped_total", "Conversation turns mapped from spans and log records.", func(s collector.IngestStats) int64 { return s.TurnsMapped }),
		counter("map_failures_total", "Spans stored without turns because mapping failed.", func(s collector.IngestStats) int64 { return s.MapFailures }),
		counter("rows_written_total", "Rows stored in ClickHouse.", func(s collector.IngestStats) int64 { return s.Written }),
		counter("rows_refused_total", "Rows answered not stored to a sender that retries: queue full or storage failing.", func(s collector.IngestStats) int64 { return s.Refused }),
		counter("rows_lost_total", "Rows no one retries and nothing keeps.", func(s collector.IngestStats) int64 { return s.Lost }),
		gauge("queue_rows", "Rows waiting to be written.", func(s collector.IngestStats) int64 { return s.Queued }),
		gauge("join_held", "Spans and log groups waiting in the join window.", func(s collector.IngestStats) int64 { return s.Held }),
	)
}

// newInsertHistogram registers the latency of ClickHouse inserts.
func newInsertHistogram(reg *prometheus.Registry) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "convtrace", Name: "insert_duration_seconds", Help: "Duration of one batch insert into ClickHouse.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
	})
	reg.MustRegister(h)
	return h
}
