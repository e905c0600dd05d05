package store

import "strings"

// CallOutcome is what the retry rule reads of one call of a thread.
type CallOutcome struct {
	Phase   string // compared as the thread page groups phases: any case, no surrounding space
	Round   uint16
	Speaker string
	Agent   string
	Tool    string // "" for a provider call; a tool run's tool
	StartNS uint64
	// Failed says the call ended in error; Ended that it ended at all (not
	// running, not interrupted).
	Failed, Ended bool
}

// Retried says, for each call, whether it is a failure that was retried: a
// failed call followed, in the same thread, phase, round, speaker, agent
// and tool (none for a provider call), by a call that started later and
// ended without failing. Such a failure is the run recovering, not the run
// failing: the thread page says "retried" for it, not "failed".
func Retried(calls []CallOutcome) []bool {
	type key struct {
		phase                string
		round                uint16
		speaker, agent, tool string
	}
	keyOf := func(c CallOutcome) key {
		return key{strings.ToLower(strings.TrimSpace(c.Phase)), c.Round, c.Speaker, c.Agent, c.Tool}
	}
	// The latest start of a call of each key that ended well.
	lastOK := map[key]uint64{}
	for _, c := range calls {
		if c.Ended && !c.Failed {
			k := keyOf(c)
			lastOK[k] = max(lastOK[k], c.StartNS)
		}
	}
	retried := make([]bool, len(calls))
	for i, c := range calls {
		if !c.Failed {
			continue
		}
		ok, found := lastOK[keyOf(c)]
		retried[i] = found && ok > c.StartNS
	}
	return retried
}
