package ddl

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/store/topology"
)

// Open connects to the DSN's database, creating the database first when it
// does not exist (on every server of the DSN's cluster): for writers,
// which then migrate, with ForCluster(conn.Cluster()). It does not
// migrate.
func Open(ctx context.Context, dsn string) (*topology.Conn, error) {
	c, err := topology.Parse(dsn)
	if err != nil {
		return nil, err
	}
	boot, err := c.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer boot.Close()
	if err := createDatabase(ctx, boot, c); err != nil {
		return nil, err
	}
	return c.Open()
}

// createDatabase creates the database, on every server of a cluster. A
// distributed DDL statement waits for every server: it runs only when the
// connected server lacks the database, so that a replica that is down
// stops no writer (see createMigrations).
func createDatabase(ctx context.Context, conn driver.Conn, c topology.Cluster) error {
	create := "CREATE DATABASE IF NOT EXISTS " + quoteIdent(c.Database)
	if c.Name != "" {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.databases WHERE name = ?", c.Database).Scan(&n); err != nil {
			return fmt.Errorf("look up database %s: %w", c.Database, err)
		}
		if n > 0 {
			return nil
		}
		create += " ON CLUSTER " + quoteIdent(c.Name)
	}
	if err := execDDL(ctx, conn, create, c.Name); err != nil {
		return fmt.Errorf("create database %s: %w", c.Database, err)
	}
	return nil
}

// ErrNoSchema means the DSN's database does not exist or holds no
// convtrace schema of this version: `convtrace migrate` makes it.
var ErrNoSchema = errors.New("no convtrace schema")

// OpenExisting connects to the DSN's database for reading: it creates
// nothing, and a database that does not exist or is not migrated to this
// version is ErrNoSchema, with the command that makes it.
func OpenExisting(ctx context.Context, dsn string) (*topology.Conn, error) {
	c, err := topology.Parse(dsn)
	if err != nil {
		return nil, err
	}
	boot, err := c.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer boot.Close()
	db := c.Database
	var databases, tables uint64
	if err := boot.QueryRow(ctx, `SELECT
    (SELECT count() FROM system.databases WHERE name = ?),
    (SELECT count() FROM system.tables WHERE database = ? AND name = 'schema_migrations')`, db, db).Scan(&databases, &tables); err != nil {
		return nil, fmt.Errorf("look up database %s: %w", db, err)
	}
	const fix = "create it with `convtrace migrate --clickhouse DSN` (or check the DSN's database name)"
	switch {
	case databases == 0:
		return nil, fmt.Errorf("%w: database %q does not exist on %s: %s", ErrNoSchema, db, strings.Join(c.Addrs(), ","), fix)
	case tables == 0:
		return nil, fmt.Errorf("%w: database %q on %s has no convtrace tables: %s", ErrNoSchema, db, strings.Join(c.Addrs(), ","), fix)
	}
	conn, err := c.Open()
	if err != nil {
		return nil, err
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
	return conn, nil
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
