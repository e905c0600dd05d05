package store

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
)

// A partSource is a server whose parts of conversations a summary reads
// to learn what changed (changes.go): on one server, the server; on a
// cluster, one replica of each shard, pinned: the first in the cluster's
// order that answers, the same for every query of one refresh.
type partSource struct {
	replica string // its address on a cluster; "" on one server
	db      DB
	table   string // that holds conversations' rows there
}

// on names the source in an error.
func (src *partSource) on() string {
	if src.replica == "" {
		return ""
	}
	return " on " + src.replica
}

// A Dialer connects to the server at addr (host:port) of a cluster, in
// the convtrace database, with the settings of the cluster's connections.
type Dialer func(ctx context.Context, addr string) (DB, error)

// WithReplicas returns s reaching a cluster's servers one by one through
// dial, so that it follows what changed there instead of reading every
// thread on every request. A nil dial changes nothing.
func (s Store) WithReplicas(dial Dialer) Store {
	if dial == nil {
		return s
	}
	s.pins = &pinning{dial: dial, conns: map[string]DB{}}
	return s
}

// pinning keeps a connection to each replica it has reached, and the
// replicas pinned, for pinFor.
type pinning struct {
	dial  Dialer
	mu    sync.Mutex
	conns map[string]DB
	srcs  []*partSource
	at    time.Time
}

// pinFor is how long the replicas pinned stay so without asking again
// which answer first: a replica back from an outage is pinned again
// within it.
var pinFor = 10 * time.Second

// pinned returns the replicas pinned, nil when they are to be chosen again.
func (p *pinning) pinned() []*partSource {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.at) > pinFor {
		return nil
	}
	return p.srcs
}

func (p *pinning) pin(srcs []*partSource) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.srcs, p.at = srcs, time.Now()
}

// forget makes the next refresh choose the replicas again: one failed.
func (p *pinning) forget() { p.pin(nil) }

// selectShards lists the servers of a cluster, shard by shard, in the
// cluster's order.
const selectShards = `
SELECT shard_num, host_address, port
FROM system.clusters
WHERE cluster = {cluster}
ORDER BY shard_num, replica_num`

// shards returns the addresses of each shard's replicas of cluster.
func (s Store) shards(ctx context.Context, cluster string) ([][]string, error) {
	q := sqlf(selectShards, holes{"cluster": arg(cluster)})
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return nil, fmt.Errorf("query the servers of cluster %s: %w", cluster, err)
	}
	defer rows.Close()
	var (
		shards [][]string
		last   uint32
	)
	for rows.Next() {
		var (
			shard uint32
			host  string
			port  uint16
		)
		if err := rows.Scan(&shard, &host, &port); err != nil {
			return nil, fmt.Errorf("scan a server of cluster %s: %w", cluster, err)
		}
		if shard != last || len(shards) == 0 {
			shards, last = append(shards, nil), shard
		}
		shards[len(shards)-1] = append(shards[len(shards)-1], net.JoinHostPort(host, strconv.Itoa(int(port))))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the servers of cluster %s: %w", cluster, err)
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("cluster %s: no server in system.clusters", cluster)
	}
	return shards, nil
}

// partSources returns the servers whose parts tell what changed; nil on a
// cluster the store cannot reach server by server.
func (s Store) partSources(ctx context.Context) ([]*partSource, error) {
	l, err := s.layout(ctx)
	if err != nil {
		return nil, err
	}
	if l.cluster == "" {
		return []*partSource{{db: s.db, table: l.dataTable()}}, nil
	}
	if s.pins == nil {
		return nil, nil
	}
	if srcs := s.pins.pinned(); srcs != nil {
		return srcs, nil
	}
	shards, err := s.shards(ctx, l.cluster)
	if err != nil {
		return nil, err
	}
	srcs := make([]*partSource, 0, len(shards))
	for i, replicas := range shards {
		db, addr, err := s.pins.first(ctx, replicas)
		if err != nil {
			return nil, fmt.Errorf("shard %d of cluster %s: %w", i+1, l.cluster, err)
		}
		srcs = append(srcs, &partSource{replica: addr, db: db, table: l.dataTable()})
	}
	s.pins.pin(srcs)
	return srcs, nil
}

// pingTimeout bounds the question whether a replica answers: a frozen one
// takes the connection and says nothing.
const pingTimeout = 3 * time.Second

// first returns the first of replicas that answers.
func (p *pinning) first(ctx context.Context, replicas []string) (DB, string, error) {
	err := fmt.Errorf("no replica")
	for _, addr := range replicas {
		var db DB
		if db, err = p.conn(ctx, addr); err == nil {
			pctx, cancel := context.WithTimeout(ctx, pingTimeout)
			err = db.Exec(pctx, "SELECT 1")
			cancel()
			if err == nil {
				return db, addr, nil
			}
		}
	}
	return nil, "", fmt.Errorf("no replica answers: %w", err)
}

func (p *pinning) conn(ctx context.Context, addr string) (DB, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Opening connects lazily: no wait under the lock.
	if db, ok := p.conns[addr]; ok {
		return db, nil
	}
	db, err := p.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	p.conns[addr] = db
	return db, nil
}

// eachSource calls f once per source of parts, with the names of its
// parts.
func eachSource(parts []part, f func(src *partSource, names []string) error) error {
	var order []*partSource
	names := map[*partSource][]string{}
	for _, p := range parts {
		if _, ok := names[p.src]; !ok {
			order = append(order, p.src)
		}
		names[p.src] = append(names[p.src], p.name)
	}
	for _, src := range order {
		if err := f(src, names[src]); err != nil {
			return err
		}
	}
	return nil
}
