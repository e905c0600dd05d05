// Command convtrace records, stores and shows what AI agents say to each
// other.
//
//	convtrace serve    run the viewer (and, later, the OTLP collector)
//	convtrace demo     record one demo pipeline run
//	convtrace migrate  apply pending schema migrations
//
// Every command takes --clickhouse DSN (env CONVTRACE_CLICKHOUSE); without
// it, a local ClickHouse server is started with its data under --data.
package main
