package ddl

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/store/topology"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

// DB is what Migrate needs of a connection to the target database.
type DB interface {
	Exec(ctx context.Context, query string, args ...any) error
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
}

// Migration is one versioned step of the schema, one embedded .sql file
// named NNNN_name.sql.
type Migration struct {
	Version uint32
	Name    string
	file    string
}

// Option configures how DDL is rendered.
type Option interface{ apply(*config) }

type config struct {
	retentionDays int
	cluster       string           // empty on one server
	database      string           // on a cluster, the database the DDL is for
	servers       topology.Cluster // on a cluster, how to reach each server (ForCluster)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithRetention adds a TTL that deletes rows older than d to the append-only
// tables, on servers that support TTL. Zero (the default) keeps rows forever.
func WithRetention(d time.Duration) Option {
	return optionFunc(func(c *config) { c.retentionDays = int(d / (24 * time.Hour)) })
}

// Migrations returns every migration in version order.
func Migrations() []Migration {
	entries, err := fs.ReadDir(sqlFiles, "sql")
	if err != nil {
		panic(err) // the files are embedded: unreadable means a broken build
	}
	var ms []Migration
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".sql")
		num, rest, ok := strings.Cut(name, "_")
		v, err := strconv.ParseUint(num, 10, 32)
		if !ok || err != nil {
			panic(fmt.Sprintf("schema: migration file %q is not named NNNN_name.sql", e.Name()))
		}
		ms = append(ms, Migration{Version: uint32(v), Name: rest, file: path.Join("sql", e.Name())})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms
}

// Statements renders the migration's DDL for a server with caps. A file may
// hold several statements separated by semicolons.
func (m Migration) Statements(caps Capabilities, opts ...Option) ([]string, error) {
	var cfg config
	for _, o := range opts {
		o.apply(&cfg)
	}
	src, err := sqlFiles.ReadFile(m.file)
	if err != nil {
		return nil, fmt.Errorf("read migration %s: %w", m.file, err)
	}
	funcs := template.FuncMap{
		"lc": func(typ string) string { return "LowCardinality(" + typ + ")" },
		"codec": func() string {
			if caps.Codecs {
				return " CODEC(ZSTD(3))"
			}
			return ""
		},
		// ALTER ... ADD COLUMN IF NOT EXISTS is not parsed by 18.x; there
		// schema_migrations alone keeps a migration from running twice.
		"ifNotExists": func() string {
			if caps.SkipIndexes {
				return "IF NOT EXISTS "
			}
			return ""
		},
		// On a cluster, a subquery over a Distributed table inside a
		// query over another is computed once and sent to every shard.
		"global": func() string {
			if cfg.cluster != "" {
				return "GLOBAL "
			}
			return ""
		},
		"ttl": func(column string) string {
			if caps.TTL && cfg.retentionDays > 0 {
				return fmt.Sprintf("TTL %s + INTERVAL %d DAY", column, cfg.retentionDays)
			}
			return ""
		},
	}
	tmpl, err := template.New(m.file).Funcs(funcs).Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("parse migration %s: %w", m.file, err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, caps); err != nil {
		return nil, fmt.Errorf("render migration %s: %w", m.file, err)
	}
	var stmts []string
	for _, s := range strings.Split(stripComments(buf.String()), ";") {
		if s = strings.TrimSpace(s); s != "" {
			stmts = append(stmts, s)
		}
	}
	return cfg.forCluster(stmts)
}

