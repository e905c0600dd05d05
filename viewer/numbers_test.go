package viewer_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// Costs whose float sum is noisy (0.1 + 0.2 = 0.30000000000000004) read
// as their value in every JSON and CSV answer: the report, its CSVs, a
// thread's phase totals, the threads list and the trace.
func TestCostsRoundedInEveryAnswer(t *testing.T) {
	h, conn := costServer(t)
	p1, r1 := call("th-n", "s1", "plan", 0, "planner", "openai", "gpt-5", 0, "a", "b")
	p2, r2 := call("th-n", "s2", "plan", 0, "planner", "openai", "gpt-5", 10, "c", "d")
	testkit.InsertTurns(t, conn, p1, usage(r1, 10, 10, 0, f64(0.1), schema.CostProvided),
		p2, usage(r2, 10, 10, 0, f64(0.2), schema.CostProvided))
	paths := []string{costPath("/api/cost", ""), "/api/threads", "/api/threads/th-n/cost", "/api/traces/trace-th-n"}
	for _, table := range []string{"model", "phase", "day_model", "threads"} {
		paths = append(paths, costPath("/api/cost/csv", "&table="+table))
	}
	for _, path := range paths {
		res := get(t, h, path)
		if res.status != http.StatusOK {
			t.Errorf("GET %s: status %d\n%s", path, res.status, res.body)
			continue
		}
		if strings.Contains(res.body, "0.30000000000000004") || !strings.Contains(res.body, "0.3") {
			t.Errorf("GET %s: want the cost 0.3, no float noise:\n%s", path, res.body)
		}
	}
}
