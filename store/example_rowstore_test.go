package store_test

import (
	"context"
	"log"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/ddl"
)

// Store rows read back from an export in another database, as the writer
// would have stored them (convtrace import does this, a batch at a time).
func ExampleRowStore() {
	ctx := context.Background()
	conn, err := ddl.Open(ctx, "clickhouse://127.0.0.1:9000/restored")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := ddl.Migrate(ctx, conn); err != nil {
		log.Fatal(err)
	}
	turns := []schema.Turn{{
		TurnID: schema.PromptTurnID("span-1"), TraceID: "trace-1", SpanID: "span-1", ThreadID: "issue-42",
		Role: schema.RolePrompt, StartNS: 1777000000000000000,
		Content: `[{"role":"user","parts":[{"type":"text","content":"Review the plan"}]}]`,
	}}
	if err := store.NewRowStore(conn).Store(ctx, turns, nil); err != nil {
		log.Fatal(err)
	}
}
