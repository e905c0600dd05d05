package store

import (
	"fmt"
	"slices"
	"time"
)

// ThreadFilter narrows the threads list and picks its page; an empty field
// does not filter.
type ThreadFilter struct {
	Project  string
	Provider string // threads with at least one turn from it
	// Query is found, case-insensitively, in the title, the thread id or
	// the value of a thread attribute.
	Query    string
	Archived bool // only archived threads; without it only the others
	// Status is one of ThreadStatuses.
	Status string
	// Cost and duration bounds, inclusive; a thread whose cost is unknown
	// passes no cost bound.
	MinCostUSD, MaxCostUSD   *float64
	MinDuration, MaxDuration *time.Duration
	// Attrs keeps the threads whose thread attribute of each name has the
	// value given.
	Attrs map[string]string
	// Before asks for the page of threads older than the cursor, After for
	// the one newer; neither is the newest page.
	Before, After *Cursor
	Limit         int
}

// Values of ThreadFilter.Status: threads with a failed call, with none
// failed and none unfinished, with a call running (StatusRunning), with a
// call that will not end (StatusInterrupted: its recorder went silent).
const (
	StatusFailed = "failed"
	StatusOK     = "ok"
)

// ThreadStatuses are the values ThreadFilter.Status takes.
var ThreadStatuses = []string{StatusFailed, StatusOK, StatusRunning, StatusInterrupted}

// Conditions and orders on the combined threads.
const (
	threadsArchived = `meta_archived = ?`
	// threadsFound keeps the threads whose title holds the query (the
	// override when there is one, else the first prompt's first 2000 runes
	// as the summary holds it, of messages JSON that includes the JSON
	// around the user's message; runs of white space and JSON's \n, \r and
	// \t become one space, as in the title, which is on one line), or
	// whose id or a thread attribute's value does. Its arguments: the
	// query, three times.
	threadsFound = `(positionCaseInsensitiveUTF8(replaceRegexpAll(if(meta_title != '', meta_title, thread_first_prompt), '(\\\\[nrt]|\\s)+', ' '), ?) > 0
    OR positionCaseInsensitiveUTF8(thread_id, ?) > 0
    OR arrayExists(v -> positionCaseInsensitiveUTF8(v, ?) > 0, thread_attr_values))`
	threadsFailed  = `failed_total > 0`
	threadsOK      = `failed_total = 0 AND open_total = 0`
	threadsRunning = `open_total > 0 AND thread_alive_ns >= ?`
	// threadsInterrupted: calls not ended, none heard from since the
	// cutoff.
	threadsInterrupted = `open_total > 0 AND thread_alive_ns < ?`
	threadsMinCost     = `cost_total >= ?`
	threadsMaxCost     = `cost_total <= ?`
	threadsMinDuration = `thread_last_ns - thread_first_ns >= ?`
	threadsMaxDuration = `thread_last_ns - thread_first_ns <= ?`
	// threadsWithAttr: the attribute of a name (the first argument) has a
	// value (the second).
	threadsWithAttr = `arrayExists((k, v) -> k = ? AND v = ?, thread_attr_keys, thread_attr_values)`
	threadsBefore   = `(thread_last_ns < ? OR (thread_last_ns = ? AND thread_id > ?))`
	threadsAfter    = `(thread_last_ns > ? OR (thread_last_ns = ? AND thread_id < ?))`
	newestFirst     = `
ORDER BY thread_last_ns DESC, thread_id
LIMIT ?`
	oldestFirst = `
ORDER BY thread_last_ns, thread_id DESC
LIMIT ?`
)

// threadsQuery is the query of the page of threads that f asks for, and
// its arguments, over the summaries; a call not heard of since aliveSince
// is interrupted. It asks for one thread more than the page holds, which
// tells whether there is a page beyond.
func threadsQuery(f ThreadFilter, aliveSince uint64) (string, []any) {
	where := []string{summariesKept}
	var args []any
	if f.Project != "" {
		where, args = append(where, summariesOfProject), append(args, f.Project)
	}
	if f.Provider != "" {
		where, args = append(where, summariesOfProvider), append(args, f.Provider)
	}
	having, order := []string{threadsArchived}, newestFirst
	args = append(args, boolUInt8(f.Archived))
	add := func(cond string, condArgs ...any) {
		having, args = append(having, cond), append(args, condArgs...)
	}
	if f.Query != "" {
		add(threadsFound, f.Query, f.Query, f.Query)
	}
	switch f.Status {
	case StatusFailed:
		add(threadsFailed)
	case StatusOK:
		add(threadsOK)
	case StatusRunning:
		add(threadsRunning, aliveSince)
	case StatusInterrupted:
		add(threadsInterrupted, aliveSince)
	}
	if f.MinCostUSD != nil {
		add(threadsMinCost, *f.MinCostUSD)
	}
	if f.MaxCostUSD != nil {
		add(threadsMaxCost, *f.MaxCostUSD)
	}
	if f.MinDuration != nil {
		add(threadsMinDuration, uint64(*f.MinDuration))
	}
	if f.MaxDuration != nil {
		add(threadsMaxDuration, uint64(*f.MaxDuration))
	}
	names := make([]string, 0, len(f.Attrs))
	for name := range f.Attrs {
		names = append(names, name)
	}
	slices.Sort(names) // the same SQL for the same filter
	for _, name := range names {
		add(threadsWithAttr, name, f.Attrs[name])
	}
	switch {
	case f.Before != nil:
		add(threadsBefore, f.Before.LastNS, f.Before.LastNS, f.Before.ID)
	case f.After != nil:
		add(threadsAfter, f.After.LastNS, f.After.LastNS, f.After.ID)
		order = oldestFirst
	}
	args = append(args, uint64(f.Limit+1))
	return fmt.Sprintf(selectThreadSums, summariesAndShellsSQL, conditions(where), conditions(having)) + order, args
}
