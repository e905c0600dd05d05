package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/convtrace/convtrace/viewer"
)

func serveCmd(fs *flag.FlagSet) func(context.Context, streams) error {
	var sf storageFlags
	sf.register(fs)
	listen := fs.String("listen", "127.0.0.1:8080", "address the viewer listens on")
	withDemo := fs.Bool("demo", false, "record one demo pipeline run before serving")
	return func(ctx context.Context, out streams) error {
		st, err := sf.open(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		if *withDemo {
			thread, err := recordDemo(ctx, st, out.stderr)
			if err != nil {
				return err
			}
			fmt.Fprintf(out.stdout, "demo thread %s\n", thread)
		}
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		srv := &http.Server{Handler: viewer.New(st.conn).Handler(), ReadHeaderTimeout: 10 * time.Second}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		fmt.Fprintf(out.stdout, "convtrace viewer on http://%s (Ctrl-C stops)\n", ln.Addr())
		select {
		case err := <-served:
			return fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
		}
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("shut down viewer: %w", err)
		}
		return nil
	}
}