// forCluster rewrites stmts for the configured cluster, if any.
func (cfg config) forCluster(stmts []string) ([]string, error) {
	if cfg.cluster == "" {
		return stmts, nil
	}
	var out []string
	for _, s := range stmts {
		ss, err := onCluster(s, cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
	}
	return out, nil
}

func stripComments(sql string) string {
	lines := strings.Split(sql, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// Result reports what Migrate did.
type Result struct {
	Version      uint32 // the schema version after the run
	Applied      []Migration
	Capabilities Capabilities
}

const migrationsDDL = `CREATE TABLE IF NOT EXISTS schema_migrations
(
    version    UInt32,
    name       String,
    applied_at DateTime DEFAULT now()
)
ENGINE = ReplacingMergeTree
ORDER BY version`

// insertMigration records a migration. INSERT ... SELECT runs wholly on the
// server: ClickHouse 18.16 waits for a data block after INSERT ... VALUES
// sent over the native protocol.
const insertMigration = "INSERT INTO schema_migrations (version, name) SELECT toUInt32(?), ?"

// Migrate applies, in version order, the migrations schema_migrations does not
// record, and records each: running it again changes nothing, and no migration
// rewrites existing data. With WithCluster it does so on every server.
func Migrate(ctx context.Context, db DB, opts ...Option) (Result, error) {
	caps, err := ServerCapabilities(ctx, db)
	if err != nil {
		return Result{}, err
	}
	res := Result{Capabilities: caps}
	var cfg config
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.cluster != "" {
		if cfg.database, err = currentDatabase(ctx, db); err != nil {
			return res, err
		}
		opts = append(opts, WithDatabase(cfg.database))
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(topology.ClusterSettings()))
	}
	if err := createMigrations(ctx, db, cfg); err != nil {
		return res, err
	}
	applied, err := appliedVersions(ctx, db)
	if err != nil {
		return res, err
	}
	recordCtx, err := recordContext(ctx, db, cfg.cluster)
	if err != nil {
		return res, err
	}
	ddlCtx := ctx
	if caps.LowCardinalitySetting {
		ddlCtx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{
			"allow_experimental_low_cardinality_type": 1,
		}))
	}
	for _, m := range Migrations() {
		if applied[m.Version] {
			res.Version = m.Version
			continue
		}
		stmts, err := m.Statements(caps, opts...)
		if err != nil {
			return res, err
		}
		for _, s := range stmts {
			if err := cfg.exec(ddlCtx, db, s); err != nil {
				return res, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
		}
		if err := db.Exec(recordCtx, insertMigration, m.Version, m.Name); err != nil {
			return res, fmt.Errorf("record migration %04d_%s: %w", m.Version, m.Name, err)
		}
		res.Version = m.Version
		res.Applied = append(res.Applied, m)
	}
	return res, nil
}

// createMigrations creates schema_migrations. On a cluster, where a
// distributed DDL statement waits for every server (distributed_ddl_task_timeout,
// three minutes by default) and the collectors migrate whenever they
// connect, it does so only when the connected server lacks the table: a
// replica that is down stops no collector once the schema is current.
func createMigrations(ctx context.Context, db DB, cfg config) error {
	if cfg.cluster != "" {
		rows, err := db.Query(ctx, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'schema_migrations'")
		if err != nil {
			return fmt.Errorf("look up schema_migrations: %w", err)
		}
		var n uint64
		for rows.Next() {
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return fmt.Errorf("look up schema_migrations: %w", err)
			}
		}
		rows.Close()
		if n > 0 {
			return nil
		}
	}
	stmts, err := cfg.forCluster([]string{migrationsDDL})
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if err := execDDL(ctx, db, s, cfg.cluster); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
	}
	return nil
}

// execDDL runs one statement. A distributed (ON CLUSTER) one answers with
// a row per server, once each has run it, which is read to the end.
func execDDL(ctx context.Context, db DB, stmt, cluster string) error {
	if cluster == "" || !strings.Contains(stmt, " ON CLUSTER ") {
		return db.Exec(ctx, stmt)
	}
	rows, err := db.Query(ctx, stmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// ServerCapabilities asks the server its version and derives what it supports.
func ServerCapabilities(ctx context.Context, db DB) (Capabilities, error) {
	rows, err := db.Query(ctx, "SELECT version()")
	if err != nil {
		return Capabilities{}, fmt.Errorf("query server version: %w", err)
	}
	defer rows.Close()
	var version string
	if rows.Next() {
		if err := rows.Scan(&version); err != nil {
			return Capabilities{}, fmt.Errorf("scan server version: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return Capabilities{}, fmt.Errorf("read server version: %w", err)
	}
	return DetectCapabilities(version)
}

// Version returns the highest migration recorded in schema_migrations, 0
// when none is.
func Version(ctx context.Context, db DB) (uint32, error) {
	applied, err := appliedVersions(ctx, db)
	if err != nil {
		return 0, err
	}
	var v uint32
	for a := range applied {
		v = max(v, a)
	}
	return v, nil
}

func appliedVersions(ctx context.Context, db DB) (map[uint32]bool, error) {
	rows, err := db.Query(ctx, "SELECT DISTINCT version FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("query schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := map[uint32]bool{}
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("scan schema_migrations: %w", err)
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return applied, nil
}
