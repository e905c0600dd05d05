package collector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Health probing: a frozen ClickHouse accepts connections and answers
// nothing, and the writer only learns of it when a write times out, so
// readiness comes from a ping of its own, often and with a short timeout.
const (
	probeEvery   = 500 * time.Millisecond
	probeTimeout = time.Second
)

// pinger is what a health probe needs of a connection.
type pinger interface {
	Ping(ctx context.Context) error
	Close() error
}

// health keeps the result of the last probe of storage.
type health struct {
	dial func(ctx context.Context) (pinger, error)

	mu  sync.Mutex
	err error
}

func newHealth(dial func(ctx context.Context) (pinger, error)) *health {
	return &health{dial: dial, err: errors.New("clickhouse not probed yet")}
}

// run probes until stop is closed; a storage that stops answering shows
// within probeEvery + probeTimeout, and one that answers again as soon.
func (h *health) run(stop <-chan struct{}) {
	var conn pinger
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		var err error
		if conn == nil {
			conn, err = h.dial(ctx)
		}
		if err == nil {
			if err = conn.Ping(ctx); err != nil {
				_ = conn.Close()
				conn = nil
			}
		}
		cancel()
		h.mu.Lock()
		h.err = err
		h.mu.Unlock()
		select {
		case <-tick.C:
		case <-stop:
			return
		}
	}
}

// ready returns nil when the last probe reached storage.
func (h *health) ready() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return fmt.Errorf("clickhouse not answering: %w", h.err)
	}
	return nil
}
