package store

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/store/ddl"
)

var updateSQL = flag.Bool("update-sql", false, "rewrite testdata/sql/*.sql from the queries as built now")

// Every query built from named holes is rendered into testdata/sql, one
// file each, with its arguments: a change to a query shows in review as a
// change to its file. The table holes take each layout's table: one
// server's, and a cluster's local table where a query reads a replica.
func TestSQLGolden(t *testing.T) {
	scope := PruneScope{BeforeNS: 1_700_000_000_000_000_000, Project: "p"}
	queries := map[string]sqlText{
		"insert_summaries": sqlf(insertSummaries, holes{"computed": arg(uint64(1)), "counts": arg([]uint64{3}),
			"hashes": arg([]uint64{7}), "ids": arg([]string{"th"}), "summaries": summarizeThreads(ofThreads("p", []string{"th"}))}),
		"insert_plain_summaries": sqlf(insertSummaries, holes{"computed": arg(uint64(1)), "counts": arg([]uint64{3}),
			"hashes": arg([]uint64{7}), "ids": arg([]string{"th"}), "summaries": summarizePlainThreads(ofThreads("p", []string{"th"}))}),
		"insert_all_summaries": sqlf(insertAllSummaries, holes{"computed": arg(uint64(1)), "summaries": summarizeAllThreads}),
		"select_fingerprints":  sqlf(selectFingerprints, holes{"cond": ofThreads("p", []string{"th"})}),
		"insert_shells": sqlf(insertShells, holes{"scope": arg(scope.Project), "cutoff": arg(scope.BeforeNS),
			"now": arg(uint64(2)), "summaries": summarizeShells(scope.cond())}),
		"pruned_notes": notesOf(scope, ddl.Mutator{}),
		"delete_pruned_messages": sqlf(deletePrunedMessages, holes{"shells": raw("thread_shells"), "turns": raw("conversations"),
			"scope": arg("p"), "cutoff": arg(scope.BeforeNS)}),
		"select_whole_partitions": sqlf(selectWholePartitions, holes{"table": raw("spans"), "cutoff": arg(scope.BeforeNS), "project": arg("p")}),
		"mark_days":               sqlf(markDays, holes{"table": raw("cost_days"), "days": arg([]uint32{20000}), "version": arg(uint64(3))}),
		"select_shards":           sqlf(selectShards, holes{"cluster": arg("c")}),
	}
	for _, table := range []string{"conversations", "conversations" + ddl.LocalSuffix} {
		parts := arg(ddl.Tuple([]string{"202611_1_1_0"}))
		queries["select_active_parts."+table] = sqlf(selectActiveParts, holes{"table": arg(table)})
		queries["select_touched_threads."+table] = sqlf(selectTouchedThreads, holes{"table": raw(table), "parts": parts})
		queries["invalidate_touched_days."+table] = sqlf(invalidateTouchedDays, holes{"version": arg(uint64(3)), "table": raw(table), "parts": parts})
		queries["mark_touched_latency."+table] = sqlf(markTouchedLatency, holes{"version": arg(uint64(3)), "table": raw(table), "parts": parts})
	}
	dir := filepath.Join("testdata", "sql")
	if *updateSQL {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, q := range queries {
		got := render(q)
		path := filepath.Join(dir, name+".sql")
		if *updateSQL {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (go test ./store -run TestSQLGolden -update-sql writes it)", name, err)
			continue
		}
		if got != string(want) {
			t.Errorf("%s is no longer what %s holds (review, then -update-sql):\n%s", name, path, got)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.sql")); len(files) != len(queries) {
		t.Errorf("%d golden files for %d queries: remove the files of queries that are gone", len(files), len(queries))
	}
}

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
