package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/archive"
)

func TestRemoveCommandErrors(t *testing.T) {
	dsn := testkit.DSN(t) // unmigrated: the checks before any query come first
	tests := []struct {
		args     []string
		inStderr string
	}{
		{[]string{"delete"}, "--thread: name the thread to delete"},
		{[]string{"delete", "--thread", "a", "--project", "p"}, "--thread: name the thread to delete (or --project"},
		{[]string{"prune"}, "--older-than: give an age, such as 180d"},
		{[]string{"prune", "--older-than", "soon"}, `--older-than: "soon" is not an age`},
		{[]string{"prune", "--older-than", "-3d"}, `--older-than: "-3d" is not an age`},
		{[]string{"prune", "--older-than", "6m"}, `--older-than: "6m" is ambiguous: write 6min for minutes or 6mo for months`},
		{[]string{"prune", "--older-than", "0d"}, `--older-than: "0d" is no age`},
		{[]string{"serve", "--clickhouse", dsn, "--retention", "2h"}, `--retention: "2h" is less than a day`},
		{[]string{"serve", "--clickhouse", dsn, "--retention", "1m"}, `--retention: "1m" is ambiguous`},
		{[]string{"serve", "--clickhouse", dsn, "--archive-after", "30d"}, "--archive-after: name the folder of the files with --archive-dir"},
		{[]string{"serve", "--clickhouse", dsn, "--shell-retention", "30d"}, "--shell-retention: give --retention too"},
		{[]string{"serve", "--clickhouse", dsn, "--retention", "30d", "--shell-retention", "soon"}, `--shell-retention: "soon" is not an age`},
		{[]string{"archive", "--older-than", "30d"}, "--to: name the folder"},
		{[]string{"archive", "--to", "x", "--older-than", "lately"}, `--older-than: "lately" is not an age`},
	}
	for _, tt := range tests {
		code, _, stderr := runCapture(t, tt.args...)
		if code != 1 || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("convtrace %q: exit %d, stderr %q; want exit 1 and %q", tt.args, code, stderr, tt.inStderr)
		}
	}
}

// ageTurns are a call of thread id that started days ago.
func ageTurns(id string, days int) []schema.Turn {
	start := uint64(time.Now().AddDate(0, 0, -days).UnixNano())
	span := id + "-" + time.Duration(days).String()
	return []schema.Turn{
		{TurnID: span + ":prompt:0", SpanID: span, ThreadID: id, Project: "p", Role: schema.RolePrompt, Content: "old question", StartNS: start},
		{TurnID: span + ":response:1", SpanID: span, ThreadID: id, Project: "p", Role: schema.RoleResponse, Content: "old answer", StartNS: start + 1, CostSource: schema.CostNone},
	}
}

