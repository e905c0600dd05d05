// Package convtraceexporter is an OpenTelemetry Collector exporter, type
// convtrace, that stores the GenAI spans and log records of traces and
// logs pipelines in convtrace's ClickHouse tables.
//
// It is convtrace serve's ingest path inside a Collector: each request goes
// through collector.Ingester, so an export returns nil only once its rows
// (or the staged halves of its calls) are stored, and fails otherwise for
// exporterhelper's retry and sending queue to keep them. Log records that
// are no GenAI event are refused by the ingester and dropped, not retried.
// The traces and logs exporters of one configured component share one
// Ingester.
//
//	exporters:
//	  convtrace:
//	    dsn: clickhouse://127.0.0.1:9000/convtrace   # ?cluster=NAME for a cluster
//	    sending_queue:
//	      storage: file_storage                      # a persistent queue
//	service:
//	  pipelines:
//	    traces: {receivers: [otlp], exporters: [convtrace]}
//	    logs:   {receivers: [otlp], exporters: [convtrace]}
package convtraceexporter
