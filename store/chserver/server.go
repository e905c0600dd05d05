package chserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// ErrNoBinary means neither clickhouse nor clickhouse-server is on PATH.
var ErrNoBinary = errors.New("no ClickHouse server binary on PATH (looked for clickhouse and clickhouse-server); on Debian: apt-get install clickhouse-server")

// Server is a running local ClickHouse server.
type Server struct {
	dir      string
	TCPPort  int
	HTTPPort int
	node     *Node     // set for one server of several (StartNode)
	cmd      *exec.Cmd // nil when attached to a server another process started
	exited   chan struct{}
	waitErr  error
}

// FindBinary returns the command line that starts a server: the modern
// single binary as "clickhouse server", else "clickhouse-server".
func FindBinary() ([]string, error) {
	if p, err := exec.LookPath("clickhouse"); err == nil {
		return []string{p, "server"}, nil
	}
	if p, err := exec.LookPath("clickhouse-server"); err == nil {
		return []string{p}, nil
	}
	return nil, ErrNoBinary
}

// state is what a folder records about the server running in it, so that a
// second convtrace process can use that server instead of starting another.
type state struct {
	PID      int `json:"pid"`
	TCPPort  int `json:"tcp_port"`
	HTTPPort int `json:"http_port"`
}

// Start writes a configuration into dir (created when missing), starts a
// server with its data there on free loopback ports and waits until it
// answers. The server stops when Stop is called or the calling process dies.
func Start(ctx context.Context, dir string) (*Server, error) {
	bin, err := FindBinary()
	if err != nil {
		return nil, err
	}
	return start(ctx, dir, bin, nil, nil)
}

// start starts a server in dir on ports (TCP, HTTP), or on free ones when
// ports is nil, and remembers the ports in dir.
func start(ctx context.Context, dir string, bin []string, ports []int, node *Node) (*Server, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if ports == nil {
		if ports, err = FreePorts(2); err != nil {
			return nil, err
		}
	}
	s := &Server{dir: dir, TCPPort: ports[0], HTTPPort: ports[1], node: node}
	if err := s.writeConfig(); err != nil {
		return nil, err
	}
	if err := s.launch(ctx, bin); err != nil {
		return nil, err
	}
	st, _ := json.Marshal(state{TCPPort: s.TCPPort, HTTPPort: s.HTTPPort})
	if err := os.WriteFile(filepath.Join(dir, "ports.json"), st, 0o644); err != nil {
		_ = s.Stop(context.Background())
		return nil, fmt.Errorf("write server ports: %w", err)
	}
	return s, nil
}

// Restart starts a server this process started again, in the same folder
// on the same ports, once the previous process has exited (killed, say).
func (s *Server) Restart(ctx context.Context) error {
	if s.cmd == nil {
		return errors.New("restart: the server was started by another process")
	}
	<-s.exited
	bin, err := FindBinary()
	if err != nil {
		return err
	}
	return s.launch(ctx, bin)
}

// Signal sends sig to a server this process started: SIGSTOP freezes it
// (Signal returns once it is stopped), SIGCONT resumes it, SIGKILL kills
// it.
func (s *Server) Signal(sig syscall.Signal) error {
	if s.cmd == nil {
		return errors.New("signal: the server was started by another process")
	}
	if err := s.cmd.Process.Signal(sig); err != nil || sig != syscall.SIGSTOP {
		return err
	}
	stat := fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		// The state follows the command name in parentheses: T is stopped.
		if b, err := os.ReadFile(stat); err == nil {
			if i := strings.LastIndexByte(string(b), ')'); i >= 0 && strings.HasPrefix(string(b[i+1:]), " T") {
				return nil
			}
		}
	}
	return errors.New("signal: the server did not stop within 5 s")
}

