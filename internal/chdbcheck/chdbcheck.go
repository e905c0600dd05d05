package chdbcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/store/ddl"
)

// RequireEnv is the environment variable that turns ErrUnavailable from a
// skip into a failure.
const RequireEnv = "CONVTRACE_REQUIRE_CHDB"

// DirEnv names a directory holding run.mjs and its node_modules, for test
// binaries that run away from their source tree.
const DirEnv = "CONVTRACE_CHDB_DIR"

// ErrUnavailable means node or the chdb package is not installed.
var ErrUnavailable = errors.New("chdb unavailable: needs node on PATH and `npm ci --prefix internal/chdbcheck --ignore-scripts`")

// Input is what to run: every statement in order, then every query.
// Unqualified table names resolve in a fresh database named convtrace.
type Input struct {
	Statements []string `json:"statements"`
	Queries    []string `json:"queries"`
}

// Output is what a successful run returned.
type Output struct {
	Version string   `json:"version"` // SELECT version(), e.g. "26.7.2.1"
	Results []Result `json:"results"` // one per query, in Input.Queries order
}

// Result is one query's result set.
type Result struct {
	Columns []Column `json:"columns"`
	// Rows map column names to values as ClickHouse's JSON format writes
	// them; numbers are json.Number, and 64-bit integers and decimals are
	// strings so that none loses precision.
	Rows []map[string]any `json:"rows"`
}

// Column is a result column's name and ClickHouse type.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Error is the statement or query chDB rejected, which ended the run.
type Error struct {
	Stage   string `json:"stage"` // "statement" or "query"; "input" or "session" before either ran
	Index   int    `json:"index"` // position in Input.Statements or Input.Queries
	SQL     string `json:"sql"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.SQL == "" {
		return fmt.Sprintf("chdb %s: %s", e.Stage, e.Message)
	}
	return fmt.Sprintf("chdb %s %d: %s\n%s", e.Stage, e.Index, e.Message, e.SQL)
}

// Run runs in in a new chDB session on a fresh temporary directory and
// returns the queries' results. A statement or query that fails ends the
// run with an *Error; a missing node or chdb package is ErrUnavailable.
func Run(ctx context.Context, in Input) (Output, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return Output{}, fmt.Errorf("%w (%v)", ErrUnavailable, err)
	}
	dir, err := moduleDir()
	if err != nil {
		return Output{}, err
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		return Output{}, fmt.Errorf("encode chdb input: %w", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "run.mjs"))
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if err := ctx.Err(); err != nil {
		return Output{}, fmt.Errorf("run chdb: %w", err)
	}

	var res struct {
		Output
		Error *Error `json:"error"`
	}
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&res); err != nil {
		if runErr == nil {
			runErr = err
		}
		return Output{}, fmt.Errorf("run chdb: %w: %s", runErr, strings.TrimSpace(stderr.String()))
	}
	switch {
	case res.Error != nil && res.Error.Stage == "load":
		return Output{}, fmt.Errorf("%w: %s", ErrUnavailable, res.Error.Message)
	case res.Error != nil:
		return res.Output, res.Error
	case runErr != nil:
		return Output{}, fmt.Errorf("run chdb: %w: %s", runErr, strings.TrimSpace(stderr.String()))
	}
	return res.Output, nil
}

// SkipOrFail skips t when err is ErrUnavailable and the environment does not
// set RequireEnv=1, and fails it on any other error.
func SkipOrFail(t testing.TB, err error) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, ErrUnavailable) && os.Getenv(RequireEnv) != "1":
		t.Skipf("skipping modern ClickHouse check: %v (set %s=1 to fail instead)", err, RequireEnv)
	default:
		t.Fatalf("chdb: %v", err)
	}
}

// Capabilities asks chDB its version and returns what schema derives from
// it. It skips t when chDB is unavailable (fails it under RequireEnv).
func Capabilities(ctx context.Context, t testing.TB) ddl.Capabilities {
	t.Helper()
	probe, err := Run(ctx, Input{})
	SkipOrFail(t, err)
	caps, err := ddl.DetectCapabilities(probe.Version)
	if err != nil {
		t.Fatal(err)
	}
	return caps
}

// Schema returns the modern server's capabilities and every migration's
// statements rendered for them, in order: what a test runs first to get
// the current schema on chDB.
func Schema(ctx context.Context, t testing.TB) (ddl.Capabilities, []string) {
	t.Helper()
	caps := Capabilities(ctx, t)
	var stmts []string
	for _, m := range ddl.Migrations() {
		ss, err := m.Statements(caps)
		if err != nil {
			t.Fatalf("render migration %d for ClickHouse %s: %v", m.Version, caps.Version, err)
		}
		stmts = append(stmts, ss...)
	}
	return caps, stmts
}

// moduleDir returns the directory holding run.mjs and node_modules/chdb:
// DirEnv when set, else this source file's directory.
func moduleDir() (string, error) {
	dir := os.Getenv(DirEnv)
	if dir == "" {
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			return "", fmt.Errorf("%w (cannot locate package source; set %s)", ErrUnavailable, DirEnv)
		}
		dir = filepath.Dir(file)
	}
	for _, need := range []string{"run.mjs", filepath.Join("node_modules", "chdb", "package.json")} {
		if _, err := os.Stat(filepath.Join(dir, need)); err != nil {
			return "", fmt.Errorf("%w (%v)", ErrUnavailable, err)
		}
	}
	return dir, nil
}
