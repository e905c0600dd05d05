package viewer_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/instrument"
	"github.com/convtrace/convtrace/instrument/cliagent"
	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer"
)

// A Claude Code run that keeps turns of its own after its calls (here the
// answer of a Claude Code that sends no stream events, and the error of a
// run that exits 7) shows them after the calls and tool runs that came
// first, in the order the API gives, by phase and in the timeline.
func TestAgentRunOrderInBrowser(t *testing.T) {
	ctx := browserTab(t)
	conn, dsn := testkit.Open(t)
	tp, err := collector.NewTracerProvider(dsn, collector.WithProject("order"))
	if err != nil {
		t.Fatal(err)
	}
	rec := instrument.NewRecorder(instrument.WithTracerProvider(tp))
	// Without stream events no call tells its output tokens: the run keeps
	// the rest of its usage, and so its answer, on a response of its own.
	recorded, err := os.ReadFile("../instrument/cliagent/testdata/claude.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines []byte
	for _, line := range bytes.SplitAfter(recorded, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"type":"stream_event"`)) {
			lines = append(lines, line...)
		}
	}
	transcript := filepath.Join(t.TempDir(), "claude.jsonl")
	if err := os.WriteFile(transcript, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("../instrument/cliagent/testdata/agent.sh")
	for thread, exit := range map[string]string{"claude-answer": "0", "claude-failed": "7"} {
		cmd := exec.Command(script, "-p", "--output-format", "stream-json", "--verbose", "Why does TestParseConfig fail?")
		cmd.Env = append(os.Environ(), "FAKE_TRANSCRIPT="+transcript, "FAKE_EXIT="+exit)
		if _, err := cliagent.Command(instrument.WithThread(context.Background(), thread), cmd, instrument.Turn{Phase: "execute"},
			cliagent.WithRecorder(rec), cliagent.WithFormat(cliagent.FormatClaude)); err != nil && exit == "0" {
			t.Fatal(err)
		}
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatalf("flush the runs: %v", err)
	}
	h := viewer.New(conn, viewer.WithLogger(slog.New(slog.NewTextHandler(testWriter{t}, nil)))).Handler()
	base := serve(t, h)

	for thread, last := range map[string]string{"claude-answer": schema.RoleResponse, "claude-failed": schema.RoleError} {
		var api struct {
			Turns []struct {
				TurnID string `json:"turn_id"`
				Role   string `json:"role"`
				Op     string `json:"operation"`
			} `json:"turns"`
		}
		getJSON(t, h, "/api/threads/"+thread, http.StatusOK, &api)
		var want []string
		for _, turn := range api.Turns {
			want = append(want, turn.TurnID)
		}
		if n := len(api.Turns); n == 0 || api.Turns[n-1].Role != last || api.Turns[n-1].Op != schema.OperationInvokeAgent {
			t.Fatalf("%s: the API's last turn is not the run's %s, the fixture proves nothing: %+v", thread, last, api.Turns)
		}
		for _, view := range []string{"", "?view=timeline"} {
			if err := chromedp.Do(ctx, chromedp.Navigate(base+"/threads/"+thread+view), chromedp.WaitVisible(chromedp.CSS("article.call"))); err != nil {
				t.Fatal(err)
			}
			got := evalJS[[]string](ctx, t, `[...document.querySelectorAll("#calls [data-turn]")].map(e => e.dataset.turn)`)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s%s: the page shows the turns in the order\n%s\nwant the API's\n%s", thread, view, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if view != "" {
				cards := evalJS[[]float64](ctx, t, `[...document.querySelectorAll("#calls article.call")].map(a => Number(a.dataset.start))`)
				for i := 1; i < len(cards); i++ {
					if cards[i] < cards[i-1] {
						t.Errorf("%s: timeline cards not in start order: %v", thread, cards)
						break
					}
				}
				ids := evalJS[[]string](ctx, t, `[...document.querySelectorAll("[id]")].map(e => e.id)`)
				seen := map[string]bool{}
				for _, id := range ids {
					if seen[id] {
						t.Errorf("%s: two elements have the id %q", thread, id)
					}
					seen[id] = true
				}
			}
		}
		testkit.Screenshot(ctx, t, "agent-order-"+thread)
	}
}