// launch starts the server process on the written configuration and waits
// until it answers.
func (s *Server) launch(ctx context.Context, bin []string) error {
	logFile, err := os.OpenFile(filepath.Join(s.dir, "log", "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("create server log: %w", err)
	}
	defer logFile.Close()
	args := append(bin[1:], "--config-file="+filepath.Join(s.dir, "config.xml"))
	s.cmd = exec.Command(bin[0], args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	// Its own process group keeps a terminal's Ctrl-C for convtrace, which
	// then stops the server in order; Pdeathsig stops it if convtrace dies.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin[0], err)
	}
	exited := make(chan struct{})
	s.exited = exited
	cmd := s.cmd
	go func() {
		s.waitErr = cmd.Wait()
		close(exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop(context.Background())
		return err
	}
	st, _ := json.Marshal(state{PID: s.cmd.Process.Pid, TCPPort: s.TCPPort, HTTPPort: s.HTTPPort})
	if err := os.WriteFile(filepath.Join(s.dir, "server.json"), st, 0o644); err != nil {
		_ = s.Stop(context.Background())
		return fmt.Errorf("write server state: %w", err)
	}
	return nil
}

// DSN returns a clickhouse-go DSN for database on this server.
func (s *Server) DSN(database string) string {
	return fmt.Sprintf("clickhouse://127.0.0.1:%d/%s", s.TCPPort, database)
}

// Exited is closed when a server this process started exits; ExitErr then
// says how. Restart makes a new one.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// ExitErr is how the server ended, once Exited is closed.
func (s *Server) ExitErr() error { return s.waitErr }

// Dir is the server's folder.
func (s *Server) Dir() string { return s.dir }

// Owned reports whether this process started the server (and Stop stops it).
func (s *Server) Owned() bool { return s.cmd != nil }

// Stop stops a server this process started: SIGTERM, then SIGKILL if it has
// not exited when ctx ends or after 15 s. It does nothing for an attached
// server. It is safe to call more than once.
func (s *Server) Stop(ctx context.Context) error {
	if s.cmd == nil {
		return nil
	}
	select {
	case <-s.exited:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(15 * time.Second)
	defer timer.Stop()
	select {
	case <-s.exited:
	case <-ctx.Done():
		_ = s.cmd.Process.Kill()
		<-s.exited
	case <-timer.C:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	_ = os.Remove(filepath.Join(s.dir, "server.json"))
	return nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.ping(ctx) == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("clickhouse server exited during start-up (%v): %s", s.waitErr, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("clickhouse server not ready: %w: %s", ctx.Err(), s.logTail())
		case <-tick.C:
		}
	}
}

// pingClient keeps no idle connections: an idle keep-alive connection would
// hold up the server's shutdown.
var pingClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/ping", s.HTTPPort), nil)
	if err != nil {
		return err
	}
	resp, err := pingClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "Ok") {
		return fmt.Errorf("ping: %s %q", resp.Status, body)
	}
	// The HTTP port can answer a moment before the native one listens.
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", s.TCPPort))
	if err != nil {
		return err
	}
	return c.Close()
}

// LogTail returns the end of the server's logs, for a test that failed.
func (s *Server) LogTail() string { return s.logTail() }

// logTail returns the end of the server's error log, for start-up errors.
func (s *Server) logTail() string {
	var tail string
	for _, name := range []string{"stdout.log", "clickhouse-server.err.log"} {
		b, err := os.ReadFile(filepath.Join(s.dir, "log", name))
		if err != nil {
			continue
		}
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		tail += strings.TrimSpace(string(b)) + "\n"
	}
	return strings.TrimSpace(tail)
}

var configTmpl = template.Must(template.New("config").Parse(`<?xml version="1.0"?>
<yandex>
    <logger>
        <level>{{if .Node}}information{{else}}warning{{end}}</level>
        <log>{{.Dir}}/log/clickhouse-server.log</log>
        <errorlog>{{.Dir}}/log/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>{{.TCPPort}}</tcp_port>
    <http_port>{{.HTTPPort}}</http_port>
    {{- if .Node}}
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <interserver_http_port>{{.Node.InterserverPort}}</interserver_http_port>
    {{- end}}
    <path>{{.Dir}}/data/</path>
    <tmp_path>{{.Dir}}/tmp/</tmp_path>
    <user_files_path>{{.Dir}}/user_files/</user_files_path>
    <format_schema_path>{{.Dir}}/format_schemas/</format_schema_path>
    <users_config>users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mark_cache_size>268435456</mark_cache_size>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <max_concurrent_queries>100</max_concurrent_queries>
    <mlock_executable>false</mlock_executable>
    <compression>
        <case>
            <min_part_size>0</min_part_size>
            <min_part_size_ratio>0</min_part_size_ratio>
            <method>zstd</method>
        </case>
    </compression>
</yandex>
`))

const usersXML = `<?xml version="1.0"?>
<yandex>
    <profiles><default></default></profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas><default></default></quotas>
</yandex>
`

func (s *Server) writeConfig() error {
	for _, sub := range []string{"log", "data", "tmp", "user_files", "format_schemas", "config.d", "users.d"} {
		if err := os.MkdirAll(filepath.Join(s.dir, sub), 0o755); err != nil {
			return fmt.Errorf("create server folder: %w", err)
		}
	}
	f, err := os.Create(filepath.Join(s.dir, "config.xml"))
	if err != nil {
		return fmt.Errorf("write server config: %w", err)
	}
	defer f.Close()
	if err := configTmpl.Execute(f, struct {
		Dir               string
		TCPPort, HTTPPort int
		Node              *Node
	}{s.dir, s.TCPPort, s.HTTPPort, s.node}); err != nil {
		return fmt.Errorf("write server config: %w", err)
	}
	if s.node != nil {
		xml := "<?xml version=\"1.0\"?>\n<yandex>\n" + s.node.Config + "\n</yandex>\n"
		if err := os.WriteFile(filepath.Join(s.dir, "config.d", "node.xml"), []byte(xml), 0o644); err != nil {
			return fmt.Errorf("write server node config: %w", err)
		}
		users := "<?xml version=\"1.0\"?>\n<yandex><profiles><default>\n" + s.node.Profile + "\n</default></profiles></yandex>\n"
		if err := os.WriteFile(filepath.Join(s.dir, "users.d", "node.xml"), []byte(users), 0o644); err != nil {
			return fmt.Errorf("write server node users: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "users.xml"), []byte(usersXML), 0o644); err != nil {
		return fmt.Errorf("write server users: %w", err)
	}
	return nil
}
