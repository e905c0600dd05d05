package store

import (
	"context"
	"fmt"
	"maps"
	"time"
)

// What changed in conversations since a summary last looked: the parts
// that hold rows it has not read. ClickHouse numbers each insert with a
// block number that grows with every insert into the table, and a part
// holds the rows of a range of blocks (system.parts min_block_number,
// max_block_number); a merge or a mutation replaces parts with one whose
// range is their union. A summary keeps, per partition, the range of blocks
// whose rows it has read (seen_parts). Then:
//   - a part inside that range holds only rows already read: a merge
//     (which folds copies of a turn, and summaries read one copy of each)
//     or a mutation of them;
//   - any other part holds rows of an insert the summary has not read, and
//     only that part's rows are read to learn which threads or days they
//     touch.
//
// Between two parts of one partition the block numbers went to inserts
// into other partitions (a MergeTree numbers blocks per table, at commit),
// so none of them can later hold rows of this partition: once every part
// of a partition is read, the whole range from its first block to its
// last is. A part that merges away before its rows are read leaves its
// partition's range as it was, so that the merged part counts as new next
// time. A partition whose parts are all gone (dropped) makes the summary
// start over from every row.
//
// Rows removed in place (ALTER DELETE, a TTL) are not seen: the two
// deletions convtrace makes (DeleteThread, Prune) remove or recompute the
// summaries of what they removed themselves, and the TTL of retention is
// set past the daily prune's cutoff (cmd/convtrace/retention.go), so it
// finds nothing the prune left. On a ReplicatedMergeTree, block numbers are
// handed out before a part is committed; these ranges would then have to
// be kept part by part.
const (
	selectActiveParts = `
SELECT name, partition_id, min_block_number, max_block_number
FROM system.parts
WHERE database = currentDatabase() AND table = 'conversations' AND active`

	// selectSeenParts is the newest state of a summary.
	selectSeenParts = `
SELECT partitions, min_blocks, max_blocks
FROM seen_parts
WHERE summary = ?
ORDER BY computed_ns DESC
LIMIT 1`

	// insertSeenParts stores a state. Its computed_ns passes every stored
	// one, as insertSummaries', so that it wins even when the clock is
	// behind. Arguments: the summary, the computed_ns wished for, the
	// summary again, then the partitions and their ranges.
	insertSeenParts = `
INSERT INTO seen_parts (summary, computed_ns, partitions, min_blocks, max_blocks)
SELECT ?, greatest(?, (SELECT max(computed_ns) + 1 FROM seen_parts WHERE summary = ?)), ?, ?, ?`
)

// blocks is a range of block numbers.
type blocks struct{ min, max int64 }

// part is an active part of conversations.
type part struct {
	name, partition string
	blocks
}

// seenParts is, per partition, the range of blocks whose rows a summary
// has read.
type seenParts map[string]blocks

func (s seenParts) covers(p part) bool {
	r, ok := s[p.partition]
	return ok && r.min <= p.min && p.max <= r.max
}

// catchUp brings the summary named summary up to date with conversations.
// With nothing stored about it, or when rows were dropped, it calls all,
// which brings every row in; otherwise it calls changed with the names of
// the parts that hold rows it has not read, if any. Either runs after the
// parts were listed, so it reads every row they hold, and more. Requests
// that arrive meanwhile share it; it outlives a caller that gives up, so
// the others still get it.
func (s Store) catchUp(ctx context.Context, summary string, all func(context.Context) error, changed func(ctx context.Context, parts []string) error) error {
	if s.flights == nil {
		return s.catchUpNow(ctx, summary, all, changed)
	}
	ch := s.flights.DoChan("catch up "+summary, func() (any, error) {
		return nil, s.catchUpNow(context.WithoutCancel(ctx), summary, all, changed)
	})
	select {
	case res := <-ch:
		return res.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s Store) catchUpNow(ctx context.Context, summary string, all func(context.Context) error, changed func(ctx context.Context, parts []string) error) error {
	l, err := s.layout(ctx)
	if err != nil {
		return err
	}
	if l.cluster != "" {
		// On a cluster each shard numbers its own blocks, and its replicas
		// hand them out before a part is committed and may lag each other:
		// the ranges below would not be exact. Every request takes the
		// path that needs no telling what changed (docs/architecture.md,
		// "Cluster").
		return all(ctx)
	}
	seen, known, err := s.seenParts(ctx, summary)
	if err != nil {
		return err
	}
	parts, err := s.activeParts(ctx)
	if err != nil {
		return err
	}
	if !known || dropped(seen, parts) {
		if err := all(ctx); err != nil {
			return err
		}
		return s.storeSeen(ctx, summary, extend(seenParts{}, parts, nil))
	}
	var fresh []string
	for _, p := range parts {
		if !seen.covers(p) {
			fresh = append(fresh, p.name)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	if err := changed(ctx, fresh); err != nil {
		return err
	}
	// A fresh part that merged away meanwhile may not have been read:
	// its partition keeps its range, and the merged part is fresh next time.
	after, err := s.activeParts(ctx)
	if err != nil {
		return err
	}
	active := map[string]bool{}
	for _, p := range after {
		active[p.name] = true
	}
	var gone []string
	for _, name := range fresh {
		if !active[name] {
			gone = append(gone, name)
		}
	}
	return s.storeSeen(ctx, summary, extend(seen, parts, gone))
}

// dropped reports whether a partition the summary read has no part left.
func dropped(seen seenParts, parts []part) bool {
	live := map[string]bool{}
	for _, p := range parts {
		live[p.partition] = true
	}
	for partition := range seen {
		if !live[partition] {
			return true
		}
	}
	return false
}

// extend returns seen with, for each partition of parts, the range from
// its first to its last block, except for partitions where a part named in
// gone was not read.
func extend(seen seenParts, parts []part, gone []string) seenParts {
	next := maps.Clone(seen)
	skip := map[string]bool{}
	for _, p := range parts {
		for _, name := range gone {
			if p.name == name {
				skip[p.partition] = true
			}
		}
	}
	for _, p := range parts {
		if skip[p.partition] {
			continue
		}
		r, ok := next[p.partition]
		if !ok {
			r = p.blocks
		}
		next[p.partition] = blocks{min(r.min, p.min), max(r.max, p.max)}
	}
	return next
}

func (s Store) activeParts(ctx context.Context) ([]part, error) {
	rows, err := s.db.Query(ctx, selectActiveParts)
	if err != nil {
		return nil, fmt.Errorf("query parts of conversations: %w", err)
	}
	defer rows.Close()
	var parts []part
	for rows.Next() {
		var p part
		if err := rows.Scan(&p.name, &p.partition, &p.min, &p.max); err != nil {
			return nil, fmt.Errorf("scan part: %w", err)
		}
		parts = append(parts, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read parts of conversations: %w", err)
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
			seen[p] = blocks{lo[i], hi[i]}
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
	for p, r := range seen {
		partitions, lo, hi = append(partitions, p), append(lo, r.min), append(hi, r.max)
	}
	err := s.db.Exec(ctx, insertSeenParts, summary, uint64(time.Now().UnixNano()), summary, partitions, lo, hi)
	if err != nil {
		return fmt.Errorf("store seen parts of %s: %w", summary, err)
	}
	return nil
}
