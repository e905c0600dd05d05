package store

import (
	"context"
	"fmt"
	"sync"
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

// Replicas reaches the servers of a cluster one by one, so that a Store
// there follows what changed instead of reading every thread on every
// request.
type Replicas interface {
	// Shards lists the addresses of each shard's replicas, in the
	// cluster's order.
	Shards(ctx context.Context) ([][]string, error)
	// Open connects to the server at addr, in the convtrace database.
	Open(ctx context.Context, addr string) (DB, error)
}

// WithReplicas returns s reaching a cluster's servers through r.
func (s Store) WithReplicas(r Replicas) Store {
	s.pins = &pinning{replicas: r, conns: map[string]DB{}}
	return s
}

// pinning keeps a connection to each replica it has reached.
type pinning struct {
	replicas Replicas
	mu       sync.Mutex
	conns    map[string]DB
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
	shards, err := s.pins.replicas.Shards(ctx)
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
	return srcs, nil
}

// first returns the first of replicas that answers.
func (p *pinning) first(ctx context.Context, replicas []string) (DB, string, error) {
	err := fmt.Errorf("no replica")
	for _, addr := range replicas {
		var db DB
		if db, err = p.conn(ctx, addr); err == nil {
			if err = db.Exec(ctx, "SELECT 1"); err == nil {
				return db, addr, nil
			}
		}
	}
	return nil, "", fmt.Errorf("no replica answers: %w", err)
}

func (p *pinning) conn(ctx context.Context, addr string) (DB, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if db, ok := p.conns[addr]; ok {
		return db, nil
	}
	db, err := p.replicas.Open(ctx, addr)
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
