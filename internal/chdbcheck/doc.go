// Package chdbcheck runs SQL in chDB, the in-process ClickHouse engine, so
// that tests can check convtrace's DDL and queries against a modern
// ClickHouse (26.x) on machines whose only server is Debian's 18.16.
//
// chDB comes from npm: run.mjs, next to this file, drives the chdb package
// under Node and Run talks to it over stdin and stdout. Install it with
//
//	npm ci --prefix internal/chdbcheck --ignore-scripts
//
// (make test does). Without node or the installed package Run returns
// ErrUnavailable, which SkipOrFail turns into a skip unless
// CONVTRACE_REQUIRE_CHDB=1.
package chdbcheck
