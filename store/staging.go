package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// SpanKey names a span, and a staged call by its span.
type SpanKey struct{ TraceID, SpanID string }

// ProjectTrace is a trace of a project: spans are sorted by both.
type ProjectTrace struct{ Project, TraceID string }

// SpanNode is what the spans table tells of a span's place in its trace.
type SpanNode struct {
	TraceID, SpanID, ParentSpanID, Name string
	Attrs, Resource                     []schema.Attr
}

// DueCall is a staged call ready to be completed, with the bytes of its
// records.
type DueCall struct {
	SpanKey
	Bytes uint64
}

const selectStaged = `
SELECT trace_id, span_id, record_id, kind, pos, received_ns, merged, payload
FROM join_staging
WHERE (trace_id, span_id) IN (?)
ORDER BY received_ns, record_id`

// EachStaged calls fn with every join_staging row of the calls of keys,
// in the order they were received; r is reused between calls.
func EachStaged(ctx context.Context, db DB, keys []SpanKey, fn func(r *schema.Staged) error) error {
	rows, err := db.Query(ctx, selectStaged, keySet(keys))
	if err != nil {
		return fmt.Errorf("read join_staging: %w", err)
	}
	defer rows.Close()
	var (
		r       schema.Staged
		payload string
	)
	for rows.Next() {
		if err := rows.Scan(&r.TraceID, &r.SpanID, &r.RecordID, &r.Kind, &r.Pos, &r.ReceivedNS, &r.Merged, &payload); err != nil {
			return fmt.Errorf("read join_staging: %w", err)
		}
		r.Payload = []byte(payload)
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read join_staging: %w", err)
	}
	return nil
}

// selectDue finds the calls with records not merged into written turns
// yet whose first record came before the window's cutoff, or that have
// their span and nothing newer than the settle cutoff.
const selectDue = `
SELECT trace_id, span_id, sumIf(length(payload), kind != 2)
FROM join_staging
WHERE ts >= ?
GROUP BY trace_id, span_id
HAVING uniqExactIf(record_id, kind != 2) > maxIf(merged, kind = 2)
   AND (minIf(received_ns, kind != 2) <= ?
        OR (countIf(kind = 0) > 0 AND maxIf(received_ns, kind != 2) <= ?))
LIMIT ?`

// DueStaged returns at most limit calls staged since since that have
// records not merged yet and either a first record received before
// windowEnd or their span and no record received after settled.
func DueStaged(ctx context.Context, db DB, since, windowEnd, settled time.Time, limit int) ([]DueCall, error) {
	rows, err := db.Query(ctx, selectDue, since.Truncate(time.Second),
		uint64(windowEnd.UnixNano()), uint64(settled.UnixNano()), limit)
	if err != nil {
		return nil, fmt.Errorf("find due calls: %w", err)
	}
	defer rows.Close()
	var due []DueCall
	for rows.Next() {
		var c DueCall
		if err := rows.Scan(&c.TraceID, &c.SpanID, &c.Bytes); err != nil {
			return nil, fmt.Errorf("find due calls: %w", err)
		}
		due = append(due, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find due calls: %w", err)
	}
	return due, nil
}

const selectStagedSpans = `
SELECT DISTINCT trace_id, span_id
FROM join_staging
WHERE trace_id IN (?) AND kind = ?`

// StagedSpans returns the calls of traces whose span is staged.
func StagedSpans(ctx context.Context, db DB, traceIDs []string) ([]SpanKey, error) {
	rows, err := db.Query(ctx, selectStagedSpans, ddl.Tuple(traceIDs), schema.StagedSpan)
	if err != nil {
		return nil, fmt.Errorf("find the staged calls of traces: %w", err)
	}
	defer rows.Close()
	var keys []SpanKey
	for rows.Next() {
		var k SpanKey
		if err := rows.Scan(&k.TraceID, &k.SpanID); err != nil {
			return nil, fmt.Errorf("find the staged calls of traces: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

func selectStagingPartitions(cluster, database string) string {
	return "SELECT DISTINCT partition FROM " + ddl.ActiveParts("join_staging", cluster, database)
}

// DropStagingBefore drops the hourly partitions of join_staging older
// than before, on every shard of a cluster.
func DropStagingBefore(ctx context.Context, db DB, before time.Time) error {
	c := db.Cluster()
	rows, err := db.Query(ctx, selectStagingPartitions(c.Name, c.Database))
	if err != nil {
		return fmt.Errorf("list join_staging partitions: %w", err)
	}
	var old []string
	oldest := before.Unix() / 3600
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return fmt.Errorf("list join_staging partitions: %w", err)
		}
		if hour, err := strconv.ParseInt(p, 10, 64); err == nil && hour < oldest {
			old = append(old, strconv.FormatInt(hour, 10))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list join_staging partitions: %w", err)
	}
	for _, p := range old {
		if err := ddl.DropPartition(ctx, db, "join_staging", p); err != nil {
			return fmt.Errorf("drop join_staging partition %s: %w", p, err)
		}
	}
	return nil
}

const selectTrees = `
SELECT trace_id, span_id, parent_span_id, name, attributes.key, attributes.value, resource.key, resource.value
FROM spans
WHERE (project, trace_id) IN (?)`

// EachTraceSpan calls fn with the place of every span of traces.
func EachTraceSpan(ctx context.Context, db DB, traces []ProjectTrace, fn func(SpanNode)) error {
	set := make([]clickhouse.GroupSet, len(traces))
	for i, pt := range traces {
		set[i] = clickhouse.GroupSet{Value: []any{pt.Project, pt.TraceID}}
	}
	rows, err := db.Query(ctx, selectTrees, set)
	if err != nil {
		return fmt.Errorf("read the spans of traces: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			s          SpanNode
			keys, vals []string
			rk, rv     []string
		)
		if err := rows.Scan(&s.TraceID, &s.SpanID, &s.ParentSpanID, &s.Name, &keys, &vals, &rk, &rv); err != nil {
			return fmt.Errorf("read the spans of traces: %w", err)
		}
		s.Attrs, s.Resource = attrList(keys, vals), attrList(rk, rv)
		fn(s)
	}
	return rows.Err()
}

func attrList(keys, values []string) []schema.Attr {
	list := make([]schema.Attr, 0, len(keys))
	for i := range min(len(keys), len(values)) {
		list = append(list, schema.Attr{Key: keys[i], Value: values[i]})
	}
	return list
}

// keySet is the argument of an IN over (trace_id, span_id).
func keySet(keys []SpanKey) []clickhouse.GroupSet {
	set := make([]clickhouse.GroupSet, len(keys))
	for i, k := range keys {
		set[i] = clickhouse.GroupSet{Value: []any{k.TraceID, k.SpanID}}
	}
	return set
}
