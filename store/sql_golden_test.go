package store

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store/ddl"
)

var updateSQL = flag.Bool("update-sql", false, "rewrite testdata/sql/*.sql from the queries as built now")

// A sqlLayout is where a query runs: one ClickHouse 18.16 server, one
// 26.x server, or a cluster, whose replicas hold the _local tables.
type sqlLayout struct {
	name   string // the golden file's infix: "" for one 18.16 server
	tables *layout
	caps   ddl.Capabilities
}

// mutated is how a mutation names table (ddl.Mutator.Table).
func (x sqlLayout) mutated(table string) string { return ddl.MutatedTable(x.tables.cluster, table) }

// deletes are the statements ddl.Mutator.Delete runs to delete the rows
// cond selects from each of tables.
func (x sqlLayout) deletes(tables []string, cond sqlText) []sqlText {
	qs := make([]sqlText, len(tables))
	for i, table := range tables {
		qs[i] = sqlText{ddl.DeleteOn(x.caps, x.tables.cluster, table, cond.text), cond.args}
	}
	return qs
}

// script is statements as one text, each ended by a semicolon, one a line.
func script(statements []sqlText) sqlText {
	var q sqlText
	for _, s := range statements {
		q.text += s.text + ";\n"
		q.args = append(q.args, s.args...)
	}
	return q
}

