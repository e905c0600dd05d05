package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/store/ddl"
)

// TestMain keeps every command of the tests, and the convtrace processes
// they start, off the user's own local store.
func TestMain(m *testing.M) {
	data, err := os.MkdirTemp("", "convtrace-data-")
	if err != nil {
		panic(err)
	}
	os.Setenv("CONVTRACE_DATA", data)
	testkit.Main(m)
}

// runCapture runs the command line and returns its exit code, stdout and
// stderr.
func runCapture(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, streams{&stdout, &stderr, strings.NewReader("")})
	return code, stdout.String(), stderr.String()
}

func TestUsageAndErrors(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		inStderr string
	}{
		{nil, 2, "Commands:"},
		{[]string{"--help"}, 0, "serve"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"serve", "--help"}, 0, "-listen"},
		{[]string{"demo", "--help"}, 0, "-clickhouse"},
		{[]string{"migrate", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"migrate", "--clickhouse", "postgres://x/y"}, 1, "scheme must be clickhouse://"},
		{[]string{"migrate", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"migrate", "--cluster", "c"}, 1, "--cluster c needs --clickhouse DSN"},
		{[]string{"cost", "--help"}, 0, "-cluster"},
	}
	for _, tt := range tests {
		code, _, stderr := runCapture(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("convtrace %q: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.inStderr)
		}
	}
}

func TestMigrateAndDemo(t *testing.T) {
	dsn := testkit.DSN(t)
	ms := ddl.Migrations()
	want := fmt.Sprintf("schema version %d", ms[len(ms)-1].Version)
	code, out, stderr := runCapture(t, "migrate", "--clickhouse", dsn)
	if code != 0 || !strings.HasPrefix(out, want+" (ClickHouse ") {
		t.Fatalf("migrate: exit %d, stdout %q, stderr %q; want %q", code, out, stderr, want)
	}
	if code, out, _ = runCapture(t, "migrate", "--clickhouse", dsn); code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("second migrate: exit %d, stdout %q", code, out)
	}

	code, out, stderr = runCapture(t, "demo", "--clickhouse", dsn)
	thread := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(thread, "demo-") || !strings.Contains(stderr, "recorded demo thread "+thread) {
		t.Fatalf("demo: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out2, _ := runCapture(t, "demo", "--clickhouse", dsn)
	if code != 0 || strings.TrimSpace(out2) == thread {
		t.Errorf("a second demo run: exit %d, thread %q; want a new thread", code, out2)
	}
}
