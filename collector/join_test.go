package collector

import (
	"testing"
	"time"

	"github.com/convtrace/convtrace/schema"
)

// chatSpan is a GenAI call span whose content comes as log records.
func chatSpan(spanID string) span {
	return span{
		traceID: "t1", spanID: spanID, name: "chat gpt-5", ended: true, startNS: 1000, endNS: 2000,
		attrs: attrs{list: []schema.Attr{
			{Key: schema.KeyOperationName, Value: "chat"},
			{Key: schema.KeyProviderName, Value: "openai"},
			{Key: schema.KeyRequestModel, Value: "gpt-5"},
		}},
	}
}

func userLog(spanID, content string) logRecord {
	return logRecord{traceID: "t1", spanID: spanID, timeNS: 1100, eventName: "gen_ai.user.message", body: `{"content":"` + content + `"}`}
}

func ids(spans []span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.spanID)
	}
	return out
}

func TestJoinerPairsEitherOrder(t *testing.T) {
	now := time.Unix(100, 0)
	j := newJoiner(30*time.Second, 100)
	if !needsLogs(chatSpan("a")) {
		t.Fatal("a chat span without content should wait for its log records")
	}

	// Span first, then its log records.
	if ready := j.addSpans(now, []span{chatSpan("a")}); len(ready) != 0 {
		t.Fatalf("span without content released at once: %v", ids(ready))
	}
	ready := j.addLogs(now.Add(2*time.Second), []logRecord{userLog("a", "hello")})
	if len(ready) != 1 || ready[0].spanID != "a" || len(ready[0].events) != 1 {
		t.Fatalf("logs after span: got %+v", ready)
	}

	// Log records first, then their span.
	if ready := j.addLogs(now, []logRecord{userLog("b", "hi"), userLog("b", "again")}); len(ready) != 0 {
		t.Fatalf("logs without their span released at once: %v", ids(ready))
	}
	ready = j.addSpans(now.Add(time.Second), []span{chatSpan("b")})
	if len(ready) != 1 || len(ready[0].events) != 2 {
		t.Fatalf("span after logs: got %+v", ready)
	}

	// A span with content of its own waits for nothing.
	withContent := chatSpan("c")
	withContent.attrs.list = append(withContent.attrs.list, schema.Attr{Key: "gen_ai.input.messages", Value: `[{"role":"user","parts":[{"type":"text","content":"x"}]}]`})
	if ready := j.addSpans(now, []span{withContent}); len(ready) != 1 {
		t.Errorf("span with content held: %v", ids(ready))
	}
	if n := j.held(); n != 0 {
		t.Errorf("%d entries still held after every pair met", n)
	}
}

func TestJoinerExpiresWithWhatIsKnown(t *testing.T) {
	now := time.Unix(100, 0)
	j := newJoiner(30*time.Second, 100)
	j.addSpans(now, []span{chatSpan("lonely-span")})
	j.addLogs(now.Add(10*time.Second), []logRecord{userLog("lonely-logs", "anyone?")})

	if ready := j.expire(now.Add(29 * time.Second)); len(ready) != 0 {
		t.Fatalf("released before the window ended: %v", ids(ready))
	}
	ready := j.expire(now.Add(30 * time.Second))
	if len(ready) != 1 || ready[0].spanID != "lonely-span" {
		t.Fatalf("at 30 s want the span alone, got %v", ids(ready))
	}
	ready = j.expire(now.Add(40 * time.Second))
	if len(ready) != 1 || ready[0].spanID != "lonely-logs" || !ready[0].ended || len(ready[0].events) != 1 {
		t.Fatalf("at 40 s want a span built from the logs, got %+v", ready)
	}
	turns := mapTurns(ready[0])
	if len(turns) == 0 || turns[0].Role != schema.RolePrompt || turns[0].TurnID != schema.PromptTurnID("lonely-logs") {
		t.Errorf("turns of logs whose span never came: %+v", turns)
	}
}

func TestJoinerCapacity(t *testing.T) {
	now := time.Unix(100, 0)
	j := newJoiner(time.Hour, 10)
	var released []span
	for i := range 25 {
		released = append(released, j.addSpans(now.Add(time.Duration(i)*time.Second), []span{chatSpan(string(rune('a' + i)))})...)
	}
	if held := j.held(); held > 10 {
		t.Errorf("%d held, capacity 10", held)
	}
	if len(released)+j.held() != 25 {
		t.Errorf("released %d and held %d of 25: some were lost", len(released), j.held())
	}
	// Span ids grow with their arrival time: every released one must be
	// older than every held one.
	for _, r := range released {
		for k := range j.spans {
			if r.spanID > k.spanID {
				t.Errorf("released %s while the older %s is held: over capacity the oldest go first", r.spanID, k.spanID)
			}
		}
	}
	if rest := j.drain(); len(rest)+len(released) != 25 || j.held() != 0 {
		t.Errorf("drain released %d, %d still held", len(rest), j.held())
	}
}
