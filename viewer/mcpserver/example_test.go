package mcpserver_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/viewer/mcpserver"
)

// Serve the tools on standard input and output over a convtrace database,
// as `convtrace mcp` does. The example needs a ClickHouse server, so it is
// compiled but not run; the package's tests run the same wiring against a
// real one.
func ExampleNew() {
	ctx := context.Background()
	conn, err := ddl.OpenExisting(ctx, "clickhouse://127.0.0.1:9000/convtrace")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	srv := mcpserver.New(store.New(conn, 200, 5*time.Minute), "v1.0.0")
	if err := srv.Run(ctx, mcpserver.NewTransport(os.Stdin, os.Stdout)); err != nil {
		log.Fatal(err)
	}
}
