package collector

import (
	"os"
	"slices"
)

// journal writes r, the rows of an item nobody waits for, then hands put
// the item's segment to queue it, under the lock, so that the queue keeps
// the order of the segments. When put refuses it, the rows wait for replay
// and journal says they were spooled; when the spool cannot write them,
// put gets no segment: the rows are kept in memory only.
func (s *spool) journal(r rows, put func(*segment) error) (spooled bool, err error) {
	recs, err := encodeRecords(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, errShutDown
	}
	var seg *segment
	if err == nil {
		seg, err = s.write(recs)
	}
	if err != nil {
		s.warn.Do(func() { s.logger.Warn("convtrace: rows not journaled, kept in memory only", "err", err) })
		return false, put(nil)
	}
	seg.inFlight++
	if put(seg) != nil {
		s.release(seg)
		return true, nil
	}
	return false, nil
}

// stored says the writer stored the journaled rows of segs (a segment per
// item): a segment all of whose rows are stored is removed.
func (s *spool) stored(segs []*segment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, seg := range segs {
		if seg.inFlight--; seg.inFlight > 0 || seg.released.Load() {
			continue
		}
		_ = os.Remove(seg.name)
		s.forget(seg)
	}
}

// drop says the writer dropped its copy of the journaled rows of segs,
// which then wait for replay.
func (s *spool) drop(segs []*segment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, seg := range segs {
		s.release(seg)
	}
}

// release leaves seg's rows to replay (mu held). A full segment is closed
// at once, so that it can be replayed; the one appended to when nothing
// else waits (openNext).
func (s *spool) release(seg *segment) {
	seg.released.Store(true)
	s.maybe.Store(true)
	if seg != s.out {
		s.forget(seg)
	}
}

// forget closes seg, which this process then appends to no more (mu held).
func (s *spool) forget(seg *segment) {
	if seg == s.out {
		s.out = nil
	} else if i := slices.Index(s.held, seg); i >= 0 {
		s.held = slices.Delete(s.held, i, i+1)
	} else {
		return // closed already
	}
	seg.f.Close()
}
