package collector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store/ddl"
	"github.com/convtrace/convtrace/store/topology"
)

// ErrNotStored means a request's rows did not reach storage; the sender
// should retry later.
var ErrNotStored = errors.New("not stored")

// Result is what an OTLP request's partial success reports: how many items
// were refused, and why.
type Result struct {
	Rejected int64
	Message  string
}

// IngestStats counts what an Ingester received and did with it.
type IngestStats struct {
	Stats         // the writer's rows
	SpansReceived int64
	LogsReceived  int64
	LogsRejected  int64 // log records that are not GenAI events of a span, nor an agent's
	LogsIgnored   int64 // an agent's housekeeping records (settings, plugins, streamed deltas), taken and not stored
	TurnsMapped   int64
	MapFailures   int64 // spans stored without turns because mapping failed
	Pending       int64 // in-progress copies of spans, not stored (mapping.Pending)
	Staged        int64 // halves of calls stored in join_staging to be joined
	Joined        int64 // calls whose turns were written from join_staging
	JoinFailures  int64 // attempts to join staged calls that failed; a sweep retries them
}

// Ingester stores OTLP traces and logs: every span as a spans row, the
// turns of GenAI calls as conversations rows, log records joined to their
// span. Traces and Logs return once what they received is stored: rows,
// or halves of calls in join_staging, which any Ingester on the same
// database completes (see staging.go).
type Ingester struct {
	w      *writer
	st     *stager
	health *health

	spansReceived, logsReceived, logsRejected atomic.Int64
	logsIgnored                               atomic.Int64
	turnsMapped, mapFailures, pendingDropped  atomic.Int64
	staged, joined, joinFailures              atomic.Int64

	stopOnce sync.Once
	stop     chan struct{}
	stopped  chan struct{} // the sweep loop ended
	probed   chan struct{} // the health probe ended
}

// NewIngester returns an ingester writing to the ClickHouse database named
// by dsn. It connects in the background and creates and migrates the
// database when needed.
func NewIngester(dsn string, opts ...IngesterOption) (*Ingester, error) {
	cfg, err := configure(opts, IngesterOption.applyIngester)
	if err != nil {
		return nil, err
	}
	if _, err := topology.Parse(dsn); err != nil {
		return nil, err
	}
	// A staged row is visible at most a write timeout after it is stamped;
	// a call completes at once only when that is within its join window
	// (staging.go), so no write may take longer than the window.
	cfg.writeTimeout = min(cfg.writeTimeout, cfg.joinWindow)
	in := &Ingester{
		w:       newWriter(dialDSN(dsn), cfg),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
		probed:  make(chan struct{}),
	}
	in.st = &stager{w: in.w, window: cfg.joinWindow, grace: cfg.writeTimeout, turns: in.turns,
		dial: func(ctx context.Context) (stagingConn, error) { return openAs[stagingConn](ctx, dsn) }}
	in.health = newHealth(func(ctx context.Context) (pinger, error) { return openAs[pinger](ctx, dsn) })
	go func() {
		defer close(in.probed)
		in.health.run(in.stop)
	}()
	go in.sweepLoop(min(max(cfg.joinWindow/10, 10*time.Millisecond), 5*time.Second), time.Minute)
	return in, nil
}

// Traces stores the spans of one OTLP request. Every span with valid ids
// gets a spans row, even one whose turns cannot be mapped; the result
// openAs opens dsn's database as a T: nil, not a nil *topology.Conn in an
// interface, when it fails.
func openAs[T any](ctx context.Context, dsn string) (T, error) {
	conn, err := ddl.Open(ctx, dsn)
	if err != nil {
		var none T
		return none, err
	}
	return any(conn).(T), nil
}

// refuses the others.
func (in *Ingester) Traces(ctx context.Context, rss []*tracepb.ResourceSpans) (Result, error) {
	spans := spansFromOTLP(rss)
	in.spansReceived.Add(int64(len(spans)))
	spans, res := validSpans(spans)
	spans = in.withoutPending(spans)
	it := item{spans: make([]schema.Span, 0, len(spans))}
	for _, s := range spans {
		it.addSpan(s)
	}
	direct, staged := stageSpans(spans)
	staged = append(staged, stageToolOutputs(spans)...)
	// Calls stored before an ancestor they inherit from are written again.
	// Missing that costs what they inherit, never a call: the request is
	// stored all the same.
	again, err := in.st.inheritors(ctx, spans)
	if err != nil {
		in.w.cfg.logger.Warn("convtrace: calls under arriving spans not found; they keep what they had", "err", err)
	}
	it.turns, it.staged = in.turns(direct), append(staged, again...)
	if err := in.w.writeWait(ctx, it); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrNotStored, err)
	}
	in.join(ctx, it.staged)
	return res, nil
}

// withoutPending drops in-progress copies of spans (mapping.Pending): the
// span they copy arrives whole when it ends, and stored they would be a
// second, empty call and a second bar in the waterfall.
func (in *Ingester) withoutPending(spans []mapping.Span) []mapping.Span {
	kept := spans[:0]
	for _, s := range spans {
		if mapping.Pending(s) {
			in.pendingDropped.Add(1)
			continue
		}
		kept = append(kept, s)
	}
	return kept
}

