package collector

import (
	"context"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/convtrace/convtrace/collector/mapping"
	"github.com/convtrace/convtrace/schema"
)

// PendingProcessor stores the prompt of a provider call still running
// after a delay, and again every heartbeat, so the viewer shows a live call
// and a dead process's call keeps its prompt. Register it before the
// exporter's processor (docs/design/writer.md, "Early prompts").
type PendingProcessor struct {
	w         *writer
	after     time.Duration
	heartbeat time.Duration

	mu      sync.Mutex
	running map[trace.SpanID]*pendingCall

	stopOnce sync.Once
	stop     chan struct{}
	stopped  chan struct{}
}

// pendingCall is a call being tracked and when its prompt was last stored
// (zero: not yet).
type pendingCall struct {
	span   sdktrace.ReadOnlySpan
	stored time.Time
}

var _ sdktrace.SpanProcessor = (*PendingProcessor)(nil)

// NewPendingProcessor returns a processor that stores early prompts through
// e.
func NewPendingProcessor(e *Exporter, opts ...PendingOption) (*PendingProcessor, error) {
	cfg, err := configure(opts, PendingOption.applyPending)
	if err != nil {
		return nil, err
	}
	return newPendingProcessor(e, cfg), nil
}

func newPendingProcessor(e *Exporter, cfg config) *PendingProcessor {
	p := &PendingProcessor{
		w:         e.w,
		after:     cfg.pendingAfter,
		heartbeat: cfg.heartbeat,
		running:   make(map[trace.SpanID]*pendingCall),
		stop:      make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	go p.run()
	return p
}

// OnStart tracks provider calls and tool executions (spans that carry
// gen_ai.operation.name when they start).
func (p *PendingProcessor) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	for _, a := range s.Attributes() {
		if string(a.Key) == schema.KeyOperationName {
			p.mu.Lock()
			p.running[s.SpanContext().SpanID()] = &pendingCall{span: s}
			p.mu.Unlock()
			return
		}
	}
}

// OnEnd stops tracking s.
func (p *PendingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	p.mu.Lock()
	delete(p.running, s.SpanContext().SpanID())
	p.mu.Unlock()
}

// ForceFlush stores the prompts and heartbeats of calls due now and waits
// until the writer has stored everything queued so far, so the tracer
// provider's ForceFlush flushes storage too (the SDK's synchronous
// processor has nothing of its own to flush).
func (p *PendingProcessor) ForceFlush(ctx context.Context) error {
	p.storeDue(time.Now())
	return p.w.flush(ctx)
}

// Shutdown stops the processor's goroutine. It is safe to call more than
// once.
func (p *PendingProcessor) Shutdown(ctx context.Context) error {
	p.stopOnce.Do(func() { close(p.stop) })
	select {
	case <-p.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *PendingProcessor) run() {
	defer close(p.stopped)
	tick := time.NewTicker(max(min(p.after, p.heartbeat)/10, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case now := <-tick.C:
			p.storeDue(now)
		case <-p.stop:
			return
		}
	}
}

// storeDue queues the prompt of every call running longer than the delay,
// and again of every call whose prompt was stored a heartbeat ago. It holds
// the lock while queueing, so a call that ends meanwhile has its final rows
// queued after its last prompt row.
func (p *PendingProcessor) storeDue(now time.Time) {
	now = now.Round(0) // wall clock, as heartbeats are stamped and compared
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, c := range p.running {
		due := c.span.StartTime().Add(p.after)
		if !c.stored.IsZero() {
			due = c.stored.Add(p.heartbeat)
		}
		if now.Before(due) {
			continue
		}
		s := mapping.FromSDK(c.span)
		s.Ended = false // only the prompt, even if End is under way
		turns := mapping.Turns(s)
		if len(turns) == 0 {
			delete(p.running, id)
			continue
		}
		for i := range turns {
			turns[i].HeartbeatNS = uint64(now.UnixNano())
		}
		p.w.write(item{turns: turns, early: true})
		c.stored = now
	}
}