func sqlLayouts(t *testing.T) []sqlLayout {
	caps := func(version string) ddl.Capabilities {
		c, err := ddl.DetectCapabilities(version)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return []sqlLayout{
		{name: "", tables: &layout{known: true}, caps: caps("18.16.1")},
		{name: "modern", tables: &layout{known: true, search: true}, caps: caps("26.7.2.1")},
		{name: "cluster", tables: &layout{known: true, cluster: "c", database: "convtrace"}, caps: caps("18.16.1")},
	}
}

// A sqlCase is a query as a layout builds it, with example arguments.
type sqlCase struct {
	name  string
	query func(x sqlLayout) sqlText
}

// bound is a query that every layout runs as it is, with args.
func bound(text string, args ...any) func(sqlLayout) sqlText {
	return func(sqlLayout) sqlText { return sqlText{text, args} }
}

// built is a query that every layout builds alike.
func built(q sqlText) func(sqlLayout) sqlText { return func(sqlLayout) sqlText { return q } }

func sqlCases() []sqlCase {
	scope := PruneScope{BeforeNS: 1_700_000_000_000_000_000, Project: "p"}
	parts := arg(ddl.Tuple([]string{"202611_1_1_0"}))
	ids := ddl.Tuple([]string{"th1", "th2"})
	cost, maxCost, minDur := 0.5, 2.0, time.Minute
	price := pricing.Price{Pattern: "gpt-*", Input: 1, Output: 2}
	plan := planCost(CostFilter{FromNS: schema.DayNS + 1, ToNS: 3*schema.DayNS + 1, Project: "p"}, time.Unix(0, int64(5*schema.DayNS)))
	plan.versions = []string{costVersion(2, 100)}
	latency := LatencyFilter{FromNS: plan.head.FromNS, ToNS: plan.tail.ToNS, Project: "p", Model: "gpt-5"}
	return []sqlCase{
		// summary.go, summary_sql.go
		{"insert_summaries", built(sqlf(insertSummaries, holes{"computed": arg(uint64(1)), "counts": arg([]uint64{3}),
			"hashes": arg([]uint64{7}), "ids": arg([]string{"th"}), "summaries": summarizeThreads(ofThreads("p", []string{"th"}))}))},
		{"insert_plain_summaries", built(sqlf(insertSummaries, holes{"computed": arg(uint64(1)), "counts": arg([]uint64{3}),
			"hashes": arg([]uint64{7}), "ids": arg([]string{"th"}), "summaries": summarizePlainThreads(ofThreads("p", []string{"th"}))}))},
		{"insert_all_summaries", built(sqlf(insertAllSummaries, holes{"computed": arg(uint64(1)), "summaries": summarizeAllThreads}))},
		{"select_fingerprints", built(sqlf(selectFingerprints, holes{"cond": ofThreads("p", []string{"th"})}))},
		{"select_touched_threads", func(x sqlLayout) sqlText {
			return sqlf(selectTouchedThreads, holes{"table": raw(x.tables.dataTable()), "parts": parts})
		}},
		// prune.go, remove.go
		{"insert_shells", built(sqlf(insertShells, holes{"scope": arg(scope.Project), "cutoff": arg(scope.BeforeNS),
			"now": arg(uint64(2)), "summaries": summarizeShells(scope.cond())}))},
		{"delete_pruned_notes", func(x sqlLayout) sqlText {
			return script(x.deletes([]string{"turn_notes"}, notesOf(scope, x.mutated)))
		}},
		{"delete_pruned_rows", func(x sqlLayout) sqlText { return script(x.deletes(pruneTables, scope.cond())) }},
		{"delete_pruned_messages", func(x sqlLayout) sqlText {
			return script(x.deletes([]string{"messages"}, messagesOf(scope, x.mutated)))
		}},
		{"delete_thread", func(x sqlLayout) sqlText { return script(x.deletes(threadTables, ofThread("th"))) }},
		// shells.go
		{"select_empty_shells", built(emptyShellsQuery("p", 9))},
		{"delete_empty_shells", func(x sqlLayout) sqlText {
			return script(x.deletes(emptiedTables, emptiedCond([]string{"th1", "th2"}, x.mutated)))
		}},
		{"delete_thread_summary", func(x sqlLayout) sqlText { return script(x.deletes([]string{"thread_summary"}, ofThread("th"))) }},
		{"select_whole_partitions", built(sqlf(selectWholePartitions, holes{"table": raw("spans"), "cutoff": arg(scope.BeforeNS), "project": arg("p")}))},
		{"select_prune_size", built(sqlf(selectPruneSize, holes{"scope": scope.cond()}))},
		{"select_prune_whole", built(scope.whole())},
		{"select_prune_spans", built(sqlf(selectPruneSpans, holes{"scope": scope.cond()}))},
		{"select_prune_notes", built(sqlf(selectPruneNotes, holes{"notes": notesOf(scope, ddl.Mutator{}.Table)}))},
		{"select_unfinished_prunes", bound(selectUnfinishedPrunes)},
		{"insert_shells_done", built(scope.done(2))},
		{"select_shell_threads", bound(selectShellThreads, "p", scope.BeforeNS)},
		{"select_thread_turns", built(sqlf(selectThreadTurns, holes{"thread": arg("th")}))},
		{"select_thread_rest", built(sqlf(selectThreadRest, holes{"thread": arg("th")}))},
		// invalidate.go, changes.go, cost_rollup.go, latency_rollup.go
		{"mark_days", built(sqlf(markDays, holes{"table": raw("cost_days"), "days": arg([]uint32{20000}), "version": arg(uint64(3))}))},
		{"mark_day_range", bound(markDayRange, uint64(3), uint32(20000), uint32(20001))},
		{"select_threads_started", bound(selectThreadsStarted, uint64(1), uint64(2), "p", "p")},
		{"select_active_parts", func(x sqlLayout) sqlText {
			return sqlf(selectActiveParts, holes{"table": arg(x.tables.dataTable())})
		}},
		{"insert_seen_parts", built(sqlf(insertSeenParts, holes{"summary": arg("cost"), "now": arg(uint64(1)),
			"partitions": arg([]string{"202611"}), "min_blocks": arg([]int64{1}), "max_blocks": arg([]int64{2})}))},
		{"invalidate_touched_days", func(x sqlLayout) sqlText {
			return sqlf(invalidateTouchedDays, holes{"version": arg(uint64(3)), "table": raw(x.tables.dataTable()), "parts": parts})
		}},
		{"mark_touched_latency", func(x sqlLayout) sqlText {
			return sqlf(markTouchedLatency, holes{"version": arg(uint64(3)), "table": raw(x.tables.dataTable()), "parts": parts})
		}},
		{"insert_latency_daily", built(latencyInserts([]uint32{1, 2}, 3)[0])},
		{"insert_latency_crossing", built(latencyInserts([]uint32{1, 2}, 3)[1])},
		{"insert_latency_errors", built(latencyInserts([]uint32{1, 2}, 3)[2])},
		{"select_latency_states", bound(selectLatencyStates, uint32(1), uint32(3))},
		{"insert_latency_states", bound(insertLatencyStates, []uint32{1, 2}, uint64(3))},
		{"mark_latency_day_range", bound(markLatencyDayRange, uint64(3), uint32(20000), uint32(20001))},
		{"select_seen_parts", bound(selectSeenParts, "cost")},
		{"select_shards", built(sqlf(selectShards, holes{"cluster": arg("c")}))},
		{"select_search_indexes", func(x sqlLayout) sqlText { return sqlText{selectSearchIndexes, []any{x.tables.dataTable()}} }},
		// threads_filter.go
		{"threads_newest", built(threadsSQL(ThreadFilter{Limit: 50}, 0))},
		{"threads_filtered", built(threadsSQL(ThreadFilter{Project: "p", Provider: "openai", Query: "bug", Archived: true,
			Status: StatusRunning, MinCostUSD: &cost, MaxCostUSD: &maxCost, MinDuration: &minDur, MaxDuration: &minDur,
			Attrs: map[string]string{"team": "a", "env": "prod"}, After: &Cursor{LastNS: 5, ID: "th"}, Limit: 50}, 4))},
		{"threads_failed_older", built(threadsSQL(ThreadFilter{Status: StatusFailed, Before: &Cursor{LastNS: 5, ID: "th"}, Limit: 50}, 0))},
		{"threads_ok", built(threadsSQL(ThreadFilter{Status: StatusOK, Limit: 50}, 0))},
		{"threads_interrupted", built(threadsSQL(ThreadFilter{Status: StatusInterrupted, Limit: 50}, 4))},
		// export.go, export_spans.go
		{"export_threads", built(sqlf(selectExportThreads, holes{"cond": ExportFilter{ThreadID: "th", Project: "p", FromNS: 1, ToNS: 2}.cond()}))},
		{"export_turns", bound(selectExportTurns, "th", uint64(1), uint64(1), "t", uint64(100))},
		{"export_group_turns", bound(selectGroupTurns, ids)},
		{"export_spans", built(sqlf(selectExportSpans, holes{"traces": arg(ddl.Tuple([]string{"tr"}))}))},
		{"stray_spans", built(ofThreadGroup(selectStraySpans, []string{"th1", "th2"}))},
		{"group_traces", bound(selectGroupTraces, ids)},
		{"group_spans", built(ofThreadGroup(selectGroupSpans, []string{"th1", "th2"}))},
		{"threads_notes", bound(selectThreadsNotes, ids)},
		// reprice.go
		{"select_reprice_models", built(sqlf(selectRepriceModels, holes{"scope": RepriceRange{FromNS: 1, Project: "p"}.scope()}))},
		{"update_priced", func(x sqlLayout) sqlText {
			return repriceOf(x.mutated("conversations"), RepriceRange{FromNS: 1, ToNS: 2}, &price, []string{"gpt-4o"})
		}},
		{"update_unpriced", func(x sqlLayout) sqlText {
			return repriceOf(x.mutated("conversations"), RepriceRange{FromNS: 1, ToNS: 2}, nil, []string{"mystery"})
		}},
		// calls.go, context.go, graph.go, facets.go, attributes.go, turn_content.go
		{"call_turns", built(callTurns("th", 10))},
		{"call_of", built(callOf("th", "a:prompt:0"))},
		{"context_turns", built(contextQuery("th", nil, 12))},
		{"context_turns_older", built(contextQuery("th", &contextCursor{StartNS: 9, Seq: 1, TurnID: "t"}, 12))},
		{"select_thread_exists", built(sqlf(selectThreadExists, holes{"thread": arg("th")}))},
		// reset.go
		{"select_thread_end", built(sqlf(selectThreadEnd, holes{"thread": arg("th")}))},
		{"insert_context_reset", built(resetQuery(schema.Turn{TurnID: "sp:context_reset:0", SpanID: "sp", ThreadID: "th",
			Role: schema.RoleContextReset, Status: schema.StatusOK, StartNS: 9}))},
		{"graph_turns", bound(selectGraphTurns, "th")},
		{"phase_counts", bound(selectPhaseCounts, uint8(0), "th")},
		{"facets", bound(selectFacets, "th")},
		{"thread_traces", bound(selectTraces, "th")},
		{"select_attributes", bound(selectAttributes, "th", "t")},
		{"select_content", bound(selectContent, "th", "t")},
		{"select_history", bound(selectHistory, "th", ddl.Tuple([]string{"m1"}))},
		{"select_turns", built(turnsQuery("th", TurnFilter{Role: "prompt", HideInternal: true}, 5000, 1000, 16<<10))},
		// cost.go, latency.go
		{"phase_totals", bound(selectPhaseTotals, "th")},
		{"cost_cells", built(plan.costCellsQuery())},
		{"cost_threads", built(plan.costThreadsQuery(10))},
		{"latency", func(x sqlLayout) sqlText {
			if x.tables.cluster != "" {
				return latencyQuery(liveLatency(latency), latency) // planLatency's on a cluster
			}
			return latencyQuery(plan, latency)
		}},
		// traces.go, detail.go
		{"trace_spans", built(ofTrace(selectTraceSpans, "tr"))},
		{"trace_calls", built(traceCalls("tr", 9))},
		{"trace_exists", built(ofTrace(selectTraceExists, "tr"))},
		{"span_turns", built(spanTurns("tr", "sp"))},
		{"span_attributes", built(spanAttributes("tr", "sp", DetailAttributes, DetailValueRunes))},
		// meta.go, notes.go, sessions.go, archive.go, import.go, import_claims.go
		{"insert_thread_meta", built(ThreadChange{Title: ptr("title")}.insert("th", 9))},
		{"select_notes", bound(selectNotes, "th")},
		{"select_note", bound(selectNote, "th", "t")},
		{"select_turn_exists", bound(selectTurnExists, "th", "t")},
		{"insert_note", built(NoteChange{Starred: ptr(true)}.insert("th", "t", 9))},
		// changes_feed.go
		{"select_feed_start", bound(selectFeedStart)},
		{"select_summary_changes", built(summaryChangesSince(7))},
		{"select_meta_changes", built(metaChangesSince(7))},
		{"select_session_changes", built(sessionChanges([]string{"p"}, []string{"th1", "th2"}, []uint64{5, 0}))},
		{"current_session", built(sqlf(selectCurrentSession, holes{"thread": arg("th"), "provider": arg("claude"), "rejected": arg(schema.KeyRejectedSession)}))},
		{"thread_of_session", built(sqlf(selectThreadOfSession, holes{"session": arg("s")}))},
		{"idle_threads", built(sqlf(selectIdleThreads, holes{"project": arg("p"), "cutoff": arg(uint64(9))}))},
		{"stored_turns", bound(selectStoredTurns, ids, ddl.Tuple([]string{"t"}))},
		{"stored_spans", bound(selectStoredSpans, ddl.Tuple([]string{"tr"}), ddl.Tuple([]string{"sp"}))},
		{"note_versions", bound(selectNoteVersions, ids)},
		{"meta_versions", bound(selectMetaVersions, ids)},
		{"insert_import_claim", bound(insertImportClaim, "h", uint64(1), uint64(2), uint64(3))},
		{"import_holder", bound(selectImportHolder, uint64(9))},
		// write.go, staging.go, context.go: the collector's writer and stager
		{"insert_turns", bound(insertTurns)},
		{"insert_spans", bound(insertSpans)},
		{"insert_staged", bound(insertStaged)},
		{"insert_messages", bound(insertMsgs)},
		{"select_staged", bound(selectStaged, keySet([]SpanKey{{"tr", "sp"}}))},
		{"select_due", bound(selectDue, time.Unix(9, 0), uint64(1), uint64(2), 10000)},
		{"select_staged_spans", bound(selectStagedSpans, ddl.Tuple([]string{"tr"}), schema.StagedSpan)},
		{"select_trees", bound(selectTrees, []any{"p", "tr"})},
		{"select_staging_partitions", func(x sqlLayout) sqlText {
			return sqlText{selectStagingPartitions(x.tables.cluster, "convtrace"), nil}
		}},
		{"any_thread", bound(selectAnyThread, "demo")},
		{"thread_turn_count", bound(selectThreadTurnCount, "th")},
	}
}

// threadsSQL is threadsQuery as an sqlText.
func threadsSQL(f ThreadFilter, aliveSince uint64) sqlText {
	text, args := threadsQuery(f, aliveSince)
	return sqlText{text, args}
}

// Every query is rendered into testdata/sql, with its arguments, for one
// 18.16 server (name.sql) and, where its text differs, for a 26.x server
// (name.modern.sql) and a cluster (name.cluster.sql): a change to a query
// shows in review as a change to its files.
func TestSQLGolden(t *testing.T) {
	dir := filepath.Join("testdata", "sql")
	if *updateSQL {
		files, _ := filepath.Glob(filepath.Join(dir, "*.sql"))
		for _, f := range files {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]bool{}
	for _, c := range sqlCases() {
		if want[c.name+".sql"] {
			t.Errorf("two queries named %s", c.name)
		}
		var first string
		for _, x := range sqlLayouts(t) {
			q := c.query(x)
			if n := placeholders(q.text); n != len(q.args) {
				t.Errorf("%s (%s): %d placeholders, %d arguments", c.name, x.name, n, len(q.args))
			}
			if h := unfilled.FindString(q.text); h != "" {
				t.Errorf("%s (%s): hole %s not filled", c.name, x.name, h)
			}
			got := render(q)
			file := c.name + ".sql"
			if x.name != "" {
				if got == first {
					continue
				}
				file = c.name + "." + x.name + ".sql"
			} else {
				first = got
			}
			want[file] = true
			path := filepath.Join(dir, file)
			if *updateSQL {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			stored, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: %v (go test ./store -run TestSQLGolden -update-sql writes it)", file, err)
				continue
			}
			if got != string(stored) {
				t.Errorf("%s is no longer what %s holds (review, then -update-sql):\n%s", c.name, path, got)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.sql"))
	for _, f := range files {
		if !want[filepath.Base(f)] {
			t.Errorf("%s is the golden file of no query: remove it", f)
		}
	}
}

// unfilled finds a hole left in a query's text.
var unfilled = regexp.MustCompile(`\{[a-z_]+\}`)

// render is a query's text, then its arguments, one per line, as a comment.
func render(q sqlText) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(q.text))
	b.WriteString("\n")
	for i, a := range q.args {
		fmt.Fprintf(&b, "-- $%d = %v\n", i+1, a)
	}
	return b.String()
}

// placeholders counts the ? of sql outside its quoted strings and names.
func placeholders(sql string) int {
	n := 0
	var quote byte
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '`' || c == '"':
			quote = c
		case c == '?':
			n++
		}
	}
	return n
}
