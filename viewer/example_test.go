package viewer_test

import (
	"context"
	"log"
	"log/slog"
	"net/http"
	"time"

	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/viewer"
)

// Serve the viewer on a migrated convtrace database. The example needs a
// ClickHouse server, so it is compiled but not run; the package's tests run
// the same wiring against a real one.
func ExampleNew() {
	ctx := context.Background()
	conn, err := ddl.Open(ctx, "clickhouse://127.0.0.1:9000/convtrace")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := ddl.Migrate(ctx, conn); err != nil {
		log.Fatal(err)
	}

	v := viewer.New(conn, viewer.WithLogger(slog.Default()), viewer.WithThreadLimit(200))
	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: v.Handler(), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
