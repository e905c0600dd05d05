package transfer

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// An export is untrusted input: every record is checked before it is
// stored, against what the collector itself stores.
const (
	maxID      = 1 << 10  // an id: turn, span, trace, thread, session, tool call
	maxName    = 1 << 10  // a name: project, phase, speaker, agent, model, role...
	maxContent = 32 << 20 // content or error text
	maxAttrs   = 4096     // attributes of a row
	maxAttr    = 1 << 20  // one attribute's key and value
	maxTitle   = 4 << 10  // a thread's title
)

var costSources = []string{"", schema.CostProvided, schema.CostPriced, schema.CostUnknown, schema.CostNone}

// validate checks the record rec holds.
func validate(rec *record) error {
	switch rec.Type {
	case typeThread:
		return validThread(rec.Thread)
	case typeTurn:
		return validTurn(rec.Turn)
	case typeSpan:
		return validSpan(rec.Span)
	case typeNote:
		return validNote(rec.Note)
	case typeHeader:
		return errors.New("a header record after the first line")
	}
	return fmt.Errorf("unknown record type %q", rec.Type)
}

func validThread(t *store.ThreadRecord) error {
	return check(
		id("thread id", t.ID), name("project", t.Project), text("title", t.Title, maxTitle),
		when(t.UpdatedNS == 0 && (t.Title != "" || t.Archived || t.Starred),
			"metadata (title, archived, starred) without its version updated_ns"),
	)
}

func validTurn(t *Turn) error {
	return check(
		id("turn_id", t.TurnID), id("thread_id", t.ThreadID), id("span_id", t.SpanID),
		optID("trace_id", t.TraceID), optID("parent_span_id", t.ParentSpanID), optID("parent_turn_id", t.ParentTurnID),
		optID("session_id", t.SessionID), optID("tool_call_id", t.ToolCallID),
		name("project", t.Project), name("phase", t.Phase), name("speaker", t.Speaker), name("agent", t.Agent),
		name("operation", t.Operation), name("provider", t.Provider), name("model", t.Model),
		name("tool_name", t.ToolName), name("status", t.Status),
		when(t.Role == "", "empty role"), name("role", t.Role),
		text("content", t.Content, maxContent), text("error", t.Error, maxContent),
		when(!slices.Contains(costSources, t.CostSource), fmt.Sprintf("cost_source %q is not provided, priced, unknown, none or empty", t.CostSource)),
		when(t.CostUSD != nil && (*t.CostUSD < 0 || math.IsInf(*t.CostUSD, 0)), "cost_usd below zero"),
		times(t.StartNS, t.DurationNS), optTime("heartbeat_ns", t.HeartbeatNS),
		attrs("attributes", t.Attributes),
		when(t.HistoryMessages > 0 && t.Role != schema.RolePrompt, "history_messages on a turn that is not a prompt"),
	)
}

func validSpan(s *schema.Span) error {
	return check(
		id("trace_id", s.TraceID), id("span_id", s.SpanID), optID("parent_span_id", s.ParentSpanID),
		optID("thread_id", s.ThreadID),
		name("project", s.Project), name("phase", s.Phase), name("speaker", s.Speaker), name("agent", s.Agent),
		text("name", s.Name, maxContent), name("kind", s.Kind), name("status", s.Status),
		text("status_message", s.StatusMsg, maxContent),
		name("operation", s.Operation), name("provider", s.Provider), name("model", s.Model),
		when(s.CostUSD != nil && (*s.CostUSD < 0 || math.IsInf(*s.CostUSD, 0)), "cost_usd below zero"),
		times(s.StartNS, s.DurationNS),
		attrs("attributes", s.Attributes), attrs("resource", s.Resource),
		when(len(s.EventNames) != len(s.EventTimesNS), "event_names and event_times_ns differ in length"),
		when(len(s.EventNames) > maxAttrs, fmt.Sprintf("more than %d events", maxAttrs)),
		eventTimes(s.EventTimesNS),
	)
}

func validNote(n *store.Note) error {
	return check(
		id("thread_id", n.ThreadID), id("turn_id", n.TurnID),
		when(utf8.RuneCountInString(n.Memo) > store.MaxMemoRunes, fmt.Sprintf("memo over %d characters", store.MaxMemoRunes)),
		when(n.UpdatedNS == 0, "updated_ns 0"),
	)
}

// check returns the first of problems, each "" when there is none.
func check(problems ...string) error {
	for _, p := range problems {
		if p != "" {
			return errors.New(p)
		}
	}
	return nil
}

func when(bad bool, problem string) string {
	if bad {
		return problem
	}
	return ""
}

func id(field, v string) string {
	if v == "" {
		return "empty " + field
	}
	return optID(field, v)
}

func optID(field, v string) string {
	if len(v) > maxID {
		return fmt.Sprintf("%s longer than %d bytes", field, maxID)
	}
	return printable(field, v)
}

func name(field, v string) string {
	if len(v) > maxName {
		return fmt.Sprintf("%s longer than %d bytes", field, maxName)
	}
	return printable(field, v)
}

func text(field, v string, limit int) string {
	return when(len(v) > limit, fmt.Sprintf("%s longer than %d bytes", field, limit))
}

// printable refuses control characters in an id or a name, which no
// recorder writes there and which would make a page or a log lie.
func printable(field, v string) string {
	for _, r := range v {
		if unicode.IsControl(r) {
			return fmt.Sprintf("%s holds the control character %U", field, r)
		}
	}
	return ""
}

// times checks a row's start_ns by the rule every entrance applies
// (schema.CheckTime). Its duration is no time: a call's answer starts
// when the call ends, and lasts as long as the call.
func times(start, duration uint64) string {
	if err := schema.CheckTime("start_ns", start); err != nil {
		return err.Error()
	}
	return when(duration > schema.MaxTimeNS, "duration_ns over 136 years")
}

// optTime checks a time that 0 leaves unset.
func optTime(field string, ns uint64) string {
	if ns == 0 {
		return ""
	}
	if err := schema.CheckTime(field, ns); err != nil {
		return err.Error()
	}
	return ""
}

func eventTimes(list []uint64) string {
	for _, ns := range list {
		if err := schema.CheckTime("event_times_ns", ns); err != nil {
			return err.Error()
		}
	}
	return ""
}

func attrs(field string, list []schema.Attr) string {
	if len(list) > maxAttrs {
		return fmt.Sprintf("more than %d %s", maxAttrs, field)
	}
	for _, a := range list {
		if len(a.Key)+len(a.Value) > maxAttr {
			return fmt.Sprintf("%s %q longer than %d bytes", field, a.Key, maxAttr)
		}
	}
	return ""
}
