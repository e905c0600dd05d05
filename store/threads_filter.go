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
	threadsArchived = `meta_archived = {archived}`
	// threadsFound keeps the threads whose title (white space and JSON's
	// escapes folded as in the title shown), id or a thread attribute's value
	// holds the {query} (docs/design/queries.md).
	threadsFound = `(positionCaseInsensitiveUTF8(replaceRegexpAll(if(meta_title != '', meta_title, thread_first_prompt), '(\\\\[nrt]|\\s)+', ' '), {query}) > 0
    OR positionCaseInsensitiveUTF8(thread_id, {query}) > 0
    OR arrayExists(v -> positionCaseInsensitiveUTF8(v, {query}) > 0, thread_attr_values))`
	threadsFailed  = `failed_total > 0`
	threadsOK      = `failed_total = 0 AND open_total = 0`
	threadsRunning = `open_total > 0 AND thread_alive_ns >= {since}`
	// threadsInterrupted: calls not ended, none heard from {since}.
	threadsInterrupted = `open_total > 0 AND thread_alive_ns < {since}`
	threadsMinCost     = `cost_total >= {usd}`
	threadsMaxCost     = `cost_total <= {usd}`
	threadsMinDuration = `thread_last_ns - thread_first_ns >= {ns}`
	threadsMaxDuration = `thread_last_ns - thread_first_ns <= {ns}`
	// threadsWithAttr: the attribute {name} has the {value}.
	threadsWithAttr = `arrayExists((k, v) -> k = {name} AND v = {value}, thread_attr_keys, thread_attr_values)`
	threadsBefore   = `(thread_last_ns < {last} OR (thread_last_ns = {last} AND thread_id > {id}))`
	threadsAfter    = `(thread_last_ns > {last} OR (thread_last_ns = {last} AND thread_id < {id}))`
	newestFirst     = `
ORDER BY thread_last_ns DESC, thread_id
LIMIT {limit}`
	oldestFirst = `
ORDER BY thread_last_ns, thread_id DESC
LIMIT {limit}`
)

// threadsQuery is the query of the page of threads that f asks for, and
// its arguments, over the summaries; a call not heard of since aliveSince
// is interrupted. It asks for one thread more than the page holds, which
// tells whether there is a page beyond.
func threadsQuery(f ThreadFilter, aliveSince uint64) (string, []any) {
	where := []sqlText{raw(summariesKept)}
	if f.Project != "" {
		where = append(where, sqlText{summariesOfProject, []any{f.Project}})
	}
	if f.Provider != "" {
		where = append(where, sqlText{summariesOfProvider, []any{f.Provider}})
	}
	having, order := []sqlText{sqlf(threadsArchived, holes{"archived": arg(boolUInt8(f.Archived))})}, newestFirst
	add := func(cond string, p holes) { having = append(having, sqlf(cond, p)) }
	if f.Query != "" {
		add(threadsFound, holes{"query": arg(f.Query)})
	}
	since := holes{"since": arg(aliveSince)}
	switch f.Status {
	case StatusFailed:
		add(threadsFailed, nil)
	case StatusOK:
		add(threadsOK, nil)
	case StatusRunning:
		add(threadsRunning, since)
	case StatusInterrupted:
		add(threadsInterrupted, since)
	}
	if f.MinCostUSD != nil {
		add(threadsMinCost, holes{"usd": arg(*f.MinCostUSD)})
	}
	if f.MaxCostUSD != nil {
		add(threadsMaxCost, holes{"usd": arg(*f.MaxCostUSD)})
	}
	if f.MinDuration != nil {
		add(threadsMinDuration, holes{"ns": arg(uint64(*f.MinDuration))})
	}
	if f.MaxDuration != nil {
		add(threadsMaxDuration, holes{"ns": arg(uint64(*f.MaxDuration))})
	}
	names := make([]string, 0, len(f.Attrs))
	for name := range f.Attrs {
		names = append(names, name)
	}
	slices.Sort(names) // the same SQL for the same filter
	for _, name := range names {
		add(threadsWithAttr, holes{"name": arg(name), "value": arg(f.Attrs[name])})
	}
	switch {
	case f.Before != nil:
		add(threadsBefore, holes{"last": arg(f.Before.LastNS), "id": arg(f.Before.ID)})
	case f.After != nil:
		add(threadsAfter, holes{"last": arg(f.After.LastNS), "id": arg(f.After.ID)})
		order = oldestFirst
	}
	w, h := and(where...), and(having...)
	// selectThreadSums (threads.go) still takes positional holes: the
	// summaries, then the two WHERE clauses, whose arguments follow in
	// that order.
	q := sqlText{fmt.Sprintf(selectThreadSums, summariesAndShellsSQL, "WHERE "+w.text, "WHERE "+h.text), append(w.args, h.args...)}
	q = sqlf("{threads}"+order, holes{"threads": q, "limit": arg(uint64(f.Limit + 1))})
	return q.text, q.args
}
