// Package chtest gives integration tests a real ClickHouse server: one per
// test binary, started on first use on free loopback ports in a temporary
// folder, with a fresh database per test. Tests skip with a clear message
// when no server binary exists, and fail instead when
// CONVTRACE_REQUIRE_CLICKHOUSE=1 (as make test and CI set it).
package chtest
