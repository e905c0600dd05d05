package store

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// What changed in conversations since a summary last looked: the parts
// holding blocks it has not read (seen_parts), per partition on one
// server, part by part per shard on a cluster, read on a pinned replica
// (pinned.go); rows removed in place are said by their writes
// (invalidate.go). docs/design/summaries.md derives why this is exact.
const (
	// selectActiveParts lists the active parts of {table} on one server.
	selectActiveParts = `
SELECT name, partition_id, min_block_number, max_block_number
FROM system.parts
WHERE database = currentDatabase() AND table = {table} AND active`

	// selectSeenParts is the newest state of a summary.
	selectSeenParts = `
SELECT partitions, min_blocks, max_blocks
FROM seen_parts
WHERE summary = ?
ORDER BY computed_ns DESC
LIMIT 1`

	// insertSeenParts stores the state of {summary}: {partitions} and
	// their block ranges. Its computed_ns passes {now} and every stored
	// one, as insertSummaries', so that it wins even when the clock is
	// behind.
	insertSeenParts = `
INSERT INTO seen_parts (summary, computed_ns, partitions, min_blocks, max_blocks)
SELECT {summary}, greatest({now}, (SELECT max(computed_ns) + 1 FROM seen_parts WHERE summary = {summary})),
       {partitions}, {min_blocks}, {max_blocks}`
)

// blocks is a range of block numbers.
type blocks struct{ min, max int64 }

// part is an active part of conversations on the server of src.
type part struct {
	src             *partSource
	name, partition string
	blocks
}

// key names the part's partition in a summary's state: on a cluster, on
// the replica it was read from.
func (p part) key() string {
	if p.src.replica == "" {
		return p.partition
	}
	return p.src.replica + "/" + p.partition
}

// seenParts is, per partition key, the blocks whose rows a summary has
// read: one range on one server, disjoint ranges on a cluster.
type seenParts map[string][]blocks

func (s seenParts) covers(p part) bool {
	for _, r := range s[p.key()] {
		if r.min <= p.min && p.max <= r.max {
			return true
		}
	}
	return false
}

