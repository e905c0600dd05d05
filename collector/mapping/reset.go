package mapping

import "github.com/convtrace/convtrace/schema"

// contextReset maps the span instrument's Recorder.ResetContext writes: a
// context_reset turn of the span's thread at its event's time, after which
// the thread's recent context starts anew.
func contextReset(s Span, c call) ([]schema.Turn, bool) {
	e, ok := s.event(schema.EventContextReset)
	if !ok {
		return nil, false
	}
	t := c.base(s)
	t.Role, t.TurnID, t.StartNS = schema.RoleContextReset, schema.TurnID(s.SpanID, schema.RoleContextReset, 0), e.TimeNS
	return []schema.Turn{t}, true
}
