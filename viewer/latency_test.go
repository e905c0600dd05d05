package viewer_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/viewer"
)

// The README's latency query gives, per model, the calls, error rate and
// p50 / p95 of duration and time to first token that /api/latency gives
// over the same 7 days.
func TestLatencyReadmeQuery(t *testing.T) {
	h, conn := newServer(t)
	testkit.InsertTurns(t, conn, latencyFixture(time.Now().Add(-time.Hour))...)
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile("(?s)\n## Latency and errors\n.*?\n## ").FindString(string(readme))
	block := regexp.MustCompile("(?s)```sql\n(.*?)```").FindStringSubmatch(section)
	if block == nil {
		t.Fatal("README has no SQL block in its Latency and errors section")
	}
	rows, err := conn.Query(context.Background(), strings.ReplaceAll(strings.TrimSuffix(strings.TrimSpace(block[1]), ";"), "convtrace.", ""))
	if err != nil {
		t.Fatalf("the README's query: %v", err)
	}
	defer rows.Close()
	var fromSQL []string
	for rows.Next() {
		var (
			model          string
			calls          uint64
			rate           float64
			duration, ttft []uint64
		)
		if err := rows.Scan(&model, &calls, &rate, &duration, &ttft); err != nil {
			t.Fatal(err)
		}
		fromSQL = append(fromSQL, fmt.Sprintf("%s calls=%d rate=%.3f duration=%v ttft=%v", model, calls, rate, duration, ttft))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	var report struct {
		Tables []struct {
			Rows []struct {
				Key       string  `json:"key"`
				Calls     uint64  `json:"calls"`
				ErrorRate float64 `json:"error_rate"`
				Duration  struct {
					P50 uint64 `json:"p50_ns"`
					P95 uint64 `json:"p95_ns"`
				} `json:"duration"`
				TTFT *struct {
					P50 uint64 `json:"p50_ns"`
					P95 uint64 `json:"p95_ns"`
				} `json:"ttft"`
			} `json:"rows"`
		} `json:"tables"`
	}
	getJSON(t, h, "/api/latency?group_by=model", http.StatusOK, &report)
	var fromAPI []string
	for _, r := range report.Tables[0].Rows {
		ttft := []uint64{0, 0} // quantilesExactIf of no value
		if r.TTFT != nil {
			ttft = []uint64{r.TTFT.P50, r.TTFT.P95}
		}
		fromAPI = append(fromAPI, fmt.Sprintf("%s calls=%d rate=%.3f duration=%v ttft=%v", r.Key, r.Calls, r.ErrorRate,
			[]uint64{r.Duration.P50, r.Duration.P95}, ttft))
	}
	if len(fromSQL) == 0 || strings.Join(fromSQL, "\n") != strings.Join(fromAPI, "\n") {
		t.Errorf("the README's query:\n%s\n/api/latency by model:\n%s", strings.Join(fromSQL, "\n"), strings.Join(fromAPI, "\n"))
	}
}

// A call's time to first token reaches the thread's turns API, on the
// turn that ends the call.
func TestTurnsAPICarriesTTFT(t *testing.T) {
	h, conn := newServer(t)
	testkit.InsertTurns(t, conn, latencyFixture(time.Now().Add(-time.Hour))...)
	var page struct {
		Turns []struct {
			TurnID string `json:"turn_id"`
			Role   string `json:"role"`
			TTFTNS uint64 `json:"ttft_ns"`
		} `json:"turns"`
	}
	body := getJSON(t, h, "/api/threads/latency-thread/turns", http.StatusOK, &page)
	got := map[string]uint64{}
	for _, tr := range page.Turns {
		got[tr.TurnID] = tr.TTFTNS
	}
	want := map[string]uint64{
		"lat0000000000000:prompt:0": 0, "lat0000000000000:response:1": uint64(300 * time.Millisecond),
		"lat0000000000002:error:1": uint64(120 * time.Millisecond), "lat0000000000001:response:1": 0,
	}
	for id, w := range want {
		if g, ok := got[id]; !ok || g != w {
			t.Errorf("turn %s: ttft_ns %d (present %v), want %d; body:\n%.1500s", id, g, ok, w, body)
		}
	}
}

// A call's time to first token reaches its span on the trace: the API,
// the waterfall's tick and the detail pane, and its card on the thread
// page.
func TestTraceCarriesTTFT(t *testing.T) {
	h, conn := newServer(t)
	testkit.InsertTurns(t, conn, latencyFixture(time.Now().Add(-time.Hour))...)
	var tr viewer.Trace
	getJSON(t, h, "/api/traces/latency-trace", http.StatusOK, &tr)
	got := map[string]uint64{}
	for _, sp := range tr.Spans {
		got[sp.SpanID] = sp.TTFTNS
	}
	want := map[string]uint64{"lat0000000000000": uint64(300 * time.Millisecond), "lat0000000000001": 0, "lat0000000000003": uint64(900 * time.Millisecond)}
	for span, w := range want {
		if got[span] != w {
			t.Errorf("span %s: ttft_ns %d, want %d", span, got[span], w)
		}
	}
	page := get(t, h, "/traces/latency-trace").body
	if n := strings.Count(page, `<line class="wf-ttft"`); n != 3 || !strings.Contains(page, "first token after 300ms") {
		t.Errorf("the waterfall draws %d first-token ticks, want 3 (one of 300ms)", n)
	}
	if card := callCard(t, get(t, h, "/threads/latency-thread").body, "lat0000000000000:response:1"); !strings.Contains(card, `<span class="ttft" title="time to first token">first token 300ms</span>`) {
		t.Errorf("the call's card lacks its time to first token:\n%s", card)
	}
	if pane := get(t, h, "/traces/latency-trace/spans/lat0000000000000/detail").body; !strings.Contains(pane, `<dd class="detail-ttft">300ms</dd>`) {
		t.Errorf("the detail pane lacks the time to first token:\n%.3000s", pane)
	}
}
