package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/chserver"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/localstore"
	"github.com/convtrace/convtrace/store/topology"
)

// storageFlags are the flags every command shares to find ClickHouse.
type storageFlags struct {
	dsn     string
	cluster string
	dataDir string
}

func (f *storageFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dsn, "clickhouse", os.Getenv("CONVTRACE_CLICKHOUSE"),
		"ClickHouse DSN, e.g. clickhouse://127.0.0.1:9000/convtrace (env CONVTRACE_CLICKHOUSE); empty starts a local server")
	fs.StringVar(&f.cluster, "cluster", os.Getenv("CONVTRACE_CLUSTER"),
		"the ClickHouse cluster (its remote_servers name) the tables are spread over, replicated and sharded by thread; needs --clickhouse (env CONVTRACE_CLUSTER; README, \"Scaling out\")")
	fs.StringVar(&f.dataDir, "data", localstore.Dir(),
		"the local store used when no DSN is given, shared by every command and Go pipeline (env CONVTRACE_DATA; default $XDG_DATA_HOME/convtrace, else ~/.local/share/convtrace)")
}

// storage is a migrated connection, and the local server behind it when
// this process manages one.
type storage struct {
	dsn    string
	conn   *topology.Conn
	server *chserver.Server

	mu       sync.Mutex
	replicas []*topology.Conn // opened by dialReplica, closed with the storage
}

// replicaDialer is how a store on a cluster reaches its servers one by one
// (store's WithReplicas); nil on one server.
func (s *storage) replicaDialer() store.Dialer {
	if s.conn.Cluster().Name == "" {
		return nil
	}
	return s.dialReplica
}

// dialReplica connects to the server at addr with the DSN's user,
// database and cluster settings.
func (s *storage) dialReplica(_ context.Context, addr string) (store.DB, error) {
	conn, err := s.conn.Cluster().At(addr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicas = append(s.replicas, conn)
	return conn, nil
}

// spoolDir is where rows that could not be stored wait for the next
// convtrace run or serve on this data folder.
func (f *storageFlags) spoolDir() string { return localstore.SpoolDir(f.dataDir) }

// openExisting connects to the DSN, or to the local store (reusing its
// server, else starting it), for a command that only reads: it creates no
// database and no table, and says to run convtrace migrate when they are
// missing.
func (f *storageFlags) openExisting(ctx context.Context, progress io.Writer) (*storage, error) {
	if f.dsn == "" {
		if _, err := os.Stat(localstore.ClickHouseDir(f.dataDir)); err != nil {
			return nil, fmt.Errorf("no local store in %s: record something first (convtrace serve --demo, convtrace run, convtrace demo), or give --clickhouse DSN", f.dataDir)
		}
	}
	s, err := f.locate(ctx, progress)
	if err != nil {
		return nil, err
	}
	if s.conn, err = ddl.OpenExisting(ctx, s.dsn); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// open connects to the DSN, or to a local server (reusing one already
// running in the data folder, else starting one), and migrates.
func (f *storageFlags) open(ctx context.Context, progress io.Writer) (*storage, error) {
	s, err := f.locate(ctx, progress)
	if err != nil {
		return nil, err
	}
	conn, err := ddl.Open(ctx, s.dsn)
	if err != nil {
		s.close()
		return nil, err
	}
	s.conn = conn
	res, err := ddl.Migrate(ctx, conn, ddl.ForCluster(conn.Cluster()))
	if err != nil {
		s.close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	for _, m := range res.Applied {
		fmt.Fprintf(progress, "applied migration %04d_%s\n", m.Version, m.Name)
	}
	return s, nil
}

// locate returns the DSN, naming the cluster if any, or that of a local
// server (reusing one already running in the data folder, else starting
// one), without connecting.
func (f *storageFlags) locate(ctx context.Context, progress io.Writer) (*storage, error) {
	s := &storage{dsn: f.dsn}
	if f.cluster != "" {
		if s.dsn == "" {
			return nil, fmt.Errorf("--cluster %s needs --clickhouse DSN, a server of that cluster: the local store is one server", f.cluster)
		}
		var err error
		if s.dsn, err = topology.DSNWithCluster(s.dsn, f.cluster); err != nil {
			return nil, err
		}
	}
	if s.dsn == "" {
		dir := localstore.ClickHouseDir(f.dataDir)
		srv, err := chserver.Ensure(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("local clickhouse: %w", err)
		}
		s.server = srv
		s.dsn = srv.DSN(topology.DefaultDatabase)
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
	s.mu.Lock()
	for _, conn := range s.replicas {
		conn.Close()
	}
	s.mu.Unlock()
	if s.server != nil && s.server.Owned() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = s.server.Stop(ctx)
	}
}

// maxRestarts bounds how often in a row supervise restarts a server that
// will not start.
const maxRestarts = 5

// supervise keeps the local ClickHouse running until ctx ends, logging
// what it does: one this process started is restarted whenever it exits;
// one another process started (a Go pipeline, convtrace run) is taken over
// once that process stops it. After maxRestarts failed starts in a row it
// gives up (readiness keeps saying storage is down). The returned function
// waits for it to return, before the server is stopped.
func (s *storage) supervise(ctx context.Context, log io.Writer) (wait func()) {
	done := make(chan struct{})
	if s.server == nil {
		close(done)
		return func() {}
	}
	go func() {
		defer close(done)
		if !s.server.Owned() && !s.takeOver(ctx, log) {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.server.Exited():
			}
			if ctx.Err() != nil {
				return
			}
			fmt.Fprintf(log, "local ClickHouse exited (%v): restarting it\n", s.server.ExitErr())
			if !retry(ctx, log, s.server.Restart) {
				return
			}
			fmt.Fprintf(log, "local ClickHouse restarted (%s)\n", s.dsn)
		}
	}()
	return func() { <-done }
}

// attachedPoll is how often serve checks that a ClickHouse another process
// owns still runs.
var attachedPoll = 2 * time.Second

// takeOver waits for the process that owns the local ClickHouse to stop it,
// then starts it again, on the same ports, as this process's own. It
// reports whether this process owns a running server.
func (s *storage) takeOver(ctx context.Context, log io.Writer) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(attachedPoll):
		}
		if chserver.Running(ctx, s.server.Dir()) != nil {
			continue
		}
		fmt.Fprintf(log, "the local ClickHouse was stopped by the process that started it: starting it here\n")
		dir := s.server.Dir()
		ok := retry(ctx, log, func(ctx context.Context) error {
			srv, err := chserver.Ensure(ctx, dir)
			if err == nil {
				s.server = srv
			}
			return err
		})
		if !ok {
			return false
		}
		if s.server.Owned() {
			fmt.Fprintf(log, "local ClickHouse started (%s)\n", s.dsn)
			return true
		}
	}
}

// retry runs start until it succeeds, at most maxRestarts times with a
// growing pause, and reports whether it did.
func retry(ctx context.Context, log io.Writer, start func(context.Context) error) bool {
	for attempt := 1; ; attempt++ {
		err := start(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if attempt == maxRestarts {
			fmt.Fprintf(log, "local ClickHouse did not start after %d attempts, giving up: %v\n", attempt, err)
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
}
