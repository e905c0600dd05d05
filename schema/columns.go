package schema

// TurnBlock is turns as typed columns, in TurnColumns order: what a
// columnar insert appends column by column, instead of boxing every value
// of every row. Its strings are pointers into the rows added, so that the
// driver appends them without boxing each: a block is valid while its rows
// are unchanged, and its arrays until Reset.
type TurnBlock struct {
	ids                                                          [5][]*string // turn, trace, span, parent span, parent turn
	project, thread, session, phase, speaker, agent              []*string
	round, seq                                                   []uint16
	role, operation, provider, model, toolName, toolCallID       []*string
	content                                                      []*string
	history                                                      [][]*string
	contentBytes                                                 []uint32
	truncated, internal                                          []uint8
	tokensIn, tokensOut, tokensCacheRead, tokensCacheWrite, reas []*uint32
	cost                                                         []*float64
	costSource, status, errText                                  []*string
	start, duration, ttft, heartbeat                             []uint64
	attrKeys, attrValues                                         [][]*string
	revision                                                     []uint64
	arena                                                        strArena
	bytes                                                        int
}

// Add appends t as one more row.
func (b *TurnBlock) Add(t *Turn) {
	for i, id := range [5]*string{&t.TurnID, &t.TraceID, &t.SpanID, &t.ParentSpanID, &t.ParentTurnID} {
		addStr(&b.ids[i], id)
	}
	addStr(&b.project, &t.Project)
	addStr(&b.thread, &t.ThreadID)
	addStr(&b.session, &t.SessionID)
	addStr(&b.phase, &t.Phase)
	addStr(&b.speaker, &t.Speaker)
	addStr(&b.agent, &t.Agent)
	b.round = append(b.round, t.Round)
	addStr(&b.role, &t.Role)
	b.seq = append(b.seq, t.Seq)
	addStr(&b.operation, &t.Operation)
	addStr(&b.provider, &t.Provider)
	addStr(&b.model, &t.Model)
	addStr(&b.toolName, &t.ToolName)
	addStr(&b.toolCallID, &t.ToolCallID)
	addStr(&b.content, &t.Content)
	b.history = append(b.history, b.arena.strs(t.History))
	b.contentBytes = append(b.contentBytes, t.ContentBytes)
	b.truncated = append(b.truncated, boolByte(t.Truncated))
	b.internal = append(b.internal, boolByte(t.Internal))
	b.tokensIn = append(b.tokensIn, t.TokensIn)
	b.tokensOut = append(b.tokensOut, t.TokensOut)
	b.tokensCacheRead = append(b.tokensCacheRead, t.TokensCacheRead)
	b.tokensCacheWrite = append(b.tokensCacheWrite, t.TokensCacheWrite)
	b.reas = append(b.reas, t.TokensReasoning)
	b.cost = append(b.cost, t.CostUSD)
	addStr(&b.costSource, t.costSource())
	addStr(&b.status, &t.Status)
	addStr(&b.errText, &t.Error)
	b.start = append(b.start, t.StartNS)
	b.duration = append(b.duration, t.DurationNS)
	b.ttft = append(b.ttft, t.TTFTNS)
	b.heartbeat = append(b.heartbeat, t.HeartbeatNS)
	keys, values := b.arena.attrs(t.Attributes)
	b.attrKeys = append(b.attrKeys, keys)
	b.attrValues = append(b.attrValues, values)
	b.revision = append(b.revision, t.Revision)
	b.bytes += len(t.Content) + len(t.Error) + attrsBytes(t.Attributes)
}

// Len is the number of rows.
func (b *TurnBlock) Len() int { return len(b.project) }

// Bytes is the size of the rows' content, errors and attributes: about
// what a columnar insert copies of them.
func (b *TurnBlock) Bytes() int { return b.bytes }

