// Package faulttest gives fault tests the real processes they break: a
// ClickHouse server of the test's own, which it may freeze (SIGSTOP), kill
// (SIGKILL) and restart on the same ports and data, and the convtrace
// binary, built once per test binary and run as `convtrace serve` or
// `convtrace run` child processes that a test may kill -9.
//
// Like chtest, it skips when no ClickHouse binary exists unless
// CONVTRACE_REQUIRE_CLICKHOUSE=1.
package faulttest
