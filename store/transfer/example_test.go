package transfer_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/transfer"
)

// Export one project's threads as JSON lines. The example needs a
// ClickHouse server, so it is compiled but not run; the package's tests
// run the same calls against a real one.
func ExampleExport() {
	ctx := context.Background()
	conn, err := ddl.OpenExisting(ctx, "clickhouse://127.0.0.1:9000/convtrace")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	n, err := transfer.Export(ctx, conn, os.Stdout, store.ExportFilter{Project: "shipcode"}, transfer.JSONL)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "exported %d threads, %d turns\n", n.Threads, n.Turns)
}

// Import an export file into another database, migrated beforehand
// (convtrace migrate).
func ExampleImport() {
	ctx := context.Background()
	conn, err := ddl.OpenExisting(ctx, "clickhouse://127.0.0.1:9000/restored")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	f, err := os.Open("threads.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	res, err := transfer.Import(ctx, conn, f, f.Name())
	if err != nil {
		log.Fatal(err) // refused whole: errors.Is(err, transfer.ErrInvalid)
	}
	fmt.Printf("imported %d turns, skipped %d; %d bad lines\n", res.Imported.Turns, res.Skipped.Turns, res.BadLineCount)
}
