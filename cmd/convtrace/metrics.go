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
		counter("spool_set_aside_bytes_total", "Spool bytes moved to its damaged folder: damaged records, and records ClickHouse refused for good.", func(s collector.IngestStats) int64 { return s.SetAsideBytes }),
		counter("resume_failures_unrecognised_total", "Resumed agent runs that failed with no message convtrace knows: a rejected session in new words, maybe (a warning on the thread says more).", func(s collector.IngestStats) int64 { return s.ResumeFailuresUnrecognised }),
		counter("values_sanitised_total", "Costs and token counts stored as unknown because they were negative, NaN, infinite or too large.", func(s collector.IngestStats) int64 { return s.ValuesSanitised }),
		gauge("queue_rows", "Rows waiting to be written.", func(s collector.IngestStats) int64 { return s.Queued }),
		counter("join_staged_total", "Halves of OTLP calls (content-less spans, content log records) stored in join_staging.", func(s collector.IngestStats) int64 { return s.Staged }),
		counter("join_written_total", "Writes of a staged call's turns, first or merging late records.", func(s collector.IngestStats) int64 { return s.Joined }),
		counter("join_failures_total", "Attempts to write staged calls that failed; a later sweep retries them.", func(s collector.IngestStats) int64 { return s.JoinFailures }),
		redactions{ing},
	)
}

// redactionsDesc describes convtrace_redactions_total{kind}.
var redactionsDesc = prometheus.NewDesc("convtrace_redactions_total",
	"Secrets replaced by [REDACTED:kind] before storage, by kind: each place a secret was stored counts (a prompt turn and an attribute of its span, say).", []string{"kind"}, nil)

// redactions exposes the ingester's redaction counts, one series per kind
// (none when redaction is off).
type redactions struct{ ing *collector.Ingester }

func (redactions) Describe(ch chan<- *prometheus.Desc) { ch <- redactionsDesc }

func (r redactions) Collect(ch chan<- prometheus.Metric) {
	for kind, n := range r.ing.Stats().Redactions {
		ch <- prometheus.MustNewConstMetric(redactionsDesc, prometheus.CounterValue, float64(n), kind)
	}
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
