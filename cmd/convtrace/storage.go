package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/chserver"
	"github.com/convtrace/convtrace/schema"
)

// storageFlags are the flags every command shares to find ClickHouse.
type storageFlags struct {
	dsn     string
	dataDir string
}

func (f *storageFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dsn, "clickhouse", os.Getenv("CONVTRACE_CLICKHOUSE"),
		"ClickHouse DSN, e.g. clickhouse://127.0.0.1:9000/convtrace (env CONVTRACE_CLICKHOUSE); empty starts a local server")
	def := os.Getenv("CONVTRACE_DATA")
	if def == "" {
		def = ".convtrace"
	}
	fs.StringVar(&f.dataDir, "data", def, "folder of the local ClickHouse server used when no DSN is given (env CONVTRACE_DATA)")
}

// storage is a migrated connection, and the local server behind it when
// this process manages one.
type storage struct {
	dsn    string
	conn   driver.Conn
	server *chserver.Server
}

// spoolDir is where rows that could not be stored wait for the next
// convtrace run or serve on this data folder.
func (f *storageFlags) spoolDir() string { return filepath.Join(f.dataDir, "spool") }

// open connects to the DSN, or to a local server (reusing one already
// running in the data folder, else starting one), and migrates.
func (f *storageFlags) open(ctx context.Context, progress io.Writer) (*storage, error) {
	s, err := f.locate(ctx, progress)
	if err != nil {
		return nil, err
	}
	conn, err := schema.Open(ctx, s.dsn)
	if err != nil {
		s.close()
		return nil, err
	}
	s.conn = conn
	res, err := schema.Migrate(ctx, conn)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	for _, m := range res.Applied {
		fmt.Fprintf(progress, "applied migration %04d_%s\n", m.Version, m.Name)
	}
	return s, nil
}

// locate returns the DSN, or that of a local server (reusing one already
// running in the data folder, else starting one), without connecting.
func (f *storageFlags) locate(ctx context.Context, progress io.Writer) (*storage, error) {
	s := &storage{dsn: f.dsn}
	if s.dsn == "" {
		dir := filepath.Join(f.dataDir, "clickhouse")
		srv, err := chserver.Ensure(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("local clickhouse: %w", err)
		}
		s.server = srv
		s.dsn = srv.DSN(schema.DefaultDatabase)
		if srv.Owned() {
			fmt.Fprintf(progress, "started local ClickHouse in %s (%s)\n", dir, s.dsn)
		} else {
			fmt.Fprintf(progress, "using the local ClickHouse already running in %s (%s)\n", dir, s.dsn)
		}
	}
	return s, nil
}

// close closes the connection and stops a local server this process started.
func (s *storage) close() {
	if s.conn != nil {
		s.conn.Close()
	}
	if s.server != nil && s.server.Owned() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = s.server.Stop(ctx)
	}
}
