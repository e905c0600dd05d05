package viewer

import (
	"context"
	"time"
)

// KeepSummarized brings the cost summaries of every past day current at
// once and then every interval until ctx ends: serve runs it, so that the
// cost report and the cost_cells view (the README's cost SQL) read
// summaries instead of turns, whoever asks first. A failure is logged when
// it starts and when it ends, not at every attempt.
func (s *Server) KeepSummarized(ctx context.Context, every time.Duration) {
	failing := false
	for {
		err := s.store.SummarizeCost(ctx, time.Now())
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !failing:
			s.log.Warn("convtrace: cost summaries not brought current; retrying", "err", err)
		case err == nil && failing:
			s.log.Info("convtrace: cost summaries current again")
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}