// Logs stores the GenAI events of one OTLP logs request with their spans.
// Records that are no GenAI event of a span are refused in the result.
func (in *Ingester) Logs(ctx context.Context, rls []*logspb.ResourceLogs) (Result, error) {
	logs := logsFromOTLP(rls)
	in.logsReceived.Add(int64(len(logs)))
	var res Result
	var badTimes int64
	var timeErr error
	kept := logs[:0]
	for _, l := range logs {
		// A record's time is a turn's: one convtrace does not store is
		// refused, as a span's is.
		if err := schema.CheckTime("log record time_unix_nano", l.TimeNS); err != nil {
			badTimes++
			timeErr = cmp.Or(timeErr, err)
			continue
		}
		if name, mapped := mapping.AgentEvent(l); name != "" {
			// An agent's own record: mapped, or its housekeeping, taken
			// and not stored.
			if _, _, keyed := mapping.AgentKey(l, name); mapped && keyed {
				kept = append(kept, l)
			} else {
				in.logsIgnored.Add(1)
			}
			continue
		}
		if l.TraceID != "" && l.SpanID != "" && strings.HasPrefix(l.EventName, "gen_ai.") {
			kept = append(kept, l)
			continue
		}
		res.Rejected++
	}
	staged := stageLogs(kept)
	var why []string
	if res.Rejected > 0 {
		why = append(why, fmt.Sprintf("%d log records refused: convtrace stores GenAI events (event name gen_ai.*) that carry a trace and span id, and the records of Claude Code and Codex", res.Rejected))
	}
	if badTimes > 0 {
		why = append(why, fmt.Sprintf("%d log records refused for their times, such as: %v", badTimes, timeErr))
	}
	res.Rejected += badTimes
	res.Message = strings.Join(why, "; ")
	in.logsRejected.Add(res.Rejected)
	if len(staged) == 0 {
		return res, nil
	}
	if err := in.w.writeWait(ctx, item{staged: staged}); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrNotStored, err)
	}
	in.join(ctx, staged)
	return res, nil
}

// join writes the turns of the calls a request staged that are complete
// now. The request is acknowledged whatever happens here: its records are
// stored, and a sweep completes them when this fails.
func (in *Ingester) join(ctx context.Context, staged []schema.Staged) {
	in.staged.Add(int64(len(staged)))
	if len(staged) == 0 {
		return
	}
	n, err := in.st.complete(ctx, keysOf(staged))
	in.joined.Add(int64(n))
	if err != nil {
		in.joinFailures.Add(1)
		in.w.cfg.logger.Warn("convtrace: staged calls not joined yet; a sweep retries", "err", err)
	}
}

// turns maps spans to turns. A span whose mapping panics on input no
// convention foresaw keeps its spans row and is counted.
func (in *Ingester) turns(spans []mapping.Span) []schema.Turn {
	var turns []schema.Turn
	for _, s := range spans {
		mapped, err := safeMapTurns(s)
		if err != nil {
			in.mapFailures.Add(1)
			in.w.cfg.logger.Warn("convtrace: span not mapped to turns", "trace_id", s.TraceID, "span_id", s.SpanID, "err", err)
			continue
		}
		turns = append(turns, mapped...)
	}
	in.turnsMapped.Add(int64(len(turns)))
	return turns
}

func safeMapTurns(s mapping.Span) (turns []schema.Turn, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("mapping panicked: %v", p)
		}
	}()
	return mapping.Turns(s), nil
}

// sweepLoop completes the staged calls whose join window ended, whichever
// instance staged them.
func (in *Ingester) sweepLoop(every, margin time.Duration) {
	defer close(in.stopped)
	defer in.st.close()
	tick := time.NewTicker(every)
	defer tick.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-in.stop
		cancel()
	}()
	for {
		select {
		case <-tick.C:
			n, err := in.st.sweep(ctx, 2*every, margin)
			in.joined.Add(int64(n))
			if err != nil && ctx.Err() == nil {
				in.joinFailures.Add(1)
				in.w.cfg.logger.Warn("convtrace: sweep of staged calls failed; the next one retries", "err", err)
			}
		case <-ctx.Done():
			return
		}
	}
}

// Ready reports whether the last probe of storage, at most 1.5 s ago,
// was answered.
func (in *Ingester) Ready(context.Context) error { return in.health.ready() }

// Stats reports the ingester's counters.
func (in *Ingester) Stats() IngestStats {
	return IngestStats{
		Stats:         in.w.stats(),
		SpansReceived: in.spansReceived.Load(),
		LogsReceived:  in.logsReceived.Load(),
		LogsRejected:  in.logsRejected.Load(),
		LogsIgnored:   in.logsIgnored.Load(),
		TurnsMapped:   in.turnsMapped.Load(),
		MapFailures:   in.mapFailures.Load(),
		Pending:       in.pendingDropped.Load(),
		Staged:        in.staged.Load(),
		Joined:        in.joined.Load(),
		JoinFailures:  in.joinFailures.Load(),
	}
}

// Shutdown writes what is queued, then stops. Staged calls stay staged:
// the next Ingester on the database completes them. It is safe to call
// more than once.
func (in *Ingester) Shutdown(ctx context.Context) error {
	in.stopOnce.Do(func() {
		close(in.stop)
		<-in.stopped
		<-in.probed
	})
	return in.w.shutdown(ctx)
}
