package collector

import (
	"hash/fnv"
	"strconv"

	"github.com/convtrace/convtrace/schema"
)

// pending is the batch being gathered.
type pending struct {
	waited    rows // of items that wait for storage: told the result, never kept
	kept      rows // of items nobody waits for: kept for a retry when not stored
	journaled rows // of items nobody waits for in the spool: replayed from there when not stored
	segs      []*segment
	early     []earlyPrompt
	ids       map[string]uint64 // promptKey of the batch's early prompts
	acks      []ack
}

// earlyPrompt is a prompt row stored early: its turn id and promptKey.
type earlyPrompt struct {
	id  string
	key uint64
}

// ack is an item waiting for storage, and the inserts holding its rows.
type ack struct {
	stored               chan error
	staged, turns, spans bool
}

// reset empties the batch, keeping its memory for the next one.
func (p *pending) reset() {
	p.waited.reset()
	p.kept.reset()
	p.journaled.reset()
	clear(p.segs)
	p.segs = p.segs[:0]
	p.early = p.early[:0]
	clear(p.ids)
	clear(p.acks)
	p.acks = p.acks[:0]
}

func (p *pending) size() int { return p.waited.len() + p.kept.len() + p.journaled.len() }

func (p *pending) empty() bool { return p.size()+len(p.acks) == 0 }

// add puts an item's rows into the batch, leaving out a prompt row stored
// (or about to be stored) early while its call ran, unless what its call
// says of it changed since (promptKey).
func (w *writer) add(p *pending, it item) {
	if p.ids == nil {
		p.ids = make(map[string]uint64)
	}
	dst := &p.kept
	switch {
	case it.stored != nil:
		dst = &p.waited
	case it.seg != nil:
		dst = &p.journaled
		p.segs = append(p.segs, it.seg)
	}
	a := ack{stored: it.stored, spans: len(it.spans) > 0, staged: len(it.staged) > 0}
	for _, t := range it.turns {
		if it.early {
			k := promptKey(t)
			p.early = append(p.early, earlyPrompt{t.TurnID, k})
			p.ids[t.TurnID] = k
		} else if k, ok := w.early[t.TurnID]; ok {
			delete(w.early, t.TurnID)
			if k == promptKey(t) {
				continue // stored early as it is
			}
		} else if k, ok := p.ids[t.TurnID]; ok && k == promptKey(t) {
			a.turns = true // stored by this batch's early row
			continue
		}
		// A prompt whose call learnt more while it ran (its session,
		// its model) is stored again, over its early row.
		dst.Turns = append(dst.Turns, t)
		a.turns = true
	}
	dst.Spans = append(dst.Spans, it.spans...)
	dst.Staged = append(dst.Staged, it.staged...)
	if it.stored != nil {
		p.acks = append(p.acks, a)
	}
}

// send writes the batch, after what the buffer keeps so that rows are
// stored in order, and starts a new one. Each waiting item is told the
// errors of the inserts that held its rows; rows nobody waits for are kept
// when their insert failed, or left to the replay of the spool segments
// that journaled them. Nothing is returned to the pipeline.
func (w *writer) send(p *pending) {
	defer p.reset()
	if p.empty() {
		return
	}
	var res result
	if err := w.retry(); err != nil {
		res = failing(err)
	} else {
		res = w.store(p.waited, p.kept, p.journaled)
	}
	for _, a := range p.acks {
		a.stored <- res.of(a)
	}
	if res.turns != nil {
		w.refused.Add(int64(len(p.waited.Turns)))
	} else {
		for _, e := range p.early {
			w.early[e.id] = e.key
		}
	}
	if res.spans != nil {
		w.refused.Add(int64(len(p.waited.Spans)))
	}
	if res.staged != nil {
		w.refused.Add(int64(len(p.waited.Staged)))
	}
	if failed := p.kept.failed(res); failed.len() > 0 {
		w.keep(failed)
		p.kept = rows{} // the buffer holds them now
	}
	if len(p.segs) > 0 {
		if failed := p.journaled.failed(res); failed.len() > 0 {
			w.buf.spool.drop(p.segs)
			w.spooled.Add(int64(failed.len()))
		} else {
			w.buf.spool.stored(p.segs)
		}
	}
}

// promptKey sums up what a prompt row says that its call may learn while
// it runs (its session, model, thread and speakers, attributes), content
// and heartbeat aside: a prompt stored early is stored again at the end
// when its key changed.
func promptKey(t schema.Turn) uint64 {
	h := fnv.New64a()
	for _, f := range []string{t.Project, t.ThreadID, t.SessionID, t.Provider, t.Model, t.Phase, t.Speaker, t.Agent,
		t.Operation, t.ParentTurnID, t.Status, strconv.Itoa(int(t.Round))} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	for _, a := range t.Attributes {
		h.Write([]byte(a.Key))
		h.Write([]byte{0})
		h.Write([]byte(a.Value))
		h.Write([]byte{0})
	}
	return h.Sum64()
}
