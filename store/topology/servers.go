package topology

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Querier is what topology needs of a connection: it reads system tables.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
}

// Shards returns the addresses (host:port) of the cluster's servers,
// shard by shard, as system.clusters on db's server lists them; on one
// server, the DSN's. A cluster the server does not know is an error.
func (c Cluster) Shards(ctx context.Context, db Querier) ([][]string, error) {
	if c.Name == "" {
		return [][]string{c.Addrs()}, nil
	}
	rows, err := db.Query(ctx, "SELECT shard_num, host_address, port FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num", c.Name)
	if err != nil {
		return nil, fmt.Errorf("query the servers of cluster %s: %w", c.Name, err)
	}
	defer rows.Close()
	var shards [][]string
	last := uint32(0)
	for rows.Next() {
		var shard uint32
		var host string
		var port uint16
		if err := rows.Scan(&shard, &host, &port); err != nil {
			return nil, fmt.Errorf("scan the servers of cluster %s: %w", c.Name, err)
		}
		if shard != last || len(shards) == 0 {
			shards = append(shards, nil)
			last = shard
		}
		shards[len(shards)-1] = append(shards[len(shards)-1], net.JoinHostPort(host, strconv.Itoa(int(port))))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the servers of cluster %s: %w", c.Name, err)
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("cluster %s: no server in system.clusters", c.Name)
	}
	return shards, nil
}

// OnShards calls f with a connection to one replica of each shard, in the
// database: the first replica of the shard for which f succeeds, as one
// down, frozen or read-only fails in seconds. A shard on no replica of
// which f succeeds is an error naming each replica's.
func (c Cluster) OnShards(ctx context.Context, db Querier, f func(conn driver.Conn) error) error {
	shards, err := c.Shards(ctx, db)
	if err != nil {
		return err
	}
	for _, replicas := range shards {
		if err := c.onReplica(replicas, f); err != nil {
			return err
		}
	}
	return nil
}

func (c Cluster) onReplica(replicas []string, f func(conn driver.Conn) error) error {
	var errs []error
	for _, addr := range replicas {
		conn, err := c.openAt(addr)
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

// Replica is a connection to one server of a cluster.
type Replica struct {
	Addr string // host:port
	driver.Conn
}

// Replicas returns a connection to every server of the cluster (Shards),
// in the database, to read each one's own system tables. The caller
// closes them.
func (c Cluster) Replicas(ctx context.Context, db Querier) ([]Replica, error) {
	shards, err := c.Shards(ctx, db)
	if err != nil {
		return nil, err
	}
	var replicas []Replica
	for _, addr := range slices.Concat(shards...) {
		conn, err := c.openAt(addr)
		if err != nil {
			for _, r := range replicas {
				r.Close()
			}
			return nil, err
		}
		replicas = append(replicas, Replica{Addr: addr, Conn: conn})
	}
	return replicas, nil
}

// At returns a connection to the cluster's database on the server at addr
// (host:port) alone, as the DSN says otherwise.
func (c Cluster) At(addr string) (*Conn, error) {
	conn, err := c.openAt(addr)
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: conn, cluster: c}, nil
}

// openAt connects to the server at addr as the DSN says, its handshake
// bounded by the DSN's dial_timeout or dialTimeout: a frozen server, which
// takes the connection and answers nothing, fails in seconds.
func (c Cluster) openAt(addr string) (driver.Conn, error) {
	opts, err := parseDSN(c.DSN)
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

// EveryReplica returns a table function reading the system table
// system.name of every server of the cluster, each replica of each shard
// (ClickHouse 18.16 has no clusterAllReplicas): remote() over Shards.
func (c Cluster) EveryReplica(ctx context.Context, db Querier, name string) (string, error) {
	shards, err := c.Shards(ctx, db)
	if err != nil {
		return "", err
	}
	// Host names and IP addresses hold nothing to escape.
	return fmt.Sprintf("remote('%s', system, %s)", strings.Join(slices.Concat(shards...), ","), name), nil
}
