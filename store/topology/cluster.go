package topology

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Cluster is where a database lives: the ClickHouse cluster its tables
// are spread over, or one server when Name is empty, and the DSN that
// reaches its servers. Parse makes one from a DSN.
type Cluster struct {
	Name     string // as the servers' remote_servers name it; empty on one server
	Database string
	DSN      string // a server of the cluster, and the user that reaches every one
}

// Conn is a connection to a Cluster's database that says which Cluster
// it is: what reaches each server of it (OnShards, Replicas) starts there.
type Conn struct {
	driver.Conn
	cluster Cluster
}

var _ driver.Conn = (*Conn)(nil)

// Cluster is the cluster the connection's database is on.
func (c *Conn) Cluster() Cluster { return c.cluster }

// Open returns a connection to the cluster's database, which connects to
// its server as queries need it. It neither pings nor creates anything.
func (c Cluster) Open() (*Conn, error) {
	opts, err := parseDSN(c.DSN)
	if err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	return &Conn{Conn: conn, cluster: c}, nil
}

// dialTimeout bounds connecting to a server and its handshake, unless the
// DSN sets dial_timeout: a DSN that reaches something else than
// ClickHouse's native protocol then fails in seconds, not the driver's 30.
const dialTimeout = 3 * time.Second

// Dial connects to the DSN's server in no database, to create or look up
// the database, and pings it; a port that answers HTTP gets a hint. On a
// cluster it refuses a user whose profile lacks what convtrace needs.
func (c Cluster) Dial(ctx context.Context) (driver.Conn, error) {
	opts, err := parseDSN(c.DSN)
	if err != nil {
		return nil, err
	}
	opts.Auth.Database = ""
	if opts.DialTimeout == 0 {
		opts.DialTimeout = dialTimeout
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, opts.DialTimeout+time.Second)
	defer cancel()
	if err := conn.Ping(pingCtx); err != nil {
		conn.Close()
		for _, addr := range opts.Addr {
			if speaksHTTP(ctx, addr) {
				return nil, fmt.Errorf("connect to clickhouse at %s: it answers HTTP, not ClickHouse's native protocol: "+
					"a DSN names the native TCP port (9000 by default, not the HTTP port 8123): %w", addr, err)
			}
		}
		return nil, fmt.Errorf("connect to clickhouse at %s: %w", strings.Join(opts.Addr, ","), err)
	}
	if c.Name != "" {
		if err := checkProfile(ctx, conn, c.Name); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// Addrs are the addresses (host:port) the DSN names, none when it does
// not parse.
func (c Cluster) Addrs() []string {
	opts, err := parseDSN(c.DSN)
	if err != nil {
		return nil
	}
	return opts.Addr
}

// speaksHTTP says whether addr answers an HTTP request.
func speaksHTTP(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	if _, err := io.WriteString(c, "GET /ping HTTP/1.0\r\n\r\n"); err != nil {
		return false
	}
	head := make([]byte, 5)
	_, err = io.ReadFull(c, head)
	return err == nil && string(head) == "HTTP/"
}

// checkProfile fails when the user's profile lacks what convtrace's
// queries need on a cluster: without distributed_product_mode = 'global'
// the server refuses a subquery over a Distributed table inside a query
// over another (it runs the subquery once and sends its result to every
// shard, GLOBAL IN).
func checkProfile(ctx context.Context, db Querier, cluster string) error {
	rows, err := db.Query(ctx, "SELECT value FROM system.settings WHERE name = 'distributed_product_mode'")
	if err != nil {
		return fmt.Errorf("query settings: %w", err)
	}
	defer rows.Close()
	var mode string
	if rows.Next() {
		if err := rows.Scan(&mode); err != nil {
			return fmt.Errorf("scan settings: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	if mode != "global" {
		return fmt.Errorf("cluster %s: the user's profile has distributed_product_mode = %q: convtrace needs 'global' (README, \"Scaling out\")", cluster, mode)
	}
	return nil
}

// ClusterOf returns the cluster the connection's database is spread over,
// as its conversations table says (a Distributed table names it), and the
// database's name; the cluster is empty on one server.
func ClusterOf(ctx context.Context, db Querier) (cluster, database string, err error) {
	rows, err := db.Query(ctx, `SELECT currentDatabase(), engine, engine_full FROM system.tables
WHERE database = currentDatabase() AND name = 'conversations'`)
	if err != nil {
		return "", "", fmt.Errorf("query the engine of conversations: %w", err)
	}
	defer rows.Close()
	var engine, full string
	for rows.Next() {
		if err := rows.Scan(&database, &engine, &full); err != nil {
			return "", "", fmt.Errorf("scan the engine of conversations: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return "", "", fmt.Errorf("read the engine of conversations: %w", err)
	}
	if engine == "Distributed" {
		// Distributed(cluster, database, table, key), names maybe quoted.
		args, _ := strings.CutPrefix(full, "Distributed(")
		name, _, _ := strings.Cut(args, ",")
		cluster = strings.Trim(strings.TrimSpace(name), "`'\"")
	}
	return cluster, database, nil
}
