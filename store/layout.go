package store

import (
	"context"
	"sync"

	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
)

// layout is how conversations is stored, asked of the server once it
// answers: on one server a MergeTree table, whose parts system.parts lists;
// on a cluster (store/ddl WithCluster) a Distributed table over
// conversations_local on every shard, whose parts and indexes are the
// local table's, on each server.
type layout struct {
	mu       sync.Mutex
	known    bool
	cluster  string // empty on one server
	database string
	search   bool // idx_content_ngrams and idx_speakers (searchIndexed)
}

// layout returns the layout of conversations, asking the server the first
// time. A store of one caller (not made by New) asks every time.
func (s Store) layout(ctx context.Context) (*layout, error) {
	l := s.tables
	if l == nil {
		l = new(layout)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.known {
		return l, nil
	}
	var err error
	if l.cluster, l.database, err = topology.ClusterOf(ctx, s.db); err != nil {
		return nil, err
	}
	l.search = s.hasSearchIndexes(ctx, l)
	l.known = true
	return l, nil
}

// dataTable is the table that holds conversations' rows on each server.
func (l *layout) dataTable() string {
	if l.cluster != "" {
		return "conversations" + ddl.LocalSuffix
	}
	return "conversations"
}

// parts is the FROM and WHERE clause reading the active parts of
// conversations: on a cluster, those of one replica of every shard.
func (l *layout) parts() string { return ddl.ActiveParts("conversations", l.cluster, l.database) }

// hasSearchIndexes reports whether conversations has the search indexes:
// a server without them (18.16 has no data-skipping indexes) answers with
// an error, taken as no.
func (s Store) hasSearchIndexes(ctx context.Context, l *layout) bool {
	var n uint64
	err := queryRow(ctx, s.db, sqlText{selectSearchIndexes, []any{l.dataTable()}}, &n)
	return err == nil && n == 2
}

// queryRow scans the first row q returns into dest; no row leaves dest
// as it was.
func queryRow(ctx context.Context, db DB, q sqlText, dest ...any) error {
	rows, err := db.Query(ctx, q.text, q.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
	}
	return rows.Err()
}
