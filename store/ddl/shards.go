package ddl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// On a cluster, an ALTER of a Replicated local table (a column added, a
// mutation, a partition dropped) runs on one replica of each shard, which
// replication carries to the others; it does not go through ClickHouse's
// distributed DDL queue (ON CLUSTER). There, in ClickHouse 18.16, an
// ALTER of a Replicated table may hang for good (ClickHouse#17089), or two
// replicas of a shard may both run it, and the second one's DDL worker then
// stops on "Node exists" and never runs another ON CLUSTER statement
// (ClickHouse#5064 is of this family).

// dsnConn is a connection Open or OpenExisting made. It keeps its DSN, so
// that work on a cluster can reach each server (onShards).
type dsnConn struct {
	driver.Conn
	dsn string
}

// errNoDSN means a connection to a cluster was not made by Open or
// OpenExisting, so its servers cannot be reached one by one.
var errNoDSN = errors.New("an ALTER on a cluster runs on one replica of each shard, which needs a connection made by ddl.Open or ddl.OpenExisting")

// dsnOf returns the DSN db was opened with, if Open or OpenExisting
// made it.
func dsnOf(db DB) (string, error) {
	if c, ok := db.(dsnConn); ok {
		return c.dsn, nil
	}
	return "", errNoDSN
}

// onShards calls f with a connection to a replica of each shard of
// cluster, in the database of dsn: the first replica of the shard for
// which f succeeds (one down, frozen or read-only fails in seconds, and
// the next is tried). A shard on no replica of which f succeeds is an
// error naming each replica's.
func onShards(ctx context.Context, db DB, dsn, cluster string, f func(conn driver.Conn) error) error {
	shards, err := shardAddrs(ctx, db, cluster)
	if err != nil {
		return err
	}
	for _, replicas := range shards {
		if err := onReplica(ctx, dsn, replicas, f); err != nil {
			return err
		}
	}
	return nil
}

func onReplica(ctx context.Context, dsn string, replicas []string, f func(conn driver.Conn) error) error {
	var errs []error
	for _, addr := range replicas {
		conn, err := openAt(dsn, addr)
		if err != nil {
			return err
		}
		err = f(conn)
		conn.Close()
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return fmt.Errorf("on no replica of a shard: %w", errors.Join(errs...))
}

// openAt connects to the server at addr as dsn says, its handshake bounded
// by the DSN's dial_timeout or dialTimeout: a frozen server, which takes
// the connection and answers nothing, fails in seconds.
func openAt(dsn, addr string) (driver.Conn, error) {
	opts, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	opts.Addr = []string{addr}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = dialTimeout
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse at %s: %w", addr, err)
	}
	return conn, nil
}

// serverTimeout bounds a read of one server's system tables among all of
// a cluster's (servers).
const serverTimeout = 5 * time.Second

// servers is a connection to every server of a cluster, to read each one's
// own system tables. One that fails to answer (down, frozen) is left out
// from then on.
type servers struct {
	addrs []string
	conns []driver.Conn
}

func openServers(ctx context.Context, db DB, dsn, cluster string) (*servers, error) {
	shards, err := shardAddrs(ctx, db, cluster)
	if err != nil {
		return nil, err
	}
	s := &servers{}
	for _, addr := range slices.Concat(shards...) {
		conn, err := openAt(dsn, addr)
		if err != nil {
			s.close()
			return nil, err
		}
		s.addrs, s.conns = append(s.addrs, addr), append(s.conns, conn)
	}
	return s, nil
}

// countMutations sums countMutations over the servers that answer, and is
// an error when none does.
func (s *servers) countMutations(ctx context.Context, database string, tables []string) (pending, parts uint64, err error) {
	var errs []error
	for i := 0; i < len(s.conns); {
		qctx, cancel := context.WithTimeout(ctx, serverTimeout)
		p, n, err := countMutations(qctx, s.conns[i], database, tables)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.addrs[i], err))
			s.conns[i].Close()
			s.addrs, s.conns = slices.Delete(s.addrs, i, i+1), slices.Delete(s.conns, i, i+1)
			continue
		}
		pending, parts = pending+p, parts+n
		i++
	}
	if len(s.conns) == 0 {
		return 0, 0, fmt.Errorf("no server of the cluster answers: %w", errors.Join(errs...))
	}
	return pending, parts, nil
}

func (s *servers) close() {
	for _, c := range s.conns {
		c.Close()
	}
}
