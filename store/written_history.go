package store

import (
	"iter"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// History remembers the history messages a writer stored, so that each is
// stored once (schema.StoreHistoryOnce), in two bounded generations; one
// forgotten is stored again and folded (docs/design/removal.md, "store.History").
// It is not safe for concurrent use; the zero value is empty.
type History struct {
	newer, older map[string]struct{}
	since        time.Time // when newer started
}

const (
	historySize = 1 << 16
	historyAge  = time.Hour
)

func historyKey(m *schema.StoredMessage) string { return m.ThreadID + "\x00" + m.ID }

func (c *History) has(key string) bool {
	_, inNewer := c.newer[key]
	_, inOlder := c.older[key]
	return inNewer || inOlder
}

// add remembers messages that are stored.
func (c *History) add(msgs []schema.StoredMessage) {
	now := time.Now()
	for i := range msgs {
		if len(c.newer) >= historySize || now.Sub(c.since) > historyAge {
			c.older, c.newer = c.newer, nil
		}
		if c.newer == nil {
			c.newer, c.since = make(map[string]struct{}, historySize), now
		}
		c.newer[historyKey(&msgs[i])] = struct{}{}
	}
}

// split returns the rows to store for sets of turns: a split copy of each
// prompt that repeats history, by the turn it replaces, and the messages
// of that history not stored yet, each once. The turns themselves are not
// changed, so that rows kept after a failed insert are split again when
// they are retried.
func (c *History) split(sets [][]schema.Turn) (map[*schema.Turn]*schema.Turn, []schema.StoredMessage) {
	var (
		splits map[*schema.Turn]*schema.Turn
		msgs   []schema.StoredMessage
		batch  map[string]bool
	)
	for _, set := range sets {
		for i := range set {
			t := &set[i]
			if t.Role != schema.RolePrompt {
				continue
			}
			s := *t // stays on the stack unless split
			earlier := schema.StoreHistoryOnce(&s)
			if earlier == nil {
				continue
			}
			if splits == nil {
				splits, batch = map[*schema.Turn]*schema.Turn{}, map[string]bool{}
			}
			split := s
			splits[t] = &split
			for j := range earlier {
				key := historyKey(&earlier[j])
				if !batch[key] && !c.has(key) {
					batch[key] = true
					msgs = append(msgs, earlier[j])
				}
			}
		}
	}
	return splits, msgs
}

// withSplits is every turn of sets, in order, each split copy in place of
// the turn it replaces.
func withSplits(sets [][]schema.Turn, splits map[*schema.Turn]*schema.Turn) iter.Seq[*schema.Turn] {
	return func(yield func(*schema.Turn) bool) {
		for t := range each(sets) {
			if s, ok := splits[t]; ok {
				t = s
			}
			if !yield(t) {
				return
			}
		}
	}
}
