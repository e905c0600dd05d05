package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
)

// runStdin runs convtrace with stdin as its standard input.
func runStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, streams{&stdout, &stderr, strings.NewReader(stdin)})
	return code, stdout.String(), stderr.String()
}

// convtrace export writes the demo as JSON or JSONL, to a file or stdout,
// filtered by thread, project and time; convtrace import stores it in
// another database once, from files or stdin, reports bad JSONL lines by
// file and number with exit status 1, and refuses a newer schemaVersion.
func TestExportImportCommands(t *testing.T) {
	src, dst := testkit.DSN(t), testkit.DSN(t)
	if code, _, stderr := runCapture(t, "demo", "--clickhouse", src); code != 0 {
		t.Fatalf("demo: %d %s", code, stderr)
	}
	dir := t.TempDir()
	lines := filepath.Join(dir, "demo.jsonl")
	code, _, stderr := runCapture(t, "export", "--clickhouse", src, "--format", "jsonl", "--out", lines)
	if code != 0 || !regexp.MustCompile(`exported 1 threads: \d+ turns, \d+ spans, 0 notes`).MatchString(stderr) {
		t.Fatalf("export --format jsonl: %d %s", code, stderr)
	}
	code, envelope, stderr := runCapture(t, "export", "--clickhouse", src, "--project", "demo", "--since", "1h")
	if code != 0 || !strings.HasPrefix(envelope, `{"schemaVersion":1,"exportedAt":"`) || !strings.Contains(stderr, "exported 1 threads") {
		t.Fatalf("export to stdout: %d %s %.100s", code, stderr, envelope)
	}
	if code, out, stderr := runCapture(t, "export", "--clickhouse", src, "--project", "other"); code != 0 ||
		!strings.Contains(stderr, "exported 0 threads") || !strings.Contains(out, `"threads":[`) {
		t.Errorf("export of no thread: %d %s %s", code, stderr, out)
	}

	code, out, stderr := runCapture(t, "import", "--clickhouse", dst, lines)
	if code != 0 || !regexp.MustCompile(`demo.jsonl: imported 1 threads, [1-9]\d* turns, [1-9]\d* spans, 0 notes; skipped \(already stored\) 0 threads, 0 turns`).MatchString(out) {
		t.Fatalf("import: %d %s %s", code, out, stderr)
	}
	code, out, stderr = runStdin(t, envelope, "import", "--clickhouse", dst, "-")
	if code != 0 || !regexp.MustCompile(`-: imported 0 threads, 0 turns, 0 spans, 0 notes; skipped \(already stored\) 1 threads, [1-9]`).MatchString(out) {
		t.Errorf("import again from stdin: %d %s %s", code, out, stderr)
	}
	if code, a, _ := runCapture(t, "export", "--clickhouse", dst, "--format", "jsonl"); code != 0 || noTime(a) != noTime(read(t, lines)) {
		t.Errorf("the imported database exports differently")
	}

	bad := filepath.Join(dir, "bad.jsonl")
	n := strings.Count(read(t, lines), "\n")
	write(t, bad, read(t, lines)+"{\"type\":\"turn\",\"turn\":{}}\n")
	code, _, stderr = runCapture(t, "import", "--clickhouse", dst, bad)
	if want := "bad.jsonl:" + strconv.Itoa(n+1) + ": empty turn_id"; code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "1 bad lines not imported") {
		t.Errorf("import with a bad line: %d %s, want exit 1 and %q", code, stderr, want)
	}
	newer := filepath.Join(dir, "newer.json")
	write(t, newer, strings.Replace(envelope, `"schemaVersion":1`, `"schemaVersion":9`, 1))
	if code, _, stderr = runCapture(t, "import", "--clickhouse", dst, newer); code != 1 ||
		!strings.Contains(stderr, "schemaVersion 9 is newer than this convtrace reads (schemaVersion 1)") {
		t.Errorf("import of a newer version: %d %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "--clickhouse", src, "--thread", "no-such-thread"}, `thread "no-such-thread": thread not found`},
		{[]string{"export", "--format", "xml"}, `--format: "xml": not json or jsonl`},
		{[]string{"export", "--since", "soon"}, `--since: "soon" is not a time`},
		{[]string{"import", "--clickhouse", dst}, "name the files to import"},
		{[]string{"import", "--clickhouse", dst, filepath.Join(dir, "missing.json")}, "no such file"},
	} {
		if code, _, stderr := runCapture(t, c.args...); code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("convtrace %q: %d %s, want exit 1 and %q", c.args, code, stderr, c.want)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// noTime is an export without its exportedAt.
func noTime(s string) string {
	return regexp.MustCompile(`"exportedAt":"[^"]*"`).ReplaceAllString(s, "")
}
