package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/viewer"
	"github.com/convtrace/convtrace/viewer/mcpserver"
)

// mcpCmd serves the history over MCP on the command's standard input and
// output, which carry the protocol alone: progress and logs go to stderr.
func mcpCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	prices := fs.String("prices", "", "price file (YAML or JSON) over the built-in table, for the cost tool's cache savings")
	allowWrites := fs.Bool("allow-writes", false, "add the tools that write: reset_context (a thread's recent context starts anew) and set_title")
	return func(ctx context.Context, out streams, _ []string) error {
		p, err := loadPrices(*prices)
		if err != nil {
			return err
		}
		st, err := sf.openExisting(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		reads := store.New(st.conn, viewer.DefaultThreadLimit, viewer.DefaultInterruptedAfter).WithReplicas(st.replicaDialer())
		logger := slog.New(slog.NewTextHandler(out.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		opts := []mcpserver.Option{mcpserver.WithPrices(p), mcpserver.WithLogger(logger)}
		tools := "list_threads, get_thread, search, recent_context, cost"
		if *allowWrites {
			opts = append(opts, mcpserver.WithWrites(reads))
			tools += "; writing: reset_context, set_title"
		}
		srv := mcpserver.New(reads, buildVersion(), opts...)
		fmt.Fprintln(out.stderr, "convtrace MCP server on stdio: "+tools)
		if err := srv.Run(ctx, mcpserver.NewTransport(out.stdin, out.stdout)); err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
			return err
		}
		return nil
	}
}

// buildVersion is the module version convtrace was built at, "(devel)"
// for a build from a checkout.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
