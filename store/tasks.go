package store

import (
	"context"
	"maps"
)

// ThreadIDs returns the id of every thread f selects, newest first, page
// after page: what a task's export and its turns are read by.
func (s Store) ThreadIDs(ctx context.Context, f ThreadFilter) ([]string, error) {
	f.Attrs = maps.Clone(f.Attrs)
	f.Before, f.After = nil, nil
	f.Limit = max(s.ThreadLimit, 1)
	var ids []string
	for {
		page, err := s.Threads(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, th := range page.Threads {
			ids = append(ids, th.ID)
		}
		if page.Older == nil || len(page.Threads) == 0 {
			return ids, nil
		}
		f.Before = page.Older
	}
}
