package store

import (
	"fmt"
	"testing"
)

// The deletions of a thread removal and of a prune, as ddl.Mutator sends
// them to a modern server (lightweight DELETE), remove what they select
// and nothing else.
func TestDeletesOnModernClickHouse(t *testing.T) {
	modern := sqlLayouts(t)[1]
	if !modern.caps.LightweightDelete {
		t.Fatalf("layout %q has no lightweight DELETE", modern.name)
	}
	const cols = "INSERT INTO conversations (turn_id, project, thread_id, role, content, start_ns) VALUES "
	fixtures := []string{
		cols + `('g:prompt:0', 'p', 'gone', 'prompt', 'q', 1000), ('o:prompt:0', 'p', 'old', 'prompt', 'q', 1000),
		        ('o:prompt:1', 'p', 'old', 'prompt', 'q', 5000), ('q:prompt:0', 'q', 'elsewhere', 'prompt', 'q', 1000)`,
		`INSERT INTO turn_notes (thread_id, turn_id, starred, memo, updated_ns)
		 VALUES ('old', 'o:prompt:0', 1, '', 1), ('old', 'o:prompt:1', 1, '', 1), ('elsewhere', 'q:prompt:0', 1, '', 1)`,
	}
	scope := PruneScope{BeforeNS: 3000, Project: "p"}
	var deletes []sqlText
	deletes = append(deletes, modern.deletes(threadTables, ofThread("gone"))...)
	deletes = append(deletes, modern.deletes([]string{"turn_notes"}, notesOf(scope, modern.mutated))...)
	deletes = append(deletes, modern.deletes(pruneTables, scope.cond())...)
	for _, d := range deletes {
		fixtures = append(fixtures, inlineSQL(t, d))
	}
	out := runModern(t, fixtures, []string{
		"SELECT groupArray(turn_id) AS ids FROM (SELECT turn_id FROM conversations ORDER BY turn_id)",
		"SELECT groupArray(turn_id) AS ids FROM (SELECT turn_id FROM turn_notes ORDER BY turn_id)",
	})
	for i, want := range []string{"[o:prompt:1 q:prompt:0]", "[o:prompt:1 q:prompt:0]"} {
		if got := fmt.Sprint(out.Results[i].Rows[0]["ids"]); got != want {
			t.Errorf("query %d: left %s, want %s", i, got, want)
		}
	}
}
