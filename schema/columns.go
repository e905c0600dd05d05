package schema

// TurnBlock is turns as typed columns, in TurnColumns order: what a
// columnar insert appends column by column, instead of boxing every value
// of every row.
type TurnBlock struct {
	ids                                                          [5][]string // turn, trace, span, parent span, parent turn
	project, thread, session, phase, speaker, agent              []string
	round, seq                                                   []uint16
	role, operation, provider, model, toolName, toolCallID       []string
	content                                                      []string
	history                                                      [][]string
	contentBytes                                                 []uint32
	truncated, internal                                          []uint8
	tokensIn, tokensOut, tokensCacheRead, tokensCacheWrite, reas []*uint32
	cost                                                         []*float64
	costSource, status, errText                                  []string
	start, duration, ttft, heartbeat                             []uint64
	attrKeys, attrValues                                         [][]string
	revision                                                     []uint64
}

// Add appends t as one more row.
func (b *TurnBlock) Add(t *Turn) {
	for i, id := range [5]string{t.TurnID, t.TraceID, t.SpanID, t.ParentSpanID, t.ParentTurnID} {
		b.ids[i] = append(b.ids[i], id)
	}
	b.project = append(b.project, t.Project)
	b.thread = append(b.thread, t.ThreadID)
	b.session = append(b.session, t.SessionID)
	b.phase = append(b.phase, t.Phase)
	b.speaker = append(b.speaker, t.Speaker)
	b.agent = append(b.agent, t.Agent)
	b.round = append(b.round, t.Round)
	b.role = append(b.role, t.Role)
	b.seq = append(b.seq, t.Seq)
	b.operation = append(b.operation, t.Operation)
	b.provider = append(b.provider, t.Provider)
	b.model = append(b.model, t.Model)
	b.toolName = append(b.toolName, t.ToolName)
	b.toolCallID = append(b.toolCallID, t.ToolCallID)
	b.content = append(b.content, t.Content)
	b.history = append(b.history, history(t.History))
	b.contentBytes = append(b.contentBytes, t.ContentBytes)
	b.truncated = append(b.truncated, boolByte(t.Truncated))
	b.internal = append(b.internal, boolByte(t.Internal))
	b.tokensIn = append(b.tokensIn, t.TokensIn)
	b.tokensOut = append(b.tokensOut, t.TokensOut)
	b.tokensCacheRead = append(b.tokensCacheRead, t.TokensCacheRead)
	b.tokensCacheWrite = append(b.tokensCacheWrite, t.TokensCacheWrite)
	b.reas = append(b.reas, t.TokensReasoning)
	b.cost = append(b.cost, t.CostUSD)
	b.costSource = append(b.costSource, t.costSource())
	b.status = append(b.status, t.Status)
	b.errText = append(b.errText, t.Error)
	b.start = append(b.start, t.StartNS)
	b.duration = append(b.duration, t.DurationNS)
	b.ttft = append(b.ttft, t.TTFTNS)
	b.heartbeat = append(b.heartbeat, t.HeartbeatNS)
	keys, values := splitAttrs(t.Attributes)
	b.attrKeys = append(b.attrKeys, keys)
	b.attrValues = append(b.attrValues, values)
	b.revision = append(b.revision, t.Revision)
}

// Len is the number of rows.
func (b *TurnBlock) Len() int { return len(b.project) }

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
