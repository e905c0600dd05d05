package ddl_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestDetectCapabilities(t *testing.T) {
	tests := []struct {
		version string
		want    ddl.Capabilities
	}{
		{"18.16.1", ddl.Capabilities{Version: "18.16.1", LowCardinalitySetting: true}},
		{"19.3.4", ddl.Capabilities{Version: "19.3.4", Codecs: true}},
		{"19.17.1.1", ddl.Capabilities{Version: "19.17.1.1", Codecs: true, TTL: true}},
		{"22.8.1", ddl.Capabilities{Version: "22.8.1", Codecs: true, TTL: true, SkipIndexes: true}},
		{"26.7.2.1", ddl.Capabilities{Version: "26.7.2.1", Codecs: true, TTL: true, SkipIndexes: true, LightweightDelete: true}},
	}
	for _, tt := range tests {
		got, err := ddl.DetectCapabilities(tt.version)
		if err != nil || got != tt.want {
			t.Errorf("DetectCapabilities(%q) = %+v, %v; want %+v", tt.version, got, err, tt.want)
		}
	}
	if _, err := ddl.DetectCapabilities("banana"); err == nil {
		t.Error("DetectCapabilities(banana) succeeded, want an error")
	}
}

func render(t *testing.T, version string, opts ...ddl.Option) string {
	t.Helper()
	caps, err := ddl.DetectCapabilities(version)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, m := range ddl.Migrations() {
		stmts, err := m.Statements(caps, opts...)
		if err != nil {
			t.Fatalf("render %d_%s: %v", m.Version, m.Name, err)
		}
		all = append(all, stmts...)
	}
	return strings.Join(all, ";\n")
}

func TestRenderByCapability(t *testing.T) {
	old := render(t, "18.16.1", ddl.WithRetention(90*24*time.Hour))
	for _, absent := range []string{"CODEC", "TTL", "INDEX"} {
		if strings.Contains(old, absent) {
			t.Errorf("DDL for 18.16 contains %s:\n%s", absent, old)
		}
	}
	modern := render(t, "26.7.2.1", ddl.WithRetention(90*24*time.Hour))
	for _, present := range []string{"CODEC(ZSTD(3))", "TTL ts + INTERVAL 90 DAY", "INDEX idx_trace_id trace_id TYPE bloom_filter"} {
		if !strings.Contains(modern, present) {
			t.Errorf("DDL for 26.7 lacks %s:\n%s", present, modern)
		}
	}
	if noTTL := render(t, "26.7.2.1"); strings.Contains(noTTL, "TTL") {
		t.Errorf("DDL without retention has a TTL:\n%s", noTTL)
	}
}

// A migration must never rewrite a table: only CREATE ... IF NOT EXISTS (of
// tables, views, the database), metadata-only ALTERs (ADD COLUMN / ADD
// INDEX) and the INSERT that fills a table created before from others are
// allowed.
func TestMigrationsNeverRewrite(t *testing.T) {
	allowed := regexp.MustCompile(`^(CREATE (TABLE|DATABASE|MATERIALIZED VIEW|VIEW) IF NOT EXISTS|ALTER TABLE \S+ ADD (COLUMN|INDEX) (IF NOT EXISTS )?\S+ )`)
	created := regexp.MustCompile(`^CREATE TABLE IF NOT EXISTS (\w+)`)
	fill := regexp.MustCompile(`^INSERT INTO (\w+) \([^)]*\)\s+SELECT `)
	for _, version := range []string{"18.16.1", "26.7.2.1"} {
		tables := map[string]bool{}
		for _, stmt := range strings.Split(render(t, version), ";\n") {
			if m := created.FindStringSubmatch(stmt); m != nil {
				tables[m[1]] = true
			}
			if m := fill.FindStringSubmatch(stmt); m != nil && tables[m[1]] {
				continue
			}
			if !allowed.MatchString(stmt) {
				t.Errorf("statement may rewrite data (server %s):\n%s", version, stmt)
			}
		}
	}
}

