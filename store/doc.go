// Package query is convtrace's read side: every query the viewer and the
// CLI run against the convtrace database, and the summary tables those
// queries read (thread_summary, cost_daily, cost_thread_daily, cost_days),
// of which it is the only writer but for the stale marks the collector
// writes for late turns (collector/stale_days.go). It returns plain
// structs; rendering them
// is the viewer's (package viewer) or the CLI's.
//
// The SQL takes bound parameters and runs on every supported server,
// ClickHouse 18.16 through 26.x, so it uses neither window functions nor
// JSON functions. A turn delivered twice is read once (FINAL, or LIMIT 1
// BY turn_id).
//
// Its place in the whole is described in docs/architecture.md.
package store
