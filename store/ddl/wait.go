package ddl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/convtrace/convtrace/store/topology"
)

// DefaultWaitLimit is how long Mutator.Wait waits when its context has no
// deadline: a mutation may stay pending for good on a replica (one killed
// and restarted, say), and a wait must end with who did not finish.
const DefaultWaitLimit = 5 * time.Minute

// pollTimeout bounds a read of one server's mutations: a frozen server
// takes the connection and answers nothing.
const pollTimeout = 5 * time.Second

// selectMutations lists a server's mutations of some tables still to do
// and the parts each has left to rewrite. A replica whose table is
// read-only (its ZooKeeper session not back, as after a restart) does no
// mutation until it is writable again, then does it from the replication
// log: it is not waited for, as one that is down is not.
const selectMutations = `
SELECT table, mutation_id, toUInt64(parts_to_do)
FROM system.mutations
WHERE database = ? AND has(?, table) AND is_done = 0
  AND (database, table) NOT IN (SELECT database, table FROM system.replicas WHERE is_readonly)
ORDER BY table, mutation_id`

// mutation is one mutation a server has still to do.
type mutation struct {
	table, id string
	parts     uint64
}

// serverWait is what a Wait knows of one server.
type serverWait struct {
	topology.Replica
	answered bool       // once it has, it is waited for, answering or not
	pending  []mutation // as it last answered
	silent   error      // why it did not answer the last poll; nil when it did
}

// Wait polls every server until no mutation of tables is left to do, calling
// progress (when not nil) with what is left. A server down at the first poll is
// passed over; at ctx's deadline, or DefaultWaitLimit, it fails naming what
// is not done (docs/design/cluster.md).
func (m Mutator) Wait(ctx context.Context, db DB, tables []string, progress func(mutations, parts uint64)) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultWaitLimit)
		defer cancel()
	}
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t
		if m.cluster.Name != "" {
			names[i] = t + LocalSuffix
		}
	}
	replicas, err := m.cluster.Replicas(ctx, db)
	if err != nil {
		return fmt.Errorf("mutations of %s: %w", strings.Join(tables, ", "), err)
	}
	servers := make([]serverWait, len(replicas))
	for i, r := range replicas {
		servers[i].Replica = r
		defer r.Close()
	}
	last := [2]uint64{1<<64 - 1, 0}
	for first := true; ; first = false {
		var down []error
		for i := range servers {
			s := &servers[i]
			if !first && !s.answered {
				continue
			}
			pending, err := s.poll(ctx, m.cluster.Database, names)
			switch {
			case ctx.Err() != nil:
				return unfinished(ctx, tables, servers)
			case err == nil:
				s.answered, s.pending, s.silent = true, pending, nil
			case s.answered:
				s.silent = err
			default:
				down = append(down, fmt.Errorf("%s: %w", s.Addr, err))
			}
		}
		if first && len(down) == len(servers) {
			return fmt.Errorf("mutations of %s: no server answers: %w", strings.Join(tables, ", "), errors.Join(down...))
		}
		var mutations, parts uint64
		for _, s := range servers {
			for _, p := range s.pending {
				mutations, parts = mutations+1, parts+p.parts
			}
		}
		if progress != nil && [2]uint64{mutations, parts} != last {
			progress(mutations, parts)
			last = [2]uint64{mutations, parts}
		}
		if mutations == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return unfinished(ctx, tables, servers)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// poll reads the server's mutations of tables still to do.
func (s *serverWait) poll(ctx context.Context, database string, tables []string) ([]mutation, error) {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	rows, err := s.Query(ctx, selectMutations, database, tables)
	if err != nil {
		return nil, fmt.Errorf("query mutations: %w", err)
	}
	defer rows.Close()
	var pending []mutation
	for rows.Next() {
		var p mutation
		if err := rows.Scan(&p.table, &p.id, &p.parts); err != nil {
			return nil, fmt.Errorf("scan mutations: %w", err)
		}
		pending = append(pending, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read mutations: %w", err)
	}
	return pending, nil
}

// unfinished is Wait's error when ctx ends: each server with mutations
// left as it last answered, and why it no longer answers.
func unfinished(ctx context.Context, tables []string, servers []serverWait) error {
	var left []string
	for _, s := range servers {
		if len(s.pending) == 0 {
			continue
		}
		var ms []string
		for _, p := range s.pending {
			ms = append(ms, fmt.Sprintf("%s mutation %s (parts to do: %d)", p.table, p.id, p.parts))
		}
		who := s.Addr
		if s.silent != nil {
			who += fmt.Sprintf(" (not answering: %v)", s.silent)
		}
		left = append(left, who+": "+strings.Join(ms, ", "))
	}
	err := fmt.Errorf("wait for the mutations of %s: %w", strings.Join(tables, ", "), ctx.Err())
	if len(left) == 0 {
		return err
	}
	return fmt.Errorf("%w; not done on %s", err, strings.Join(left, "; "))
}
