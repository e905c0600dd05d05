// Package chserver runs a local ClickHouse server as a managed child process:
// it finds the server binary on PATH (the modern single binary "clickhouse",
// run as "clickhouse server", or the older "clickhouse-server"), writes a
// minimal configuration into a data folder, listens on 127.0.0.1 on free
// ports, waits until the server answers and stops it cleanly. Its parts are
// compressed with zstd rather than the default LZ4: stored conversations
// are text, which zstd keeps in about 60% of LZ4's bytes (BENCHMARKS.md,
// issue 13).
//
// StartNode starts one server of several that name each other, with the
// ports and configuration its cluster gives it (internal/chcluster).
//
// convtrace serve and demo use it when no --clickhouse DSN is given, make run
// uses it through them, and every integration test uses it through testkit.
package chserver
