package ddl_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/chdbcheck"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
)

// The production tests run on ClickHouse 18.16; this one applies the DDL a
// modern server gets, codecs, TTL and skip indexes included, in chDB 26.x.
func TestMigrationsApplyOnModernClickHouse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	caps := chdbcheck.Capabilities(ctx, t)

	var stmts, origin []string // origin[i] names the migration of stmts[i]
	for _, m := range ddl.Migrations() {
		ss, err := m.Statements(caps, ddl.WithRetention(90*24*time.Hour))
		if err != nil {
			t.Fatalf("render %04d_%s: %v", m.Version, m.Name, err)
		}
		stmts = append(stmts, ss...)
		for range ss {
			origin = append(origin, fmt.Sprintf("%04d_%s", m.Version, m.Name))
		}
	}
	sql := strings.Join(stmts, ";\n")
	// Without these the test would pass on 18.16's DDL: capability detection
	// must have switched every decoration on.
	var missing []string
	for _, want := range []string{"CODEC(", "TTL ", "INDEX "} {
		if !strings.Contains(sql, want) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("DDL for chDB %s (%+v) lacks %q:\n%s", caps.Version, caps, missing, sql)
	}

	queries := []string{
		"SELECT name, engine, sorting_key, engine_full FROM system.tables WHERE database = currentDatabase()",
		"SELECT count() AS n FROM system.data_skipping_indices WHERE database = currentDatabase()",
		"SELECT count() AS n FROM system.columns WHERE database = currentDatabase() AND compression_codec != ''",
		// The README's SQL over the rows below: a call delivered twice
		// counts once, a prompt's history is put back.
		"SELECT toString(sum(calls)) AS n, toString(sum(tokens_in)) AS tokens FROM cost_cells",
		"SELECT " + schema.WholeContentSQL + " AS whole FROM conversations " + schema.HistoryJoinSQL + " WHERE role = 'prompt'",
	}
	now := time.Now().UnixNano() // within the 90-day TTL
	rows := []string{
		`INSERT INTO messages (project, thread_id, id, message) VALUES ('p', 't', 'a', '{"role":"assistant"}')`,
		`INSERT INTO conversations (turn_id, span_id, thread_id, role, content, history, start_ns) VALUES ('s:prompt:0', 's', 't', 'prompt', '[{"role":"user"}]', ['a'], ` + strconv.FormatInt(now, 10) + `)`,
		`INSERT INTO conversations (turn_id, span_id, thread_id, role, cost_source, tokens_in, start_ns) VALUES ('s:response:1', 's', 't', 'response', 'priced', 7, ` + strconv.FormatInt(now, 10) + `)`,
		`INSERT INTO conversations (turn_id, span_id, thread_id, role, cost_source, tokens_in, start_ns) VALUES ('s:response:1', 's', 't', 'response', 'priced', 7, ` + strconv.FormatInt(now, 10) + `)`,
		// serve --retention and the deletions of prune and delete, which
		// remove nothing of these rows.
		ddl.RetentionStatement("conversations", 187),
		ddl.RetentionStatement("spans", 187),
		ddl.DeleteStatement(caps, "turn_notes", "(thread_id, turn_id) IN (SELECT thread_id, turn_id FROM conversations WHERE start_ns < 1)"),
		ddl.DeleteStatement(caps, "conversations", "thread_id = 'another'"),
	}
	out, err := chdbcheck.Run(ctx, chdbcheck.Input{Statements: append(slices.Clone(stmts), rows...), Queries: queries})
	if e := (*chdbcheck.Error)(nil); errors.As(err, &e) && e.Stage == "statement" && e.Index < len(origin) {
		t.Fatalf("migration %s does not apply on ClickHouse %s: %v", origin[e.Index], caps.Version, err)
	}
	if err != nil {
		t.Fatal(err)
	}

	wantKeys := map[string]string{
		"conversations": "project, thread_id, start_ns, turn_id",
		"spans":         "project, trace_id, start_ns, span_id",
		"thread_meta":   "thread_id",
		"turn_notes":    "thread_id, turn_id",
	}
	tables := map[string]map[string]any{}
	for _, row := range out.Results[0].Rows {
		tables[fmt.Sprint(row["name"])] = row
	}
	for table, key := range wantKeys {
		row, ok := tables[table]
		if !ok {
			t.Errorf("table %s missing on ClickHouse %s; have %v", table, caps.Version, out.Results[0].Rows)
			continue
		}
		if row["engine"] != "ReplacingMergeTree" || row["sorting_key"] != key {
			t.Errorf("table %s: engine %v, sorting key %q; want ReplacingMergeTree, %q", table, row["engine"], row["sorting_key"], key)
		}
	}
	for _, table := range []string{"conversations", "spans"} {
		// Created with 90 days (WithRetention), then set to 187 as serve
		// --retention does.
		if full := fmt.Sprint(tables[table]["engine_full"]); !strings.Contains(full, "TTL ts + toIntervalDay(187)") {
			t.Errorf("table %s has no 187-day TTL: %s", table, full)
		}
	}
	if got := out.Results[3].Rows; len(got) != 1 || got[0]["n"] != "1" || got[0]["tokens"] != "7" {
		t.Errorf("cost_cells on ClickHouse %s: %v, want one call of 7 tokens", caps.Version, got)
	}
	if got := out.Results[4].Rows; len(got) != 1 || got[0]["whole"] != `[{"role":"assistant"},{"role":"user"}]` {
		t.Errorf("a prompt put back together on ClickHouse %s: %v", caps.Version, got)
	}
	// The server kept every index and codec the DDL declared.
	for i, decl := range map[int]string{1: "INDEX ", 2: "CODEC("} {
		got, want := fmt.Sprint(out.Results[i].Rows[0]["n"]), strconv.Itoa(strings.Count(sql, decl))
		if got != want {
			t.Errorf("%s\n= %s, want %s (one per %q in the DDL)", queries[i], got, want, decl)
		}
	}
}
