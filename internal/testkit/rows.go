package testkit

import (
	"context"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/schema"
)

// InsertTurns writes rows to conversations in one batch, in the order
// given.
func InsertTurns(t testing.TB, conn driver.Conn, turns ...schema.Turn) {
	t.Helper()
	insertRows(t, conn, "conversations", schema.TurnColumns, (*schema.Turn).Values, turns)
}

// InsertSpans writes rows to spans in one batch, in the order given.
func InsertSpans(t testing.TB, conn driver.Conn, spans ...schema.Span) {
	t.Helper()
	insertRows(t, conn, "spans", schema.SpanColumns, (*schema.Span).Values, spans)
}

// insertRows writes rows to table's columns in one batch.
func insertRows[T any](t testing.TB, conn driver.Conn, table string, columns []string, values func(*T) []any, rows []T) {
	t.Helper()
	batch, err := conn.PrepareBatch(context.Background(), "INSERT INTO "+table+" ("+strings.Join(columns, ", ")+")")
	if err != nil {
		t.Fatalf("prepare batch of %s: %v", table, err)
	}
	defer batch.Close()
	for i := range rows {
		if err := batch.Append(values(&rows[i])...); err != nil {
			t.Fatalf("append row %d to %s: %v", i, table, err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatalf("insert into %s: %v", table, err)
	}
}

// SummaryVersions reads the newest computed_ns of each thread's
// summaries: it moves when a thread's summary is recomputed.
func SummaryVersions(t testing.TB, conn driver.Conn) map[string]uint64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT thread_id, max(computed_ns) FROM thread_summary GROUP BY thread_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	at := map[string]uint64{}
	for rows.Next() {
		var id string
		var ns uint64
		if err := rows.Scan(&id, &ns); err != nil {
			t.Fatal(err)
		}
		at[id] = ns
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return at
}

// Strings runs query, which selects one String column, and returns its
// values in the order read.
func Strings(t testing.TB, conn driver.Conn, query string, args ...any) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("scan %s: %v", query, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read %s: %v", query, err)
	}
	return out
}
