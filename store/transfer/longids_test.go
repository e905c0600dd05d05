package transfer_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/transfer"
)

// Ids as long as the checks allow, in batches full of them: every query an
// export or an import runs stays within the server's query size.
func TestLongIDs(t *testing.T) {
	ctx := context.Background()
	src, _ := testkit.Open(t)
	var turns []schema.Turn
	var spans []schema.Span
	start := uint64(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	for th := range 300 {
		thread := fmt.Sprintf("%0900d", th)
		for c := range 2 {
			span := strings.Repeat("s", 900) + fmt.Sprint(th*100+c)
			trace := strings.Repeat("t", 900) + fmt.Sprint(th*100+c)
			turns = append(turns, schema.Turn{TurnID: schema.PromptTurnID(span), TraceID: trace, SpanID: span, ThreadID: thread,
				Project: "long", Role: schema.RolePrompt, StartNS: start + uint64(c), Content: "[]"})
			spans = append(spans, schema.Span{TraceID: trace, SpanID: span, ThreadID: thread, Project: "long", StartNS: start + uint64(c)})
		}
	}
	if err := store.NewRowStore(src).Store(ctx, turns, spans); err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	n, err := transfer.Export(ctx, src, &file, store.ExportFilter{}, transfer.JSONL)
	if err != nil || n.Turns != int64(len(turns)) || n.Spans != int64(len(spans)) {
		t.Fatalf("export: %+v, %v", n, err)
	}
	dst, _ := testkit.Open(t)
	for _, want := range []transfer.Counts{{Threads: 300, Turns: 600, Spans: 600}, {}} {
		res, err := transfer.Import(ctx, dst, bytes.NewReader(file.Bytes()), "long.jsonl")
		if err != nil || res.Imported != want {
			t.Fatalf("import: %+v, %v; want %+v imported", res, err, want)
		}
	}
}
