// Package testkit holds the real parts convtrace's tests run against, in
// one place:
//
//   - ClickHouse: one shared server per test binary, started on first use
//     on free loopback ports, with a fresh database per test (Main,
//     SharedClickHouse, Open, DSN); and a server of a test's own, to freeze
//     (SIGSTOP), kill and restart (OwnClickHouse, Signal, Restart).
//   - convtrace itself, built once per test binary and run as child
//     processes a test may kill -9 (Binary, Start, Serve).
//   - A ClickHouse cluster of a test's own, ZooKeeper and 2 shards × 2
//     replicas (OwnCluster, internal/chcluster).
//   - A headless Chromium driven with chromedp, with screenshots under
//     test-output/screenshots or $CONVTRACE_TEST_OUTPUT (Browser,
//     Screenshot).
//   - OTLP payloads the Go protobuf encoder refuses to write, such as
//     strings that are not valid UTF-8 (RawTraceRequest).
//   - An OTLP/HTTP receiver that keeps every export request, and writes
//     OTLP/JSON with hex ids (OTLPCapture, MarshalOTLPJSON); and the
//     server-sent event writer of the fake model providers (SSE).
//
// Tests skip with a clear message when no ClickHouse or Chromium binary
// exists (the cluster tests also when ZooKeeper or java is missing), and
// fail instead when CONVTRACE_REQUIRE_CLICKHOUSE=1, CONVTRACE_REQUIRE_CLUSTER=1 or
// CONVTRACE_REQUIRE_CHROMIUM=1 (as make test and CI set them).
package testkit
