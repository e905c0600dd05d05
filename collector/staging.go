package collector

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

// A call's span and log records are staged in join_staging before the
// request is acknowledged; any instance writes the call from the stored
// records alone, under the same turn ids and sort key, and again, merged,
// when more arrive. Why that is exact: docs/design/staging.md.

// stagingKept is how long staged records are kept: a record arriving
// later than this after its call's first one can no longer be merged.
const stagingKept = 24 * time.Hour

// maxStagedSpan is the largest span staged: a larger one is mapped as it
// comes, so that a request of a few huge calls is not written and read
// back twice within the receiver's memory budget. Such a call does not fold
// with a nested span of itself nor inherit from an ancestor.
const maxStagedSpan = 1 << 20

// recordSpan is the record id of a call's span in join_staging.
const recordSpan = "span"

// recordWritten is the record id of the row that says turns were written.
const recordWritten = "written"

type joinKey = store.SpanKey

// otlpSpanRef and otlpLogRef locate an OTLP span or log record in its
// request, so that it can be staged as it came, with its resource and
// scope.
type (
	otlpSpanRef struct {
		rs *tracepb.ResourceSpans
		ss *tracepb.ScopeSpans
		ps *tracepb.Span
	}
	otlpLogRef struct {
		rl *logspb.ResourceLogs
		sl *logspb.ScopeLogs
		lr *logspb.LogRecord
	}
)

// stageSpans splits OTLP spans into those to map now and the staged rows
// of GenAI calls whose content may come as log records.
func stageSpans(spans []mapping.Span) (direct []mapping.Span, staged []schema.Staged) {
	for _, s := range spans {
		f := s.Origin.(otlpSpanRef)
		if !mapping.Staged(s) || proto.Size(f.ps) > maxStagedSpan {
			direct = append(direct, s)
			continue
		}
		one := &tracepb.ResourceSpans{Resource: f.rs.GetResource(), SchemaUrl: f.rs.GetSchemaUrl(),
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: f.ss.GetScope(), SchemaUrl: f.ss.GetSchemaUrl(), Spans: []*tracepb.Span{f.ps}}}}
		staged = append(staged, stagedRow(s.TraceID, s.SpanID, schema.StagedSpan, 0, one))
	}
	return direct, staged
}

// stageToolOutputs returns, for each Claude Code tool span with its
// output, the record that joins the output to the tool's result
// (mapping.ClaudeToolOutput), staged as a log record of its prompt.
func stageToolOutputs(spans []mapping.Span) []schema.Staged {
	var staged []schema.Staged
	for _, s := range spans {
		attrs, at, ok := mapping.ClaudeToolOutput(s)
		if !ok {
			continue
		}
		f := s.Origin.(otlpSpanRef)
		lr := &logspb.LogRecord{TimeUnixNano: at, TraceId: f.ps.GetTraceId(), SpanId: f.ps.GetSpanId(),
			Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: mapping.ClaudeToolOutputBody}}}
		for _, a := range attrs {
			lr.Attributes = append(lr.Attributes, &commonpb.KeyValue{Key: a.Key, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: a.Value}}})
		}
		rl := &logspb.ResourceLogs{Resource: f.rs.GetResource(), ScopeLogs: []*logspb.ScopeLogs{{Scope: f.ss.GetScope(), LogRecords: []*logspb.LogRecord{lr}}}}
		staged = append(staged, stageLogs(logsFromOTLP([]*logspb.ResourceLogs{rl}))...)
	}
	return staged
}

// stageLogs returns the staged rows of OTLP log records.
func stageLogs(logs []mapping.LogRecord) []schema.Staged {
	staged := make([]schema.Staged, 0, len(logs))
	for _, l := range logs {
		f := l.Origin.(otlpLogRef)
		one := &logspb.ResourceLogs{Resource: f.rl.GetResource(), SchemaUrl: f.rl.GetSchemaUrl(),
			ScopeLogs: []*logspb.ScopeLogs{{Scope: f.sl.GetScope(), SchemaUrl: f.sl.GetSchemaUrl(), LogRecords: []*logspb.LogRecord{f.lr}}}}
		traceID, spanID := l.TraceID, l.SpanID
		if name, _ := mapping.AgentEvent(l); name != "" {
			traceID, spanID, _ = mapping.AgentKey(l, name)
		}
		staged = append(staged, stagedRow(traceID, spanID, schema.StagedLog, l.Pos, one))
	}
	return staged
}

// stagedRow stores one record as a one-record OTLP request. A log record's
// id is a hash of that payload, so a record delivered twice is one record.
// The writer stamps its receive time as it stores it.
func stagedRow(traceID, spanID string, kind uint8, pos uint32, one proto.Message) schema.Staged {
	payload, err := proto.MarshalOptions{Deterministic: true}.Marshal(one)
	if err != nil {
		panic(fmt.Sprintf("marshal a decoded OTLP message: %v", err)) // it was just decoded from the wire
	}
	id := recordSpan
	if kind == schema.StagedLog {
		sum := sha256.Sum256(payload)
		id = hex.EncodeToString(sum[:16])
	}
	return schema.Staged{TraceID: traceID, SpanID: spanID, RecordID: id, Kind: kind, Pos: pos, Payload: payload}
}

