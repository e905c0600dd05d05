package collector

import (
	"context"
	"fmt"
	"slices"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// inheritors returns a context record for each staged call under a donor
// span of the request (an ancestor carrying what calls inherit) that
// arrived before it, so that those calls are written again with what
// they inherit.
func (st *stager) inheritors(ctx context.Context, spans []mapping.Span) ([]schema.Staged, error) {
	donors := map[joinKey]bool{}
	var (
		traces []projectTrace
		ids    []string
	)
	for _, s := range spans {
		if mapping.Donor(s) {
			donors[joinKey{s.TraceID, s.SpanID}] = true
			if pt := (projectTrace{mapping.Project(s), s.TraceID}); !slices.Contains(traces, pt) {
				traces, ids = append(traces, pt), append(ids, s.TraceID)
			}
		}
	}
	if len(traces) == 0 {
		return nil, nil
	}
	conn, err := st.connection(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, "SELECT DISTINCT trace_id, span_id FROM join_staging WHERE trace_id IN (?) AND kind = ?", ddl.Tuple(ids), schema.StagedSpan)
	if err != nil {
		st.close()
		return nil, fmt.Errorf("find the calls under arriving spans: %w", err)
	}
	var calls []joinKey
	for rows.Next() {
		var k joinKey
		if err := rows.Scan(&k.traceID, &k.spanID); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find the calls under arriving spans: %w", err)
		}
		calls = append(calls, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(calls) == 0 {
		return nil, err
	}
	tree, err := st.tree(ctx, conn, traces, spans)
	if err != nil {
		return nil, err
	}
	var out []schema.Staged
	for _, k := range calls {
		for _, a := range tree.ancestors(k) {
			if donors[a] {
				out = append(out, schema.Staged{TraceID: k.traceID, SpanID: k.spanID, RecordID: "context:" + a.spanID, Kind: schema.StagedContext})
			}
		}
	}
	return out, nil
}
