package collector

import (
	"context"
	"slices"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// inheritors returns a context record for each staged call under a donor
// span of the request (an ancestor carrying what calls inherit) that
// arrived before it, so that those calls are written again with what
// they inherit.
func (st *stager) inheritors(ctx context.Context, spans []mapping.Span) ([]schema.Staged, error) {
	donors := map[joinKey]bool{}
	var (
		traces []store.ProjectTrace
		ids    []string
	)
	for _, s := range spans {
		if mapping.Donor(s) {
			donors[joinKey{TraceID: s.TraceID, SpanID: s.SpanID}] = true
			if pt := (store.ProjectTrace{Project: mapping.Project(s), TraceID: s.TraceID}); !slices.Contains(traces, pt) {
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
	calls, err := store.StagedSpans(ctx, conn, ids)
	if err != nil || len(calls) == 0 {
		if err != nil {
			st.close()
		}
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
				out = append(out, schema.Staged{TraceID: k.TraceID, SpanID: k.SpanID, RecordID: "context:" + a.SpanID, Kind: schema.StagedContext})
			}
		}
	}
	return out, nil
}