func keysOf(rows []schema.Staged) []joinKey {
	seen := make(map[joinKey]bool, len(rows))
	var keys []joinKey
	for _, r := range rows {
		k := joinKey{TraceID: r.TraceID, SpanID: r.SpanID}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// stagedCall is what join_staging holds of one call.
type stagedCall struct {
	key      joinKey
	span     *mapping.Span
	spanRecv uint64 // when the span was stored
	logs     []mapping.LogRecord
	logsRecv []uint64 // when each log record was stored
	records  uint32   // distinct span, log and context records
	firstNS  uint64   // when its first record was stored
	merged   uint32   // records the last written turns merged; 0: none written
	// wroteTurns says turns were written under the call's span id once
	// (not only folded into another span's).
	wroteTurns bool
	// thread is the thread its turns were first written in, which later
	// writes keep: it is part of their sort key.
	thread string
}

// spanKeyed reports whether the turns take the span's sort key: whether
// the span was stored within the window of the call's first record. A
// record stored earlier than those seen so far may still become visible
// until a grace after it was stored, so before then the first record is
// taken to be as late as it can be; once the answer is yes it stays yes.
func (c *stagedCall) spanKeyed(now time.Time, window, grace time.Duration) bool {
	first := min(c.firstNS, uint64(now.Add(-grace).UnixNano()))
	return c.span != nil && c.spanRecv <= first+uint64(window)
}

// joined is the call's span with its records as events, or the span its
// records imply when the span has not arrived.
func (c *stagedCall) joined() mapping.Span {
	if c.span == nil {
		s := logsOnly(c.logs)
		s.TraceID, s.SpanID = c.key.TraceID, c.key.SpanID // an agent's records are joined under a key of their own
		return s
	}
	s := *c.span
	s.AttachLogs(c.logs)
	return s
}

// logsOnly is the span log records imply. Without an answer among them it
// is still running, so it yields its prompt only: the span may yet come and
// say the call failed, which makes an error turn, not a response.
func logsOnly(logs []mapping.LogRecord) mapping.Span {
	s := mapping.SpanFromLogs(logs)
	if _, out, ok := mapping.GenAIMessages(s); ok && out == 0 {
		s.Ended = false
	}
	return s
}

// sortKeys gives turns the sort key of the call: the span's when it keys
// the call, which the turns have, else, turn by turn in call order (seq),
// that of the span the log records stored within the window imply. Both
// are final by the time due lets a call be written.
func (c *stagedCall) sortKeys(turns []schema.Turn, now time.Time, window, grace time.Duration) {
	if c.spanKeyed(now, window, grace) || c.span == nil && mapping.AgentStream(c.joined()) {
		return // an agent's turns are keyed each by its own record
	}
	var early []mapping.LogRecord
	for i, l := range c.logs {
		if c.logsRecv[i] <= c.firstNS+uint64(window) {
			early = append(early, l)
		}
	}
	keys := mapping.Turns(mapping.SpanFromLogs(early))
	for i := range turns {
		for _, k := range keys {
			if k.Seq == turns[i].Seq {
				turns[i].Project, turns[i].ThreadID, turns[i].StartNS = k.Project, k.ThreadID, k.StartNS
			}
		}
	}
}

// written is the row saying that turns merging merged records were
// written, or, folded, that the call's records went into another span's
// turns.
func (c *stagedCall) written(merged uint32, folded bool) schema.Staged {
	w := schema.Staged{TraceID: c.key.TraceID, SpanID: c.key.SpanID, RecordID: recordWritten,
		Kind: schema.StagedWritten, Merged: merged}
	if folded {
		w.Pos = 1
	} else {
		w.Payload = []byte(c.thread)
	}
	return w
}

// add decodes a staged span or log record into the call.
func (c *stagedCall) add(kind uint8, pos uint32, received uint64, payload []byte) error {
	if kind == schema.StagedContext {
		return nil // it says an ancestor arrived: the tree holds it
	}
	if kind == schema.StagedSpan {
		var rs tracepb.ResourceSpans
		if err := proto.Unmarshal(payload, &rs); err != nil {
			return err
		}
		if spans := spansFromOTLP([]*tracepb.ResourceSpans{&rs}); len(spans) == 1 {
			c.span, c.spanRecv = &spans[0], received
		}
		return nil
	}
	var rl logspb.ResourceLogs
	if err := proto.Unmarshal(payload, &rl); err != nil {
		return err
	}
	for _, l := range logsFromOTLP([]*logspb.ResourceLogs{&rl}) {
		l.Pos = pos
		c.logs = append(c.logs, l)
		c.logsRecv = append(c.logsRecv, received)
	}
	return nil
}
