package store_test

import (
	"context"
	"fmt"
	"log"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/ddl"
)

// Rebuild a short, fresh context for the next model call from the full
// conversation convtrace stored. The example needs a ClickHouse server, so
// it is compiled but not run; the package's tests run RecentContext against
// a real one.
func ExampleRecentContext() {
	ctx := context.Background()
	conn, err := ddl.Open(ctx, "clickhouse://127.0.0.1:9000/convtrace")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	msgs, err := store.RecentContext(ctx, conn, "demo-0123456789abcdef", 10)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		// Hand these to the provider's chat API, after a system prompt
		// describing the current state.
		fmt.Printf("%s (%s, %s): %.60s\n", m.Role, m.Speaker, m.Phase, m.Content)
	}
}
