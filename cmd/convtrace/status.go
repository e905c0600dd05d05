package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/convtrace/convtrace/store/localstore"
)

// statusCmd prints where the local store and the serve running on it
// answer, so that a pipeline anywhere on the machine can reach them. It
// starts nothing and exits 3 when no serve runs there.
func statusCmd(fs *flag.FlagSet) func(ctx context.Context, out streams, _ []string) error {
	data := fs.String("data", localstore.Dir(), "the local store (env CONVTRACE_DATA)")
	return func(ctx context.Context, out streams, _ []string) error {
		w := tabwriter.NewWriter(out.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "data\t%s\n", *data)
		dsn, err := localstore.DSN(*data)
		switch {
		case err != nil:
			fmt.Fprintf(w, "clickhouse\tnone yet: `convtrace serve` (or `make run`) starts it\n")
		case localstore.Running(ctx, *data) != nil:
			fmt.Fprintf(w, "clickhouse\t%s\trunning\n", dsn)
		default:
			fmt.Fprintf(w, "clickhouse\t%s\tnot running: `convtrace serve` starts it\n", dsn)
		}
		e, serving := localstore.ServeEndpoints(*data)
		if serving {
			fmt.Fprintf(w, "viewer\t%s\n", e.Viewer)
			if e.OTLPHTTP != "" {
				fmt.Fprintf(w, "otlp http\t%s\tOTEL_EXPORTER_OTLP_ENDPOINT=%s\n", e.OTLPHTTP, e.OTLPHTTP)
			}
			if e.OTLPGRPC != "" {
				fmt.Fprintf(w, "otlp grpc\t%s\n", e.OTLPGRPC)
			}
		} else {
			fmt.Fprintf(w, "viewer\tnot running: start it with `convtrace serve`\n")
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if !serving {
			return exitCode(3)
		}
		return nil
	}
}
