package testkit

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convtrace/convtrace/store/chserver"
)

// OwnClickHouse starts a ClickHouse server of the test's own in a temporary
// folder. It is resumed and stopped when the test ends.
func OwnClickHouse(t testing.TB) *chserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, err := chserver.Start(ctx, t.TempDir())
	SkipOrFail(t, err)
	t.Cleanup(func() {
		_ = srv.Signal(syscall.SIGCONT)
		_ = srv.Stop(context.Background())
	})
	return srv
}

// Signal sends sig to srv, failing the test when it cannot.
func Signal(t testing.TB, srv *chserver.Server, sig syscall.Signal) {
	t.Helper()
	if err := srv.Signal(sig); err != nil {
		t.Fatalf("signal clickhouse %v: %v", sig, err)
	}
}

// Restart starts srv again after it was killed, on the same ports and data.
func Restart(t testing.TB, srv *chserver.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := srv.Restart(ctx); err != nil {
		t.Fatalf("restart clickhouse: %v", err)
	}
}

var built struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the convtrace binary, built from this module
// on first use.
func Binary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		var root []byte
		if root, built.err = exec.Command("go", "env", "GOMOD").Output(); built.err != nil {
			return
		}
		dir, err := os.MkdirTemp("", "convtrace-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "convtrace")
		cmd := exec.Command("go", "build", "-o", built.path, "./cmd/convtrace")
		cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	if built.err != nil {
		t.Fatalf("build convtrace: %v", built.err)
	}
	return built.path
}

// Process is a child process: convtrace, or the test binary (StartTest).
type Process struct {
	Cmd *exec.Cmd
	// The addresses `convtrace serve` printed (host:port), when it serves.
	Viewer, OTLPHTTP, OTLPGRPC string

	out    *Buffer
	exited chan struct{}
}

// Start runs the convtrace binary with args in a process group of its own,
// so that Kill kills the agent a `convtrace run` runs too. It is killed
// when the test ends if it still runs.
func Start(t testing.TB, env []string, args ...string) *Process {
	t.Helper()
	return start(t, Binary(t), env, args...)
}

// StartTest runs the test binary itself as Start runs convtrace, with only
// the test named name: a helper test, told by env what to do, whose process
// the calling test kills.
func StartTest(t testing.TB, env []string, name string) *Process {
	t.Helper()
	return start(t, os.Args[0], env, "-test.run=^"+name+"$", "-test.v")
}

func start(t testing.TB, path string, env []string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &Process{Cmd: cmd, out: new(Buffer), exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", filepath.Base(path), err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.Kill(t)
		if t.Failed() {
			t.Logf("%s %s output:\n%s", filepath.Base(path), strings.Join(args, " "), p.Output())
		}
	})
	return p
}

// Serve runs `convtrace serve` on free loopback ports with extra flags and
// waits until it serves.
func Serve(t testing.TB, env []string, extra ...string) *Process {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--otlp-http", "127.0.0.1:0", "--otlp-grpc", "127.0.0.1:0"}, extra...)
	p := Start(t, env, args...)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(p.Output()))
		for sc.Scan() {
			line := sc.Text()
			addr := line[strings.LastIndex(line, " ")+1:]
			switch {
			case strings.HasPrefix(line, "convtrace viewer on "):
				p.Viewer = strings.TrimPrefix(addr, "http://")
			case strings.HasPrefix(line, "OTLP/HTTP receiver on "):
				p.OTLPHTTP = strings.TrimPrefix(addr, "http://")
			case strings.HasPrefix(line, "OTLP/gRPC receiver on "):
				p.OTLPGRPC = addr
			case line == "Ctrl-C stops":
				return p
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("convtrace serve exited before serving:\n%s", p.Output())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("convtrace serve not serving after 60 s:\n%s", p.Output())
	return nil
}

// Kill kills the process and its process group with SIGKILL and waits
// for it to exit.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// Wait waits at most d for the process to exit and returns its exit code.
func (p *Process) Wait(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.Cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("convtrace still running after %s:\n%s", d, p.Output())
		return -1
	}
}

// Output returns what the process printed so far, stdout and stderr.
func (p *Process) Output() string { return p.out.String() }

// Buffer is a bytes.Buffer safe for concurrent writes and reads: a child
// process's output, or a logger's, read while it runs.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
