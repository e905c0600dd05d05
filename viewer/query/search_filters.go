package query

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
// when its row says so (turnFailed); a prompt or tool call is not ok until
// a row of its span shows its call ended (callEnded), and running while
// one shows it alive (callAlive), as on a thread's page, but over the
// spans of every thread (of the project, when given).
const (
	searchProject = `
  AND project = ?`
	searchModel = `
  AND model = ?`
	turnFailed  = `(status = 'error' OR role IN ('error', 'tool_result_error'))`
	callOpening = `role IN ('prompt', 'tool_call')`
	// spansWhere reads the spans with a row that passes %s.
	spansWhere = `span_id IN
  (
      SELECT span_id
      FROM conversations
      WHERE %s
  )`
	// The newest note of each turn decides, merged or not. The threads
	// with a star narrow the rows read through the primary key.
	searchStarred = `
  AND thread_id IN
  (
      SELECT thread_id
      FROM turn_notes
      GROUP BY thread_id, turn_id
      HAVING argMax(starred, updated_ns) = 1
  )
  AND (thread_id, turn_id) IN
  (
      SELECT thread_id, turn_id
      FROM turn_notes
      GROUP BY thread_id, turn_id
      HAVING argMax(starred, updated_ns) = 1
  )`
)

// filterConditions returns the SQL conditions of f's filters and their
// arguments, in order; a call alive since alive (Unix ns) is running.
func (f SearchFilter) filterConditions(alive uint64) (string, []any) {
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
	switch f.Status {
	case schema.StatusError:
		add("\n  AND " + turnFailed)
	case schema.StatusOK:
		ended, endedArgs := f.spans(callEnded)
		add("\n  AND NOT "+turnFailed+"\n  AND (NOT "+callOpening+" OR "+ended+")", endedArgs...)
	case StatusRunning, StatusInterrupted:
		ended, endedArgs := f.spans(callEnded)
		alive, aliveArgs := f.spans(callAlive, alive)
		if f.Status == StatusInterrupted {
			alive = "NOT " + alive
		}
		add("\n  AND "+callOpening+"\n  AND NOT "+ended+"\n  AND "+alive, append(endedArgs, aliveArgs...)...)
	}
	if f.Starred {
		add(searchStarred)
	}
	return b.String(), args
}

// spans is the condition that a turn's span has a row that passes cond
// (its placeholders bound to args) in f's project, and its arguments.
func (f SearchFilter) spans(cond string, args ...any) (string, []any) {
	if f.Project != "" {
		cond += " AND project = ?"
		args = append(args, f.Project)
	}
	return fmt.Sprintf(spansWhere, cond), args
}
