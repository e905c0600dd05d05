package chserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The ports a local store's server (Ensure) takes the first time, when they
// are free: next to ClickHouse's own 9000 and 8123, so that a system
// server keeps those.
const (
	DefaultTCPPort  = 19000
	DefaultHTTPPort = 18123
)

// Ensure returns the server running in dir when there is one (started by
// another convtrace process, which keeps owning it), else starts one on the
// ports it had before (remembered in dir), else on DefaultTCPPort and
// DefaultHTTPPort, else on free ports: a DSN stays the same across
// restarts.
func Ensure(ctx context.Context, dir string) (*Server, error) {
	if s := Running(ctx, dir); s != nil {
		return s, nil
	}
	// A server still exiting (its convtrace was killed) holds the folder:
	// wait for it to go, or to answer after all.
	for deadline := time.Now().Add(30 * time.Second); previousAlive(dir) && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if s := Running(ctx, dir); s != nil {
			return s, nil
		}
	}
	bin, err := FindBinary()
	if err != nil {
		return nil, err
	}
	tcp, http, ok := Remembered(dir)
	if !ok {
		tcp, http = DefaultTCPPort, DefaultHTTPPort
	}
	if portFree(tcp) && portFree(http) {
		s, err := start(ctx, dir, bin, []int{tcp, http}, nil)
		if err == nil {
			return s, nil
		}
		// Another process may have taken a port since: free ones then.
	}
	return start(ctx, dir, bin, nil, nil)
}

// Remembered returns the ports the last server started in dir by Ensure
// listened on, whether or not it runs now.
func Remembered(dir string) (tcp, http int, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, "ports.json"))
	if err != nil {
		return 0, 0, false
	}
	var st state
	if json.Unmarshal(b, &st) != nil || st.TCPPort <= 0 || st.HTTPPort <= 0 {
		return 0, 0, false
	}
	return st.TCPPort, st.HTTPPort, true
}

// previousAlive says whether the process of the last server started in dir
// still runs.
func previousAlive(dir string) bool {
	st, ok := readState(dir)
	return ok && st.PID > 0 && syscall.Kill(st.PID, 0) == nil
}

func readState(dir string) (state, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "server.json"))
	if err != nil {
		return state{}, false
	}
	var st state
	if json.Unmarshal(b, &st) != nil {
		return state{}, false
	}
	return st, true
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Running returns the server another process started in dir and still
// runs there, nil when there is none.
func Running(ctx context.Context, dir string) *Server {
	st, ok := readState(dir)
	if !ok || st.PID <= 0 || syscall.Kill(st.PID, 0) != nil {
		return nil
	}
	s := &Server{dir: dir, TCPPort: st.TCPPort, HTTPPort: st.HTTPPort}
	if s.ping(ctx) != nil {
		return nil
	}
	return s
}