func countTurns(t *testing.T, conn driver.Conn, cond string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM conversations WHERE "+cond, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// prune shows what it would remove, asks for --yes, then removes only the
// old turns; delete does the same for one thread.
func TestPruneAndDeleteCommands(t *testing.T) {
	conn, dsn := testkit.Open(t)
	testkit.InsertTurns(t, conn, append(append(ageTurns("old", 400), ageTurns("mixed", 300)...), ageTurns("mixed", 2)...)...)

	code, stdout, stderr := runCapture(t, "prune", "--clickhouse", dsn, "--older-than", "180d", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "would prune") || !strings.Contains(stdout, "2 threads, 4 turns") || !strings.Contains(stdout, "1 of the threads left with no turn") {
		t.Errorf("prune --dry-run: exit %d, stdout %q, stderr %q; want 2 threads, 4 turns, 1 left empty", code, stdout, stderr)
	}
	code, _, stderr = runCapture(t, "prune", "--clickhouse", dsn, "--older-than", "180d")
	if code != 1 || !strings.Contains(stderr, "add --yes") {
		t.Errorf("prune without --yes and no terminal: exit %d, stderr %q; want a refusal naming --yes", code, stderr)
	}
	if n := countTurns(t, conn, "1"); n != 6 {
		t.Fatalf("%d turns after a dry run and a refusal, want all 6", n)
	}
	code, stdout, stderr = runCapture(t, "prune", "--clickhouse", dsn, "--older-than", "180d", "--yes")
	if code != 0 || !strings.Contains(stdout, "pruned 2 threads, 4 turns") {
		t.Errorf("prune --yes: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := countTurns(t, conn, "1"); n != 2 {
		t.Errorf("%d turns after the prune, want the 2 recent ones", n)
	}

	code, _, stderr = runCapture(t, "delete", "--clickhouse", dsn, "--thread", "nobody", "--yes")
	if code != 1 || !strings.Contains(stderr, `no thread has the id "nobody"`) {
		t.Errorf("delete of an unknown thread: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCapture(t, "delete", "--clickhouse", dsn, "--thread", "mixed")
	if code != 1 || !strings.Contains(stderr, "thread mixed: 1 threads, 2 turns") || !strings.Contains(stderr, "add --yes") {
		t.Errorf("delete without --yes: exit %d, stderr %q; want the thread's size and a refusal", code, stderr)
	}
	code, stdout, stderr = runCapture(t, "delete", "--clickhouse", dsn, "--thread", "mixed", "--yes")
	if code != 0 || !strings.Contains(stdout, "deleted thread mixed: 1 threads, 2 turns") {
		t.Errorf("delete --yes: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := countTurns(t, conn, "1"); n != 0 {
		t.Errorf("%d turns after deleting the last thread", n)
	}

	// Every thread of a project, the other project's kept.
	other := ageTurns("elsewhere", 3)
	for i := range other {
		other[i].Project = "q"
	}
	testkit.InsertTurns(t, conn, append(append(ageTurns("p1", 3), ageTurns("p2", 2)...), other...)...)
	code, _, stderr = runCapture(t, "delete", "--clickhouse", dsn, "--project", "nope", "--yes")
	if code != 1 || !strings.Contains(stderr, `no thread is in the project "nope"`) {
		t.Errorf("delete of an unknown project: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr = runCapture(t, "delete", "--clickhouse", dsn, "--project", "p", "--yes")
	if code != 0 || !strings.Contains(stdout, "deleted project p: 2 threads, 4 turns") {
		t.Errorf("delete --project p: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n, kept := countTurns(t, conn, "1"), countTurns(t, conn, "project = 'q'"); n != 2 || kept != 2 {
		t.Errorf("after deleting project p: %d turns, %d of project q; want only q's 2", n, kept)
	}
}

// serve --retention prunes what is older at once, while it serves.
func TestServeRetentionPrunes(t *testing.T) {
	conn, dsn := testkit.Open(t)
	testkit.InsertTurns(t, conn, append(ageTurns("old", 40), ageTurns("new", 1)...)...)
	p := testkit.Serve(t, nil, "--clickhouse", dsn, "--retention", "30d", "--summarize-every", "0")
	// The shell is marked done last, once the turns are gone.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var shells uint64
		if err := conn.QueryRow(context.Background(), "SELECT count() FROM thread_shells WHERE thread_id = 'old' AND done = 1").Scan(&shells); err != nil {
			t.Fatal(err)
		}
		if shells == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no done shell of the 40-day-old thread 30 s after serve --retention 30d started:\n%s", p.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := countTurns(t, conn, "thread_id = 'old'"); n != 0 {
		t.Errorf("%d turns of the 40-day-old thread remain", n)
	}
	if n := countTurns(t, conn, "thread_id = 'new'"); n != 2 {
		t.Errorf("%d turns of the recent thread, want 2", n)
	}
}

// serve --retention removes for good a thread a prune emptied longer ago
// than --shell-retention (by default the --retention): its shell and its
// title; a thread emptied more recently keeps both.
func TestServeRemovesEmptyShells(t *testing.T) {
	conn, dsn := testkit.Open(t)
	ctx := context.Background()
	now := time.Now()
	for _, s := range []struct {
		thread string
		days   int
	}{{"emptied-long-ago", 40}, {"emptied-lately", 10}} {
		pruned := uint64(now.AddDate(0, 0, -s.days).UnixNano())
		if err := conn.Exec(ctx, "INSERT INTO thread_shells (project, thread_id, cutoff_ns, scope, pruned_ns, version, done, turns) SELECT 'p', ?, ?, '', ?, ?, 1, 2",
			s.thread, pruned, pruned, pruned); err != nil {
			t.Fatal(err)
		}
		if err := conn.Exec(ctx, "INSERT INTO thread_meta (thread_id, title, archived, starred, updated_ns) SELECT ?, 'named', 0, 0, ?", s.thread, pruned); err != nil {
			t.Fatal(err)
		}
	}
	p := testkit.Serve(t, nil, "--clickhouse", dsn, "--retention", "30d", "--summarize-every", "0")
	left := func(table, thread string) uint64 {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM "+table+" WHERE thread_id = ?", thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); left("thread_shells", "emptied-long-ago") > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shell of a thread emptied 40 days ago is still there 30 s after serve --retention 30d started:\n%s", p.Output())
		}
	}
	if n := left("thread_meta", "emptied-long-ago"); n != 0 {
		t.Errorf("the thread emptied 40 days ago keeps %d metadata rows", n)
	}
	if shells, metas := left("thread_shells", "emptied-lately"), left("thread_meta", "emptied-lately"); shells != 1 || metas != 1 {
		t.Errorf("the thread emptied 10 days ago has %d shells and %d metadata rows, want both kept", shells, metas)
	}
}

// convtrace archive writes each idle thread to its file and removes it;
// serve --archive-after does the same by itself.
func TestArchiveCommandAndServe(t *testing.T) {
	conn, dsn := testkit.Open(t)
	testkit.InsertTurns(t, conn, append(append(ageTurns("idle", 40), ageTurns("busy", 40)...), ageTurns("busy", 1)...)...)
	dir := t.TempDir()
	code, stdout, stderr := runCapture(t, "archive", "--clickhouse", dsn, "--older-than", "30d", "--to", dir)
	if code != 0 || !strings.Contains(stdout, "archived 1 threads (2 turns") {
		t.Fatalf("archive: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(archive.Path(dir, "p", "idle")); err != nil {
		t.Error(err)
	}
	if n := countTurns(t, conn, "1"); n != 4 {
		t.Errorf("%d turns after archiving the idle thread, want the busy thread's 4", n)
	}

	testkit.InsertTurns(t, conn, ageTurns("quiet", 50)...)
	served := t.TempDir()
	p := testkit.Serve(t, nil, "--clickhouse", dsn, "--archive-after", "30d", "--archive-dir", served, "--summarize-every", "0")
	deadline := time.Now().Add(30 * time.Second)
	for countTurns(t, conn, "thread_id = 'quiet'") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the quiet thread is still stored 30 s after serve --archive-after 30d started:\n%s", p.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(archive.Path(served, "p", "quiet")); err != nil {
		t.Errorf("serve --archive-after: %v", err)
	}
}

// export --attr task=T writes every thread of the task and no other.
func TestExportByAttr(t *testing.T) {
	conn, dsn := testkit.Open(t)
	tagged := append(ageTurns("card-a", 2), ageTurns("card-b", 1)...)
	for i := range tagged {
		tagged[i].Attributes = []schema.Attr{{Key: schema.KeyThreadAttrPrefix + "task", Value: "T-7"}}
	}
	tool := tagged[0]
	tool.TurnID, tool.Role, tool.ToolName, tool.Seq = "card-a-tool:tool_call:0", schema.RoleToolCall, "Bash", 2
	testkit.InsertTurns(t, conn, append(append(tagged, tool), ageTurns("other", 1)...)...)
	code, stdout, stderr := runCapture(t, "export", "--clickhouse", dsn, "--attr", "task=T-7", "--format", "jsonl")
	if code != 0 || !strings.Contains(stdout, `"card-a"`) || !strings.Contains(stdout, `"card-b"`) || strings.Contains(stdout, `"other"`) {
		t.Errorf("export --attr task=T-7: exit %d, stderr %q; want card-a and card-b only:\n%s", code, stderr, stdout)
	}
	if code, _, stderr := runCapture(t, "export", "--clickhouse", dsn, "--attr", "task=none"); code != 1 || !strings.Contains(stderr, "no thread has it") {
		t.Errorf("export --attr task=none: exit %d, stderr %q", code, stderr)
	}
	// The README's recipe of tool runs per task.
	recipe := regexp.MustCompile("(?s)```sql\n\\s*(SELECT a.value AS task, tool_name.*?)\n *```").FindStringSubmatch(readmeSection(t, "The viewer"))
	if recipe == nil {
		t.Fatal("the README has no recipe of tool runs per task")
	}
	if got := strings.Join(queryText(t, conn, recipe[1]), ";"); got != "T-7 Bash 1" {
		t.Errorf("the README's tool runs per task: %q, want T-7 Bash 1", got)
	}
}
