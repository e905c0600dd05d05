package ddl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// DefaultDatabase is the database used when a DSN names none.
const DefaultDatabase = "convtrace"

// ClusterParam is the DSN parameter that names the ClickHouse cluster
// convtrace's tables are spread over (WithCluster), as in
// clickhouse://host:9000/convtrace?cluster=NAME: every part of convtrace
// that connects with a DSN learns it there. It is not a server setting.
const ClusterParam = "cluster"

// DSNCluster returns the cluster a DSN names, empty for one server.
func DSNCluster(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return u.Query().Get(ClusterParam)
}

// WithDSNCluster returns dsn naming cluster (none when empty).
func WithDSNCluster(dsn, cluster string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse clickhouse DSN: %w", err)
	}
	q := u.Query()
	if cluster == "" {
		q.Del(ClusterParam)
	} else {
		q.Set(ClusterParam, cluster)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// ParseDSN parses a clickhouse-go DSN such as
// clickhouse://127.0.0.1:9000/convtrace, defaulting the database to
// DefaultDatabase. A DSN that names a cluster (ClusterParam) gets the
// settings every connection to it needs.
func ParseDSN(dsn string) (*clickhouse.Options, error) {
	cluster := DSNCluster(dsn)
	if cluster != "" {
		var err error
		if dsn, err = WithDSNCluster(dsn, ""); err != nil {
			return nil, err
		}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse clickhouse DSN: %w", err)
	}
	if u.Scheme != "clickhouse" && u.Scheme != "tcp" {
		return nil, fmt.Errorf("parse clickhouse DSN %q: scheme must be clickhouse:// (or tcp://), like clickhouse://127.0.0.1:9000/convtrace", dsn)
	}
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse clickhouse DSN: %w", err)
	}
	if opts.Auth.Database == "" || opts.Auth.Database == "default" {
		opts.Auth.Database = DefaultDatabase
	}
	if cluster != "" {
		if opts.Settings == nil {
			opts.Settings = clickhouse.Settings{}
		}
		for k, v := range clusterSettings() {
			opts.Settings[k] = v
		}
	}
	return opts, nil
}

// Open connects to the DSN's database, creating the database first when it
// does not exist (on every server of the DSN's cluster): for writers,
// which then migrate, with ForDSN(dsn). It does not
// migrate.
func Open(ctx context.Context, dsn string) (driver.Conn, error) {
	opts, bootConn, err := openServer(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer bootConn.Close()
	if err := createDatabase(ctx, bootConn, opts.Auth.Database, DSNCluster(dsn)); err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	return dsnConn{conn, dsn}, nil
}

// createDatabase creates the database, on every server of cluster when it
// is not empty. A distributed DDL statement waits for every server: it
// runs only when the connected server lacks the database, so that a
// replica that is down stops no writer (see createMigrations).
func createDatabase(ctx context.Context, conn driver.Conn, db, cluster string) error {
	create := "CREATE DATABASE IF NOT EXISTS " + quoteIdent(db)
	if cluster != "" {
		if err := checkProfile(ctx, conn, cluster); err != nil {
			return err
		}
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.databases WHERE name = ?", db).Scan(&n); err != nil {
			return fmt.Errorf("look up database %s: %w", db, err)
		}
		if n > 0 {
			return nil
		}
		create += " ON CLUSTER " + quoteIdent(cluster)
	}
	if err := execDDL(ctx, conn, create, cluster); err != nil {
		return fmt.Errorf("create database %s: %w", db, err)
	}
	return nil
}

// ErrNoSchema means the DSN's database does not exist or holds no
// convtrace schema of this version: `convtrace migrate` makes it.
var ErrNoSchema = errors.New("no convtrace schema")

// OpenExisting connects to the DSN's database for reading: it creates
// nothing, and a database that does not exist or is not migrated to this
// version is ErrNoSchema, with the command that makes it.
func OpenExisting(ctx context.Context, dsn string) (driver.Conn, error) {
	opts, bootConn, err := openServer(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer bootConn.Close()
	if cluster := DSNCluster(dsn); cluster != "" {
		if err := checkProfile(ctx, bootConn, cluster); err != nil {
			return nil, err
		}
	}
	db := opts.Auth.Database
	var databases, tables uint64
	if err := bootConn.QueryRow(ctx, `SELECT
    (SELECT count() FROM system.databases WHERE name = ?),
    (SELECT count() FROM system.tables WHERE database = ? AND name = 'schema_migrations')`, db, db).Scan(&databases, &tables); err != nil {
		return nil, fmt.Errorf("look up database %s: %w", db, err)
	}
	const fix = "create it with `convtrace migrate --clickhouse DSN` (or check the DSN's database name)"
	switch {
	case databases == 0:
		return nil, fmt.Errorf("%w: database %q does not exist on %s: %s", ErrNoSchema, db, strings.Join(opts.Addr, ","), fix)
	case tables == 0:
		return nil, fmt.Errorf("%w: database %q on %s has no convtrace tables: %s", ErrNoSchema, db, strings.Join(opts.Addr, ","), fix)
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	v, err := Version(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if want := Migrations()[len(Migrations())-1].Version; v < want {
		conn.Close()
		return nil, fmt.Errorf("%w: database %q is at schema version %d, this convtrace reads version %d: run `convtrace migrate --clickhouse DSN`",
			ErrNoSchema, db, v, want)
	}
	return dsnConn{conn, dsn}, nil
}

// dialTimeout bounds connecting to a server and its handshake, unless the
// DSN sets dial_timeout: a DSN that reaches something else than
// ClickHouse's native protocol then fails in seconds, not the driver's 30.
const dialTimeout = 3 * time.Second

// openServer parses the DSN and connects to its server with no database,
// and pings it. A port that answers HTTP (ClickHouse's own 8123, say) gets
// a hint.
func openServer(ctx context.Context, dsn string) (*clickhouse.Options, driver.Conn, error) {
	opts, err := ParseDSN(dsn)
	if err != nil {
		return nil, nil, err
	}
	boot := *opts
	boot.Auth.Database = ""
	if boot.DialTimeout == 0 {
		boot.DialTimeout = dialTimeout
	}
	conn, err := clickhouse.Open(&boot)
	if err != nil {
		return nil, nil, fmt.Errorf("open clickhouse: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, boot.DialTimeout+time.Second)
	defer cancel()
	if err := conn.Ping(pingCtx); err != nil {
		conn.Close()
		for _, addr := range opts.Addr {
			if speaksHTTP(ctx, addr) {
				return nil, nil, fmt.Errorf("connect to clickhouse at %s: it answers HTTP, not ClickHouse's native protocol: "+
					"a DSN names the native TCP port (9000 by default, not the HTTP port 8123): %w", addr, err)
			}
		}
		return nil, nil, fmt.Errorf("connect to clickhouse at %s: %w", strings.Join(opts.Addr, ","), err)
	}
	return opts, conn, nil
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

// quoteIdent quotes a ClickHouse identifier with backticks.
func quoteIdent(name string) string {
	out := []byte{'`'}
	for i := 0; i < len(name); i++ {
		if name[i] == '`' || name[i] == '\\' {
			out = append(out, '\\')
		}
		out = append(out, name[i])
	}
	return string(append(out, '`'))
}
