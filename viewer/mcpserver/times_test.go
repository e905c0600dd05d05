package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/schema/genai"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every time in an answer keeps its nanoseconds: RFC 3339 with them, and
// no number a float64 reader would round (a nanosecond count is past 2^53).
func TestAnswersKeepNanoseconds(t *testing.T) {
	start := time.Now().Add(-time.Hour).Truncate(time.Second).Add(123456789)
	cs := connect(t, exchange("th-ns", "s1", start, []genai.Message{user("needle")}, "answer")...)
	first, last := start.UTC().Format(time.RFC3339Nano), start.Add(time.Second).UTC().Format(time.RFC3339Nano)
	cases := []struct {
		tool  string
		args  map[string]any
		times []string // each in the answer as a string
	}{
		{"list_threads", map[string]any{}, []string{first, last}},
		{"get_thread", map[string]any{"thread_id": "th-ns"}, []string{first, last}},
		{"search", map[string]any{"q": "needle"}, []string{first}},
		{"recent_context", map[string]any{"thread_id": "th-ns"}, []string{first, last}},
	}
	for _, c := range cases {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", c.tool, err, res)
		}
		body := res.Content[0].(*mcp.TextContent).Text
		for _, want := range c.times {
			if !strings.Contains(body, `"`+want+`"`) {
				t.Errorf("%s: no time %s in the answer:\n%s", c.tool, want, body)
			}
		}
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		for _, n := range bigNumbers(v, "") {
			t.Errorf("%s: %s, a number a float64 reader rounds", c.tool, n)
		}
	}
}

// bigNumbers lists the numbers of v past 2^53, with their paths.
func bigNumbers(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out = append(out, bigNumbers(e, path+"."+k)...)
		}
	case []any:
		for i, e := range x {
			out = append(out, bigNumbers(e, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case float64:
		if math.Abs(x) > 1<<53 {
			out = append(out, fmt.Sprintf("%s = %.0f", path, x))
		}
	}
	return out
}
