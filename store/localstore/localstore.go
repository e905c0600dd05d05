// Package localstore finds the per-user local store every convtrace
// command and Go pipeline shares when given no DSN: one data directory,
// the ClickHouse server running in it, and the endpoints of the `convtrace
// serve` running on it.
package localstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/convtrace/convtrace/store/chserver"
	"github.com/convtrace/convtrace/store/topology"
)

// DataEnv overrides the data directory, as the commands' --data does.
const DataEnv = "CONVTRACE_DATA"

// Dir returns the data directory: $CONVTRACE_DATA, else
// $XDG_DATA_HOME/convtrace, else ~/.local/share/convtrace (./.convtrace
// when there is no home).
func Dir() string {
	if d := os.Getenv(DataEnv); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "convtrace")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "convtrace")
	}
	return ".convtrace"
}

// ClickHouseDir is where the data directory's ClickHouse server keeps its
// data and configuration.
func ClickHouseDir(data string) string { return filepath.Join(data, "clickhouse") }

// SpoolDir is where rows not stored yet wait for the next process on
// data to store them.
func SpoolDir(data string) string { return filepath.Join(data, "spool") }

// ErrNoStore means the data directory has never had a server.
var ErrNoStore = errors.New("no local convtrace store")

// DSN returns the DSN of the data directory's ClickHouse server, from the
// ports it keeps across restarts, whether or not it runs now.
func DSN(data string) (string, error) {
	tcp, _, ok := chserver.Remembered(ClickHouseDir(data))
	if !ok {
		return "", fmt.Errorf("%w in %s: start one with `convtrace serve` (or `make run`), or give a ClickHouse DSN", ErrNoStore, data)
	}
	return fmt.Sprintf("clickhouse://127.0.0.1:%d/%s", tcp, topology.DefaultDatabase), nil
}

// Running returns the data directory's ClickHouse server when one runs.
func Running(ctx context.Context, data string) *chserver.Server {
	return chserver.Running(ctx, ClickHouseDir(data))
}

// Endpoints are where the `convtrace serve` running on a data directory
// answers.
type Endpoints struct {
	PID      int    `json:"pid"`
	Viewer   string `json:"viewer"`              // http://127.0.0.1:8080
	OTLPHTTP string `json:"otlp_http,omitempty"` // base URL, as OTEL_EXPORTER_OTLP_ENDPOINT
	OTLPGRPC string `json:"otlp_grpc,omitempty"` // host:port
}

func endpointsFile(data string) string { return filepath.Join(data, "serve.json") }

// WriteEndpoints records the endpoints of this process's serve.
func WriteEndpoints(data string, e Endpoints) error {
	b, _ := json.Marshal(e)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	return os.WriteFile(endpointsFile(data), b, 0o644)
}

// RemoveEndpoints forgets the endpoints of the serve that wrote them, pid.
func RemoveEndpoints(data string, pid int) {
	if e, ok := readEndpoints(data); ok && e.PID == pid {
		_ = os.Remove(endpointsFile(data))
	}
}

// ServeEndpoints returns the endpoints of the serve running on the data
// directory; false when none runs.
func ServeEndpoints(data string) (Endpoints, bool) {
	e, ok := readEndpoints(data)
	if !ok || e.PID <= 0 || syscall.Kill(e.PID, 0) != nil {
		return Endpoints{}, false
	}
	return e, true
}

func readEndpoints(data string) (Endpoints, bool) {
	b, err := os.ReadFile(endpointsFile(data))
	if err != nil {
		return Endpoints{}, false
	}
	var e Endpoints
	if json.Unmarshal(b, &e) != nil {
		return Endpoints{}, false
	}
	return e, true
}

// ServingError is what LockServe returns while another serve holds the
// data directory.
type ServingError struct {
	Data string
	Endpoints
}

func (e *ServingError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("a convtrace serve is starting on the local store in %s: one serve per store; wait for it, or stop it first", e.Data)
	}
	return fmt.Sprintf("a convtrace serve (pid %d) already serves the local store in %s at %s: open that one, or stop it (kill %d) first; one serve per store (another store: --data DIR)",
		e.PID, e.Data, e.Viewer, e.PID)
}

// LockServe makes this process the one serve of the data directory until
// unlock, or returns a *ServingError naming the serve that is.
func LockServe(data string) (unlock func(), err error) {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(data, "serve.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		e, _ := ServeEndpoints(data)
		return nil, &ServingError{Data: data, Endpoints: e}
	}
	return func() { f.Close() }, nil
}
