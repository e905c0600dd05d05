package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/convtrace/convtrace/store/ddl"
)

func migrateCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	return func(ctx context.Context, out streams, _ []string) error {
		st, err := sf.open(ctx, out.stderr) // open migrates
		if err != nil {
			return err
		}
		defer st.close()
		v, err := ddl.Version(ctx, st.conn)
		if err != nil {
			return err
		}
		caps, err := ddl.ServerCapabilities(ctx, st.conn)
		if err != nil {
			return err
		}
		fmt.Fprintf(out.stdout, "schema version %d (ClickHouse %s)\n", v, caps.Version)
		return nil
	}
}
