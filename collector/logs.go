package collector

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
// span its records through attachLogs, or, when the span never arrives,
// maps spanFromLogs of the records alone.

// attachLogs adds each log record to s.events as an event named by its
// event name, its body filed under gen_ai.event.content, so GenAI mapping
// reads span events and log records the same way. Events stay in time
// order. Records of the same instant, which instrumentations send in
// separate requests as often as in one, go system messages first and
// answers last, and else in the order of their request.
func (s *span) attachLogs(logs []logRecord) {
	if len(logs) == 0 {
		return
	}
	sorted := slices.Clone(logs)
	slices.SortStableFunc(sorted, func(a, b logRecord) int {
		return cmp.Or(cmp.Compare(a.timeNS, b.timeNS), cmp.Compare(eventRank(a.eventName), eventRank(b.eventName)), cmp.Compare(a.pos, b.pos))
	})
	events := make([]event, 0, len(s.events)+len(logs))
	events = append(events, s.events...)
	for _, l := range sorted {
		events = append(events, l.event())
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].timeNS < events[j].timeNS })
	s.events = events
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

func (l logRecord) event() event {
	a := l.attrs
	if l.body != "" {
		list := make([]schema.Attr, 0, len(a.list)+1)
		list = append(list, a.list...)
		a = attrs{list: append(list, schema.Attr{Key: schema.KeyEventContent, Value: l.body})}
	}
	return event{name: l.eventName, timeNS: l.timeNS, attrs: a}
}

// needsLogs reports whether s is a GenAI call span that carries no content
// of its own, so its content may come as log records.
func needsLogs(s span) bool {
	return isGenAICall(s.attrs) && !hasContent(s) && !s.duplicate && vercelOperation(s.attrs) == ""
}

// hasContent reports whether a span records what a call said in any form
// mapping reads.
func hasContent(s span) bool {
	if _, ok := s.convtracePrompt(); ok {
		return true
	}
	return hasGenAIContent(s) || hasOpenLLMetryContent(s.attrs) || hasOpenInferenceContent(s.attrs) || hasVercelContent(s.attrs)
}

// spanFromLogs returns the span that log records of one span imply when
// the span itself never arrived: its ids and project from the records,
// its attributes merged from theirs (the first record naming a key wins),
// its events the records. It is ended, so mapTurns gives every turn the
// records alone make known.
func spanFromLogs(logs []logRecord) span {
	if len(logs) == 0 {
		return span{}
	}
	s := span{traceID: logs[0].traceID, spanID: logs[0].spanID, ended: true, resource: logs[0].resource}
	seen := map[string]bool{}
	for i, l := range logs {
		if i == 0 || l.timeNS < s.startNS {
			s.startNS = l.timeNS
		}
		s.endNS = max(s.endNS, l.timeNS)
		for _, kv := range l.attrs.list {
			if seen[kv.Key] || logContentKeys[kv.Key] {
				continue
			}
			seen[kv.Key] = true
			s.attrs.list = append(s.attrs.list, kv)
		}
	}
	s.attachLogs(logs)
	s.name = strings.TrimSpace(s.attrs.str(schema.KeyOperationName) + " " + s.attrs.str(schema.KeyRequestModel, schema.KeyResponseModel))
	if s.name == "" {
		s.name = logs[0].eventName
	}
	return s
}

// logContentKeys are the attributes of GenAI log records that belong to
// the record, not to the call: content and the event's own name.
var logContentKeys = map[string]bool{
	keyEventName:                 true,
	schema.KeyInputMessages:      true,
	schema.KeyOutputMessages:     true,
	schema.KeySystemInstructions: true,
}
