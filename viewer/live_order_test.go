package viewer_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
)

// The live tail of an agent run that ends while its page is open puts
// the run's answer after the calls that made it, as a page loaded then
// does: the run's own calls come with it, so its card splits around them.
func TestLiveTailKeepsAnAgentsAnswerLast(t *testing.T) {
	h, conn := newServer(t)
	turn := func(span, parent, role string, seq uint16, start int, content string) schema.Turn {
		return schema.Turn{TurnID: schema.TurnID(span, role, seq), TraceID: "tr", SpanID: span, ParentSpanID: parent,
			Project: "p", ThreadID: "th", Role: role, Seq: seq, StartNS: at(start), Content: content,
			Operation: schema.OperationChat, Provider: "anthropic", Status: schema.StatusOK}
	}
	run := turn("run", "", schema.RolePrompt, 0, 1, "fix the test")
	run.Operation = "invoke_agent"
	answer := turn("run", "", schema.RoleResponse, 3, 9, "fixed")
	answer.Operation = "invoke_agent"
	testkit.InsertTurns(t, conn, run,
		turn("c1", "run", schema.RolePrompt, 0, 2, "fix the test"), turn("c1", "run", schema.RoleResponse, 1, 3, "looking"),
		turn("c2", "run", schema.RolePrompt, 0, 4, "and then"), turn("c2", "run", schema.RoleResponse, 1, 5, "done"),
		answer)
	// The page saw everything up to c2's answer, with the run running.
	var live struct {
		Cards []struct {
			ID string `json:"id"`
		} `json:"cards"`
	}
	getJSON(t, h, fmt.Sprintf("/threads/th/live?after=%d&running=run", at(5)), http.StatusOK, &live)
	var ids []string
	for _, c := range live.Cards {
		ids = append(ids, c.ID)
	}
	if fmt.Sprint(ids) != "[call-run call-c1 call-c2 call-run-2]" {
		t.Errorf("the live tail's cards %v, want the run, its two calls, then the run's answer", ids)
	}
}
