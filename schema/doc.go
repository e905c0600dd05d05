// Package schema is convtrace's data contract with ClickHouse: the DDL of
// every table as embedded .sql templates, the versioned migrations that
// apply them, detection of what the connected server supports, the row types
// written to the tables with their column order, and the attribute keys
// (gen_ai.* and convtrace.*) that instrumentation writes and the collector
// reads.
//
// The same Go code writes to every supported server, from ClickHouse 18.16
// (Debian 12's package) to 26.x: column types stay inside the portable
// subset and the decorations newer servers offer (codecs, TTL, data-skipping
// indexes) are added to the DDL only when the server has them.
package schema