func TestMigrateShapeAndIdempotence(t *testing.T) {
	conn, _ := testkit.Open(t) // migrates once
	ctx := context.Background()
	ms := ddl.Migrations()
	last := ms[len(ms)-1].Version

	res, err := ddl.Migrate(ctx, conn)
	if err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if len(res.Applied) != 0 || res.Version != last {
		t.Errorf("second migrate applied %v, version %d; want nothing applied, version %d", res.Applied, res.Version, last)
	}
	if v, err := ddl.Version(ctx, conn); err != nil || v != last {
		t.Errorf("Version = %d, %v; want %d", v, err, last)
	}
	var recorded uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM schema_migrations").Scan(&recorded); err != nil {
		t.Fatal(err)
	}
	if recorded != uint64(len(ms)) {
		t.Errorf("schema_migrations has %d rows after two runs, want %d", recorded, len(ms))
	}

	wantKeys := map[string]string{
		"conversations": "project, thread_id, start_ns, turn_id",
		"spans":         "project, trace_id, start_ns, span_id",
		"thread_meta":   "thread_id",
		"turn_notes":    "thread_id, turn_id",
	}
	for table, key := range wantKeys {
		var engine, sortingKey string
		err := conn.QueryRow(ctx, "SELECT engine, sorting_key FROM system.tables WHERE database = currentDatabase() AND name = ?", table).Scan(&engine, &sortingKey)
		if err != nil {
			t.Errorf("table %s: %v", table, err)
			continue
		}
		if sortingKey != key || engine != "ReplacingMergeTree" {
			t.Errorf("table %s: engine %s, sorting key %q; want ReplacingMergeTree, %q", table, engine, sortingKey, key)
		}
	}

	// A thread page reads a granule of conversations in each part that
	// holds the thread: 1,024 rows, not ClickHouse's 8,192.
	var full string
	if err := conn.QueryRow(ctx, "SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'conversations'").Scan(&full); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(full, "index_granularity = 1024") {
		t.Errorf("conversations: %s, want index_granularity = 1024", full)
	}

	// Every column a Turn writes exists, with the type the contract names.
	wantTypes := map[string]string{
		"turn_id": "String", "project": "LowCardinality(String)", "round": "UInt16",
		"seq": "UInt16", "content_bytes": "UInt32", "truncated": "UInt8",
		"tokens_in": "Nullable(UInt32)", "cost_usd": "Nullable(Float64)",
		"start_ns": "UInt64", "ts": "DateTime", "attributes.key": "Array(String)",
	}
	types := columnTypes(t, "conversations")
	for _, c := range schema.TurnColumns {
		if _, ok := types[c]; !ok {
			t.Errorf("conversations lacks column %s", c)
		}
	}
	for c, want := range wantTypes {
		if got := types[c]; got != want {
			t.Errorf("conversations.%s is %q, want %q", c, got, want)
		}
	}
	spanTypes := columnTypes(t, "spans")
	for _, c := range schema.SpanColumns {
		if _, ok := spanTypes[c]; !ok {
			t.Errorf("spans lacks column %s", c)
		}
	}
}

func columnTypes(t *testing.T, table string) map[string]string {
	t.Helper()
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	rows, err := conn.Query(ctx, "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = ?", table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		types[name] = typ
	}
	return types
}

func TestRowsRoundTrip(t *testing.T) {
	conn, _ := testkit.Open(t)
	ctx := context.Background()
	in := uint32(1200)
	cost := 0.0042
	turn := schema.Turn{
		TurnID: "s1:response:1", TraceID: "t1", SpanID: "s1", Project: "p", ThreadID: "th",
		Phase: "plan", Speaker: "claude-planner", Round: 1, Role: schema.RoleResponse, Seq: 1,
		Model: "m", Content: "안녕하세요 🌏", ContentBytes: 19, TokensIn: &in, CostUSD: &cost,
		Status: schema.StatusOK, StartNS: uint64(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).UnixNano()),
		Attributes: []schema.Attr{{Key: "k", Value: "v"}},
	}
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO conversations ("+strings.Join(schema.TurnColumns, ", ")+")")
	if err != nil {
		t.Fatal(err)
	}
	if err := batch.Append(turn.Values()...); err != nil {
		t.Fatal(err)
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	var content string
	var tokensIn, tokensOut *uint32
	var ts time.Time
	err = conn.QueryRow(ctx, "SELECT content, tokens_in, tokens_out, ts FROM conversations WHERE turn_id = ?", turn.TurnID).Scan(&content, &tokensIn, &tokensOut, &ts)
	if err != nil {
		t.Fatal(err)
	}
	if content != turn.Content || tokensIn == nil || *tokensIn != in || tokensOut != nil || !ts.Equal(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("read back content %q, tokens_in %v, tokens_out %v, ts %v", content, tokensIn, tokensOut, ts)
	}
}