// Reset empties the block, keeping its columns' memory for the next
// rows: a column left out here starts empty all the same.
func (b *TurnBlock) Reset() {
	*b = TurnBlock{
		ids:     [5][]*string{b.ids[0][:0], b.ids[1][:0], b.ids[2][:0], b.ids[3][:0], b.ids[4][:0]},
		project: b.project[:0], thread: b.thread[:0], session: b.session[:0], phase: b.phase[:0],
		speaker: b.speaker[:0], agent: b.agent[:0], round: b.round[:0], seq: b.seq[:0],
		role: b.role[:0], operation: b.operation[:0], provider: b.provider[:0], model: b.model[:0],
		toolName: b.toolName[:0], toolCallID: b.toolCallID[:0], content: b.content[:0], history: b.history[:0],
		contentBytes: b.contentBytes[:0], truncated: b.truncated[:0], internal: b.internal[:0],
		tokensIn: b.tokensIn[:0], tokensOut: b.tokensOut[:0], tokensCacheRead: b.tokensCacheRead[:0],
		tokensCacheWrite: b.tokensCacheWrite[:0], reas: b.reas[:0], cost: b.cost[:0],
		costSource: b.costSource[:0], status: b.status[:0], errText: b.errText[:0],
		start: b.start[:0], duration: b.duration[:0], ttft: b.ttft[:0], heartbeat: b.heartbeat[:0],
		attrKeys: b.attrKeys[:0], attrValues: b.attrValues[:0], revision: b.revision[:0], arena: b.arena[:0],
	}
}

// Columns returns the columns in TurnColumns order, each a typed slice.
func (b *TurnBlock) Columns() []any {
	return []any{
		b.ids[0], b.ids[1], b.ids[2], b.ids[3], b.ids[4],
		b.project, b.thread, b.session, b.phase, b.speaker, b.agent, b.round,
		b.role, b.seq, b.operation, b.provider, b.model, b.toolName, b.toolCallID,
		b.content, b.history, b.contentBytes, b.truncated, b.internal,
		b.tokensIn, b.tokensOut, b.tokensCacheRead, b.tokensCacheWrite, b.reas,
		b.cost, b.costSource, b.status, b.errText, b.start, b.duration, b.ttft, b.heartbeat,
		b.attrKeys, b.attrValues, b.revision,
	}
}

// SpanBlock is spans as typed columns, in SpanColumns order, with the
// strings of TurnBlock.
type SpanBlock struct {
	traceID, spanID, parentSpanID, project, thread, phase []*string
	round                                                 []uint16
	speaker, agent, name, kind                            []*string
	start, duration                                       []uint64
	status, statusMsg, operation, provider, model         []*string
	tokensIn, tokensOut                                   []*uint32
	cost                                                  []*float64
	attrKeys, attrValues, resKeys, resValues, eventNames  [][]*string
	eventTimes                                            [][]uint64
	arena                                                 strArena
	bytes                                                 int
}

// Add appends s as one more row.
func (b *SpanBlock) Add(s *Span) {
	addStr(&b.traceID, &s.TraceID)
	addStr(&b.spanID, &s.SpanID)
	addStr(&b.parentSpanID, &s.ParentSpanID)
	addStr(&b.project, &s.Project)
	addStr(&b.thread, &s.ThreadID)
	addStr(&b.phase, &s.Phase)
	b.round = append(b.round, s.Round)
	addStr(&b.speaker, &s.Speaker)
	addStr(&b.agent, &s.Agent)
	addStr(&b.name, &s.Name)
	addStr(&b.kind, &s.Kind)
	b.start = append(b.start, s.StartNS)
	b.duration = append(b.duration, s.DurationNS)
	addStr(&b.status, &s.Status)
	addStr(&b.statusMsg, &s.StatusMsg)
	addStr(&b.operation, &s.Operation)
	addStr(&b.provider, &s.Provider)
	addStr(&b.model, &s.Model)
	b.tokensIn = append(b.tokensIn, s.TokensIn)
	b.tokensOut = append(b.tokensOut, s.TokensOut)
	b.cost = append(b.cost, s.CostUSD)
	keys, values := b.arena.attrs(s.Attributes)
	b.attrKeys, b.attrValues = append(b.attrKeys, keys), append(b.attrValues, values)
	keys, values = b.arena.attrs(s.Resource)
	b.resKeys, b.resValues = append(b.resKeys, keys), append(b.resValues, values)
	times := s.EventTimesNS
	if times == nil {
		times = []uint64{}
	}
	b.eventNames, b.eventTimes = append(b.eventNames, b.arena.strs(s.EventNames)), append(b.eventTimes, times)
	b.bytes += len(s.StatusMsg) + attrsBytes(s.Attributes) + attrsBytes(s.Resource)
}

