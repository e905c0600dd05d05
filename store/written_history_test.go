package store

import (
	"strings"
	"testing"

	"github.com/convtrace/convtrace/schema"
)

// The cache forgets a message within two generations' time, however few
// messages arrive: one removed from storage (convtrace delete, prune,
// archive) is stored again by a later prompt that repeats it.
func TestHistoryCacheForgetsWithAge(t *testing.T) {
	var c History
	m := []schema.StoredMessage{{ThreadID: "t", ID: "a"}}
	c.add(m)
	key := historyKey(&m[0])
	if !c.has(key) {
		t.Fatal("a message just added is not known")
	}
	for gen := 1; gen <= 2; gen++ {
		c.since = c.since.Add(-2 * historyAge) // the newer generation grew old
		c.add([]schema.StoredMessage{{ThreadID: "t", ID: strings.Repeat("b", gen)}})
		if known := c.has(key); known != (gen == 1) {
			t.Errorf("after %d generations grew old: known %v, want %v", gen, known, gen == 1)
		}
	}
}
