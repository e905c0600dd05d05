package schema

import (
	"context"
	"fmt"
	"net/url"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// DefaultDatabase is the database used when a DSN names none.
const DefaultDatabase = "convtrace"

// ParseDSN parses a clickhouse-go DSN such as
// clickhouse://127.0.0.1:9000/convtrace, defaulting the database to
// DefaultDatabase.
func ParseDSN(dsn string) (*clickhouse.Options, error) {
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
	return opts, nil
}

// Open connects to the DSN's database, creating the database first when it
// does not exist. It does not migrate.
func Open(ctx context.Context, dsn string) (driver.Conn, error) {
	opts, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	boot := *opts
	boot.Auth.Database = ""
	bootConn, err := clickhouse.Open(&boot)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	defer bootConn.Close()
	if err := bootConn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(opts.Auth.Database)); err != nil {
		return nil, fmt.Errorf("create database %s: %w", opts.Auth.Database, err)
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
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