// catchUp brings the summary named summary up to date with conversations:
// all reads every row, changed the parts not read yet. Concurrent requests
// share one catch-up, which outlives a caller that gives up
// (docs/design/summaries.md, "Catching up").
func (s Store) catchUp(ctx context.Context, summary string, all func(context.Context) error, changed func(ctx context.Context, fresh []part) error) error {
	if s.flights == nil {
		return s.catchUpNow(ctx, summary, all, changed)
	}
	ch := s.flights.DoChan("catch up "+summary, func() (any, error) {
		err := s.catchUpNow(context.WithoutCancel(ctx), summary, all, changed)
		if err != nil && s.pins != nil {
			s.pins.forget()
		}
		return nil, err
	})
	select {
	case res := <-ch:
		return res.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s Store) catchUpNow(ctx context.Context, summary string, all func(context.Context) error, changed func(ctx context.Context, fresh []part) error) error {
	srcs, err := s.partSources(ctx)
	if err != nil {
		return err
	}
	if srcs == nil {
		// A cluster whose replicas the store cannot reach one by one:
		// every request takes the path that needs no telling what
		// changed.
		return all(ctx)
	}
	seen, known, err := s.seenParts(ctx, summary)
	if err != nil {
		return err
	}
	parts, err := listParts(ctx, srcs)
	if err != nil {
		return err
	}
	if !known || dropped(seen, parts) {
		if err := all(ctx); err != nil {
			return err
		}
		return s.storeSeen(ctx, summary, extend(seenParts{}, parts, nil))
	}
	var fresh []part
	for _, p := range parts {
		if !seen.covers(p) {
			fresh = append(fresh, p)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	if err := changed(ctx, fresh); err != nil {
		return err
	}
	// A fresh part that merged away meanwhile may not have been read: it
	// is not taken as read, and the merged part is fresh next time.
	after, err := listParts(ctx, srcs)
	if err != nil {
		return err
	}
	active := map[string]bool{}
	for _, p := range after {
		active[p.src.replica+"/"+p.name] = true
	}
	gone := map[string]bool{}
	for _, p := range fresh {
		if !active[p.src.replica+"/"+p.name] {
			gone[p.src.replica+"/"+p.name] = true
		}
	}
	return s.storeSeen(ctx, summary, extend(seen, parts, gone))
}

// dropped reports whether a partition the summary read has no part left:
// dropped, or read on a replica not read now.
func dropped(seen seenParts, parts []part) bool {
	live := map[string]bool{}
	for _, p := range parts {
		live[p.key()] = true
	}
	for key := range seen {
		if !live[key] {
			return true
		}
	}
	return false
}

// extend returns seen with the blocks of parts but those named in gone
// (replica/name). On one server a partition's range runs from its first
// block to its last, unless a part of it is gone; on a cluster each
// part's blocks are added to those of its partition.
func extend(seen seenParts, parts []part, gone map[string]bool) seenParts {
	next := make(seenParts, len(seen))
	for k, rs := range seen {
		next[k] = slices.Clone(rs)
	}
	skip := map[string]bool{}
	for _, p := range parts {
		if gone[p.src.replica+"/"+p.name] {
			skip[p.key()] = true
		}
	}
	for _, p := range parts {
		k := p.key()
		switch {
		case p.src.replica != "":
			if !gone[p.src.replica+"/"+p.name] {
				next[k] = addBlocks(next[k], p.blocks)
			}
		case skip[k]:
		case len(next[k]) == 0:
			next[k] = []blocks{p.blocks}
		default:
			r := next[k][0]
			next[k] = []blocks{{min(r.min, p.min), max(r.max, p.max)}}
		}
	}
	return next
}

// addBlocks adds b to rs, disjoint ranges in order, joining those it
// overlaps or touches.
func addBlocks(rs []blocks, b blocks) []blocks {
	out := make([]blocks, 0, len(rs)+1)
	for _, r := range rs {
		switch {
		case r.max+1 < b.min:
			out = append(out, r)
		case b.max+1 < r.min:
			out = append(out, b)
			b = r
		default:
			b = blocks{min(r.min, b.min), max(r.max, b.max)}
		}
	}
	return append(out, b)
}

// listParts lists the active parts of conversations on each source.
func listParts(ctx context.Context, srcs []*partSource) ([]part, error) {
	var parts []part
	for _, src := range srcs {
		q := sqlf(selectActiveParts, holes{"table": arg(src.table)})
		rows, err := src.db.Query(ctx, q.text, q.args...)
		if err != nil {
			return nil, fmt.Errorf("query parts of conversations%s: %w", src.on(), err)
		}
		for rows.Next() {
			p := part{src: src}
			if err := rows.Scan(&p.name, &p.partition, &p.min, &p.max); err != nil {
				rows.Close()
				return nil, fmt.Errorf("scan part%s: %w", src.on(), err)
			}
			parts = append(parts, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read parts of conversations%s: %w", src.on(), err)
		}
	}
	return parts, nil
}

// seenParts reads the newest state of summary; known is false when none is
// stored.
func (s Store) seenParts(ctx context.Context, summary string) (seen seenParts, known bool, err error) {
	rows, err := s.db.Query(ctx, selectSeenParts, summary)
	if err != nil {
		return nil, false, fmt.Errorf("query seen parts of %s: %w", summary, err)
	}
	defer rows.Close()
	seen = seenParts{}
	for rows.Next() {
		var (
			partitions []string
			lo, hi     []int64
		)
		if err := rows.Scan(&partitions, &lo, &hi); err != nil {
			return nil, false, fmt.Errorf("scan seen parts of %s: %w", summary, err)
		}
		if len(lo) != len(partitions) || len(hi) != len(partitions) {
			return nil, false, fmt.Errorf("seen parts of %s: %d partitions, %d and %d bounds", summary, len(partitions), len(lo), len(hi))
		}
		for i, p := range partitions {
			seen[p] = append(seen[p], blocks{lo[i], hi[i]})
		}
		known = true
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("read seen parts of %s: %w", summary, err)
	}
	return seen, known, nil
}

// storeSeen stores seen as the newest state of summary. An empty state is
// not stored: it says no more than none.
func (s Store) storeSeen(ctx context.Context, summary string, seen seenParts) error {
	if len(seen) == 0 {
		return nil
	}
	partitions := make([]string, 0, len(seen))
	lo, hi := make([]int64, 0, len(seen)), make([]int64, 0, len(seen))
	for p, rs := range seen {
		for _, r := range rs {
			partitions, lo, hi = append(partitions, p), append(lo, r.min), append(hi, r.max)
		}
	}
	q := sqlf(insertSeenParts, holes{"summary": arg(summary), "now": arg(uint64(time.Now().UnixNano())),
		"partitions": arg(partitions), "min_blocks": arg(lo), "max_blocks": arg(hi)})
	if err := q.exec(ctx, s.db); err != nil {
		return fmt.Errorf("store seen parts of %s: %w", summary, err)
	}
	return nil
}
