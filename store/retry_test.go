package store_test

import (
	"fmt"
	"testing"

	"github.com/convtrace/convtrace/store"
)

func TestRetried(t *testing.T) {
	ok := func(phase string, round uint16, speaker string, start uint64) store.CallOutcome {
		return store.CallOutcome{Phase: phase, Round: round, Speaker: speaker, StartNS: start, Ended: true}
	}
	failed := func(phase string, round uint16, speaker string, start uint64) store.CallOutcome {
		c := ok(phase, round, speaker, start)
		c.Failed = true
		return c
	}
	running := ok("plan", 0, "a", 20)
	running.Ended = false
	tool := ok("plan", 0, "a", 20)
	tool.Tool = "grep"
	tests := []struct {
		name  string
		calls []store.CallOutcome
		want  []bool
	}{
		{"retried later", []store.CallOutcome{failed("plan", 0, "a", 10), ok("Plan ", 0, "a", 20)}, []bool{true, false}},
		{"success before the failure", []store.CallOutcome{ok("plan", 0, "a", 5), failed("plan", 0, "a", 10)}, []bool{false, false}},
		{"another round", []store.CallOutcome{failed("plan", 0, "a", 10), ok("plan", 1, "a", 20)}, []bool{false, false}},
		{"another speaker", []store.CallOutcome{failed("plan", 0, "a", 10), ok("plan", 0, "b", 20)}, []bool{false, false}},
		{"retry still running", []store.CallOutcome{failed("plan", 0, "a", 10), running}, []bool{false, false}},
		{"a tool run is no retry of a call", []store.CallOutcome{failed("plan", 0, "a", 10), tool}, []bool{false, false}},
		{"two failures, then success", []store.CallOutcome{failed("plan", 0, "a", 10), failed("plan", 0, "a", 15), ok("plan", 0, "a", 20)}, []bool{true, true, false}},
	}
	for _, tt := range tests {
		if got := store.Retried(tt.calls); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: Retried(%+v) = %v, want %v", tt.name, tt.calls, got, tt.want)
		}
	}
}
