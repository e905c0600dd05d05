package mcpserver

import (
	"time"

	"github.com/convtrace/convtrace/store"
)

// threadOut is a thread as the tools answer it, its times as RFC 3339 with
// nanoseconds: a nanosecond count is past 2^53, and a JSON reader that holds
// numbers as float64 (JavaScript, most MCP clients) rounds it.
type threadOut struct {
	store.Thread
	// FirstTime is when the thread's first turn started; LastUpdate (the
	// thread's) when its last one did.
	FirstTime time.Time `json:"first_time"`
	// LastNS and FirstNS hide the thread's nanosecond counts.
	LastNS  *struct{} `json:"last_ns,omitempty"`
	FirstNS *struct{} `json:"first_ns,omitempty"`
}

func newThreadOut(t store.Thread) threadOut {
	return threadOut{Thread: t, FirstTime: time.Unix(0, int64(t.FirstNS)).UTC()}
}

func newThreadOuts(ts []store.Thread) []threadOut {
	out := make([]threadOut, len(ts))
	for i, t := range ts {
		out[i] = newThreadOut(t)
	}
	return out
}
