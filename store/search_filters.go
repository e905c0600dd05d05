package store

import (
	"fmt"
	"strings"

	"github.com/convtrace/convtrace/schema"
)

// The states a turn's status filter tells apart beside schema.StatusOK and
// schema.StatusError: a prompt or tool call whose call has not ended, and
// is still heard of (running) or no longer (interrupted), as a thread's
// page shows them.
const (
	StatusRunning     = "running"
	StatusInterrupted = "interrupted"
)

// SearchStatuses are the values of SearchFilter.Status.
var SearchStatuses = []string{schema.StatusOK, schema.StatusError, StatusRunning, StatusInterrupted}

// The filters of a search beyond a thread page's (TurnFilter.conditions),
// fixed SQL with bound values, appended when asked for. A turn failed
// when its row says so (turnFailed). A prompt or tool call is ok once a
// row of its span shows its call ended (callEnded), and until then running
// while one shows it alive (callAlive), else interrupted, as on a thread's
// page, but over the spans of every thread (of the project, when given).
// A span's rows start no earlier than its prompt, so the spans of a month's
// turns are read from that month on (spanScope), not from the whole table.
// A running or interrupted call is read in the threads whose summary counts
// a call not ended (openThreads): a call's rows are all in its thread.
const (
	searchProject = `
  AND project = ?`
	searchModel = `
  AND model = ?`
	turnFailed  = `(status = 'error' OR role IN ('error', 'tool_result_error'))`
	callOpening = `role IN ('prompt', 'tool_call')`
	// spanRows keeps the turns of the spans that have a row that passes
	// %s.
	spanRows = `span_id IN
  (
      SELECT span_id
      FROM conversations
      WHERE %s
  )`
	// unendedSpans keeps the turns of the spans that have rows that pass
	// %s, none of which shows the call ended.
	unendedSpans = `span_id IN
  (
      SELECT span_id
      FROM conversations
      WHERE %s
      GROUP BY span_id
      HAVING max(` + callEnded + `) = 0
  )`
	// spanScope narrows the rows read of spans to the months from the
	// placeholder's on.
	spanScope = `toYYYYMM(ts) >= ?`
	// openThreads keeps the rows of the threads whose newest summary
	// counts a call not ended, %s more conditions on it.
	openThreads = `(project, thread_id) IN
  (
      SELECT project, thread_id
      FROM
      (
          SELECT project, thread_id, turns, open_calls, alive_ns
          FROM thread_summary
          ORDER BY computed_ns DESC
          LIMIT 1 BY project, thread_id
      )
      WHERE turns > 0 AND open_calls > 0%s
  )`
	// heardSince keeps, of openThreads, those heard from since the
	// placeholder: the threads of the calls running.
	heardSince = ` AND alive_ns >= ?`
	// The newest note of each turn decides, merged or not. The tuple's
	// thread_id narrows the rows read through the primary key.
	searchStarred = `
  AND (thread_id, turn_id) IN
  (
      SELECT thread_id, turn_id
      FROM turn_notes
      GROUP BY thread_id, turn_id
      HAVING argMax(starred, updated_ns) = 1
  )`
)

// filterConditions returns the SQL conditions of f's filters and their
// arguments, in order, for turns of fromMonth (YYYYMM) or later: a call
// alive since aliveNS (Unix ns) is running.
func (f SearchFilter) filterConditions(aliveNS uint64, fromMonth uint32) (string, []any) {
	turns := f.TurnFilter
	turns.Query, turns.TurnID, turns.HideInternal, turns.Starred = "", "", false, false
	cond, args := turns.conditions("")
	var b strings.Builder
	b.WriteString(cond)
	add := func(sql string, vals ...any) {
		b.WriteString(sql)
		args = append(args, vals...)
	}
	if f.Project != "" {
		add(searchProject, f.Project)
	}
	if f.Model != "" {
		add(searchModel, f.Model)
	}
	// The rows of the spans: of the months from fromMonth on, of the
	// project, and of the threads that may hold a call of the status.
	scope, scopeArgs := spanScope, []any{fromMonth}
	if f.Project != "" {
		scope, scopeArgs = scope+" AND project = ?", append(scopeArgs, f.Project)
	}
	if threads, threadArgs := f.statusThreads(aliveNS); threads != "" {
		add("\n  AND "+threads, threadArgs...)
		scope, scopeArgs = scope+" AND "+threads, append(scopeArgs, threadArgs...)
	}
	spans := func(tmpl, cond string, args ...any) (string, []any) {
		return fmt.Sprintf(tmpl, cond+" AND "+scope), append(args, scopeArgs...)
	}
	switch f.Status {
	case schema.StatusError:
		add("\n  AND " + turnFailed)
	case schema.StatusOK:
		ended, endedArgs := spans(spanRows, callEnded)
		add("\n  AND NOT "+turnFailed+"\n  AND (NOT "+callOpening+" OR "+ended+")", endedArgs...)
	case StatusRunning:
		// The few spans alive first, then which of them have not ended.
		alive, aliveArgs := spans(spanRows, callAlive, aliveNS)
		running, runningArgs := spans(unendedSpans, alive, aliveArgs...)
		add("\n  AND "+callOpening+"\n  AND "+running, runningArgs...)
	case StatusInterrupted:
		ended, endedArgs := spans(spanRows, callEnded)
		alive, aliveArgs := spans(spanRows, callAlive, aliveNS)
		add("\n  AND "+callOpening+"\n  AND NOT "+ended+"\n  AND NOT "+alive, append(endedArgs, aliveArgs...)...)
	}
	if f.Starred {
		add(searchStarred)
	}
	return b.String(), args
}

// statusThreads is the condition keeping the threads that may hold a call
// of f's status, and its arguments: "" for a status any thread may hold.
func (f SearchFilter) statusThreads(aliveNS uint64) (string, []any) {
	switch f.Status {
	case StatusRunning:
		return fmt.Sprintf(openThreads, heardSince), []any{aliveNS}
	case StatusInterrupted:
		return fmt.Sprintf(openThreads, ""), nil
	}
	return "", nil
}
