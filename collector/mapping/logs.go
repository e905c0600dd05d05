package mapping

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/convtrace/convtrace/schema"
)

// GenAI instrumentations may send a call's content as OTLP log records
// (events) linked to the call's span by trace and span id, in another
// request than the span, before or after it. Whoever joins them hands the
// span its records through AttachLogs, or, when the span never arrives,
// maps spanFromLogs of the records alone.

// AttachLogs adds each log record to s.events as an event named by its
// event name, its body under gen_ai.event.content, so GenAI mapping reads
// both alike. Events stay in time order; within an instant, system messages
// first and answers last, whatever the batching (docs/design/mapping.md).
func (s *Span) AttachLogs(logs []LogRecord) {
	if len(logs) == 0 {
		return
	}
	sorted := slices.Clone(logs)
	slices.SortStableFunc(sorted, func(a, b LogRecord) int {
		return cmp.Or(cmp.Compare(a.TimeNS, b.TimeNS), cmp.Compare(eventRank(a.EventName), eventRank(b.EventName)), cmp.Compare(a.Pos, b.Pos))
	})
	events := make([]Event, 0, len(s.Events)+len(logs))
	events = append(events, s.Events...)
	for _, l := range sorted {
		events = append(events, l.event())
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].TimeNS < events[j].TimeNS })
	s.Events = events
}

// eventRank orders GenAI events of one instant: system instructions, then
// the conversation so far, then the answer.
func eventRank(name string) int {
	switch name {
	case schema.EventSystemMessage:
		return 0
	case schema.EventChoice, eventContentCompletion:
		return 2
	}
	return 1
}

func (l LogRecord) event() Event {
	a := l.Attrs
	if name, _ := AgentEvent(l); name != "" {
		// Joined under its agent's key, a record keeps its own place.
		a.List = append(slices.Clip(a.List), schema.Attr{Key: keyRecordTraceID, Value: l.TraceID}, schema.Attr{Key: keyRecordSpanID, Value: l.SpanID})
		return Event{Name: name, TimeNS: l.TimeNS, Attrs: a}
	}
	if l.Body != "" {
		list := make([]schema.Attr, 0, len(a.List)+1)
		list = append(list, a.List...)
		a = Attrs{List: append(list, schema.Attr{Key: schema.KeyEventContent, Value: l.Body})}
	}
	return Event{Name: l.EventName, TimeNS: l.TimeNS, Attrs: a}
}

// NeedsLogs reports whether s is a GenAI call span that carries no content
// of its own, so its content may come as log records.
func NeedsLogs(s Span) bool {
	return isGenAICall(s.Attrs) && !hasContent(s) && !s.duplicate && vercelOperation(s.Attrs) == "" && !agentSpan(s)
}

// hasContent reports whether a span records what a call said in any form
// mapping reads.
func hasContent(s Span) bool {
	if _, ok := s.convtracePrompt(); ok {
		return true
	}
	return hasGenAIContent(s) || hasOpenLLMetryContent(s.Attrs) || hasOpenInferenceContent(s.Attrs) || hasVercelContent(s.Attrs)
}

// SpanFromLogs returns the span that log records of one span imply when
// the span itself never arrived: its ids and project from the records,
// its attributes merged from theirs (the first record naming a key wins),
// its events the records. It is ended, so Turns gives every turn the
// records alone make known.
func SpanFromLogs(logs []LogRecord) Span {
	if len(logs) == 0 {
		return Span{}
	}
	s := Span{TraceID: logs[0].TraceID, SpanID: logs[0].SpanID, Ended: true, Resource: logs[0].Resource}
	seen := map[string]bool{}
	for i, l := range logs {
		if i == 0 || l.TimeNS < s.StartNS {
			s.StartNS = l.TimeNS
		}
		s.EndNS = max(s.EndNS, l.TimeNS)
		for _, kv := range l.Attrs.List {
			if seen[kv.Key] || logContentKeys[kv.Key] {
				continue
			}
			seen[kv.Key] = true
			s.Attrs.List = append(s.Attrs.List, kv)
		}
	}
	s.AttachLogs(logs)
	s.Name = strings.TrimSpace(s.Attrs.Str(schema.KeyOperationName) + " " + s.Attrs.Str(schema.KeyRequestModel, schema.KeyResponseModel))
	if s.Name == "" {
		s.Name = logs[0].EventName
	}
	return s
}

// logContentKeys are the attributes of GenAI log records that belong to
// the record, not to the call: content and the event's own name.
var logContentKeys = map[string]bool{
	schema.KeyEventName:          true,
	schema.KeyInputMessages:      true,
	schema.KeyOutputMessages:     true,
	schema.KeySystemInstructions: true,
}