// Bytes is the size of the rows' status messages and attributes.
func (b *SpanBlock) Bytes() int { return b.bytes }

// Reset empties the block, keeping its columns' memory for the next
// rows: a column left out here starts empty all the same.
func (b *SpanBlock) Reset() {
	*b = SpanBlock{
		traceID: b.traceID[:0], spanID: b.spanID[:0], parentSpanID: b.parentSpanID[:0], project: b.project[:0],
		thread: b.thread[:0], phase: b.phase[:0], round: b.round[:0], speaker: b.speaker[:0], agent: b.agent[:0],
		name: b.name[:0], kind: b.kind[:0], start: b.start[:0], duration: b.duration[:0], status: b.status[:0],
		statusMsg: b.statusMsg[:0], operation: b.operation[:0], provider: b.provider[:0], model: b.model[:0],
		tokensIn: b.tokensIn[:0], tokensOut: b.tokensOut[:0], cost: b.cost[:0],
		attrKeys: b.attrKeys[:0], attrValues: b.attrValues[:0], resKeys: b.resKeys[:0], resValues: b.resValues[:0],
		eventNames: b.eventNames[:0], eventTimes: b.eventTimes[:0], arena: b.arena[:0],
	}
}

// Columns returns the columns in SpanColumns order, each a typed slice.
func (b *SpanBlock) Columns() []any {
	return []any{
		b.traceID, b.spanID, b.parentSpanID, b.project, b.thread, b.phase, b.round,
		b.speaker, b.agent, b.name, b.kind, b.start, b.duration, b.status, b.statusMsg,
		b.operation, b.provider, b.model, b.tokensIn, b.tokensOut, b.cost,
		b.attrKeys, b.attrValues, b.resKeys, b.resValues,
		b.eventNames, b.eventTimes,
	}
}

// addStr appends s to col, or the pointer of one of the two rows before
// when it holds the same value: a LowCardinality column then sends a value
// once for a run of rows, or of calls whose turns alternate two values
// (prompt, response).
func addStr(col *[]*string, s *string) {
	for i := len(*col) - 1; i >= 0 && i >= len(*col)-2; i-- {
		if *(*col)[i] == *s {
			s = (*col)[i]
			break
		}
	}
	*col = append(*col, s)
}

// strArena holds the pointers of a block's arrays: one allocation for many
// rows instead of one or two for each.
type strArena []*string

// strs returns pointers to the elements of ss, empty but not nil when
// there are none.
func (a *strArena) strs(ss []string) []*string {
	start := len(*a)
	for i := range ss {
		*a = append(*a, &ss[i])
	}
	return a.since(start)
}

// attrs returns pointers to the keys and to the values of attrs.
func (a *strArena) attrs(attrs []Attr) (keys, values []*string) {
	start := len(*a)
	for i := range attrs {
		*a = append(*a, &attrs[i].Key)
	}
	keys = a.since(start)
	start = len(*a)
	for i := range attrs {
		*a = append(*a, &attrs[i].Value)
	}
	return keys, a.since(start)
}

// since returns what was appended from start, capped so that appending to
// it cannot overwrite the arena.
func (a *strArena) since(start int) []*string {
	if start == len(*a) {
		return []*string{}
	}
	return (*a)[start:len(*a):len(*a)]
}

func attrsBytes(attrs []Attr) int {
	var n int
	for _, a := range attrs {
		n += len(a.Key) + len(a.Value)
	}
	return n
}
