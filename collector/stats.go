package collector

// Stats counts what a writer did with the rows handed to it. Every row is
// written, waiting (queued or buffered), in the spool, refused or lost.
type Stats struct {
	Queued        int64  // rows waiting in the queue now
	QueuedBytes   int64  // their approximate size in memory
	Buffered      int64  // rows kept in memory while storage fails, to be retried
	BufferedBytes int64  // their approximate size in memory
	Spooled       int64  // rows written to the disk spool (WithSpool) to wait for replay
	SetAsideBytes int64  // spool bytes moved to its damaged folder: damaged records, and records storage refused for good
	Written       int64  // rows stored, replayed ones included
	Refused       int64  // rows handed back to a caller that waits and retries: queue full or storage failed
	Lost          int64  // rows no one retries and nothing keeps: past the queue or buffer without a spool, refused by storage for good, or after Shutdown
	LastError     string // the last storage error, kept after recovery

	// ValuesSanitised counts costs and token counts stored as unknown
	// because they were negative, NaN, infinite or too large.
	ValuesSanitised int64

	// ResumeFailuresUnrecognised counts the resumed agent runs that failed
	// with no message a matcher knows (cliagent.CodeResumeFailedUnrecognised).
	ResumeFailuresUnrecognised int64

	// Redactions counts the secrets replaced by a marker before storage,
	// by kind (every kind listed); nil when redaction is off.
	Redactions map[string]int64
}

func (w *writer) stats() Stats {
	s := Stats{
		Queued: w.queued.Load(), QueuedBytes: w.queuedBytes.Load(),
		Buffered: w.buffered.Load(), BufferedBytes: w.bufferedBytes.Load(),
		Spooled: w.spooled.Load(), SetAsideBytes: w.buf.spool.setAsideBytes(), Written: w.written.Load(),
		Refused: w.refused.Load(), Lost: w.lost.Load(),
		ValuesSanitised: w.sanitised.Load(), ResumeFailuresUnrecognised: w.resumeUnknown.Load(),
		Redactions: w.redact.stats(),
	}
	if e := w.lastErr.Load(); e != nil {
		s.LastError = *e
	}
	return s
}

// reject counts an item's rows refused when its caller waits (and will
// retry), else lost.
func (w *writer) reject(it item, n int64, err error) {
	if it.stored != nil {
		w.refused.Add(n)
	} else {
		w.lose(int(n), err)
	}
}

// lose counts rows no one will retry, and warns at most every 10 s with how
// many were lost since the last warning, instead of once per batch.
func (w *writer) lose(n int, err error) {
	if n == 0 {
		return
	}
	w.lost.Add(int64(n))
	w.unreported.Add(int64(n))
	w.lossLog.Do(func() { w.reportLoss(err) })
}

func (w *writer) reportLoss(err error) {
	if n := w.unreported.Swap(0); n > 0 {
		w.cfg.logger.Warn("convtrace: rows lost", "rows", n, "lost_total", w.lost.Load(), "err", err)
	}
}
