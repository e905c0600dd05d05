// Package schema is convtrace's data contract, free of any database
// driver so that every instrumented pipeline can import it: the attribute
// keys (gen_ai.* and convtrace.*) that instrumentation writes and the
// collector reads, the roles, statuses and cost sources of a turn, the row
// types written to the tables with their column order, deterministic turn
// ids, and the one token rule (InputTokens).
//
// The tables themselves, their migrations and the connection to
// ClickHouse are in package ddl below it.
//
// Its place in the whole is described in docs/architecture.md.
package schema
