package viewer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/viewer"
)

// latencyFixture adds to the demo's calls some of a model of their own:
// streamed calls with a time to first token, one stored three times, one
// failed and one whose CLI agent reported an error along the way.
func latencyFixture(at time.Time) []schema.Turn {
	var turns []schema.Turn
	for i, c := range []struct {
		duration, ttft time.Duration
		role           string
		copies         int
	}{
		{1200 * time.Millisecond, 300 * time.Millisecond, schema.RoleResponse, 1},
		{2500 * time.Millisecond, 0, schema.RoleResponse, 3},
		{800 * time.Millisecond, 120 * time.Millisecond, schema.RoleError, 1},
		{4 * time.Second, 900 * time.Millisecond, schema.RoleResponse, 2},
		{3100 * time.Millisecond, 0, "mid-error", 1},
	} {
		span := fmt.Sprintf("lat%013d", i)
		base := schema.Turn{TraceID: "latency-trace", SpanID: span, Project: "demo", ThreadID: "latency-thread",
			Phase: "stream", Speaker: "streamer", Provider: "openai", Model: "latency-model", Status: schema.StatusOK,
			Operation: schema.OperationChat}
		end := uint64(at.Add(time.Duration(i) * time.Minute).UnixNano())
		prompt := base
		prompt.TurnID, prompt.Role, prompt.StartNS = schema.PromptTurnID(span), schema.RolePrompt, end-uint64(c.duration)
		turns = append(turns, prompt)
		answer := base
		answer.Role, answer.Seq, answer.CostSource = schema.RoleResponse, 1, schema.CostNone
		answer.StartNS, answer.DurationNS, answer.TTFTNS = end, uint64(c.duration), uint64(c.ttft)
		switch c.role {
		case schema.RoleError:
			answer.Role, answer.Status, answer.Error = schema.RoleError, schema.StatusError, "overloaded"
		case "mid-error":
			e := base
			e.TurnID, e.Role, e.Seq, e.Status, e.StartNS = schema.TurnID(span, schema.RoleError, 1), schema.RoleError, 1, schema.StatusError, end-1
			e.Content = "warning: tool crashed"
			turns = append(turns, e)
			answer.Seq = 2
		}
		answer.TurnID = schema.TurnID(span, answer.Role, answer.Seq)
		for n := range c.copies {
			copy := answer
			copy.Revision = uint64(n)
			turns = append(turns, copy)
		}
	}
	return turns
}

// latencySQL is what the latency page must show, asked of ClickHouse
// directly: per dimension value (and "all"), every call once (FINAL), its
// figures as quantileExact gives them.
const latencySQL = `
SELECT %[1]s AS key, count(), sum(failed), quantileExact(0.5)(dur), quantileExact(0.95)(dur), quantileExact(0.99)(dur),
       countIf(ttft > 0), quantileExactIf(0.5)(ttft, ttft > 0), quantileExactIf(0.95)(ttft, ttft > 0), quantileExactIf(0.99)(ttft, ttft > 0)
FROM
(
    SELECT span_id, anyIf(model, cost_source != '') AS model, anyIf(provider, cost_source != '') AS provider,
           anyIf(phase, cost_source != '') AS phase, anyIf(speaker, cost_source != '') AS speaker,
           maxIf(duration_ns, cost_source != '') AS dur, max(ttft_ns) AS ttft,
           max(role = 'error' OR status = 'error') AS failed
    FROM conversations FINAL
    WHERE start_ns >= ? AND start_ns < ?
    GROUP BY span_id
    HAVING countIf(cost_source != '') > 0
)
GROUP BY key`

// The latency page over the demo data and calls of a streamed model shows,
// for every call and by model, provider, phase and speaker, the figures
// ClickHouse gives when asked directly, and fits a 390 px screen.
func TestLatencyPageInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, conn, _ := demoServer(t)
	now := time.Now().UTC()
	testkit.InsertTurns(t, conn, latencyFixture(now.Add(-time.Hour))...)
	from, to := now.Add(-24*time.Hour), now.Add(time.Hour)
	q := url.Values{"from": {from.Format(time.RFC3339Nano)}, "to": {to.Format(time.RFC3339Nano)}}
	base := serve(t, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/latency?"+q.Encode()), chromedp.WaitVisible(chromedp.CSS("#latency-all"))); err != nil {
		t.Fatal(err)
	}

	// Every figure of the page, keyed "table/key/field", as text and as
	// its exact value in nanoseconds where it is a duration.
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`(() => {
		const out = {};
		const put = (prefix, el) => {
			out[prefix + el.dataset.field] = el.textContent.trim();
			if (el.dataset.ns !== undefined) out[prefix + el.dataset.field + "_ns"] = el.dataset.ns;
		};
		document.querySelectorAll("#latency-all [data-field]").forEach(el => put("all//", el));
		document.querySelectorAll("table.latency").forEach(table => {
			table.querySelectorAll("tbody tr").forEach(tr => {
				tr.querySelectorAll("[data-field]").forEach(el => put(table.id.replace("latency-", "") + "/" + tr.dataset.key + "/", el));
			});
		});
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]string{}
	for _, dim := range []string{"''", "model", "provider", "phase", "speaker"} {
		table := strings.Trim(dim, "'")
		if table == "" {
			table = "all"
		}
		rows, err := conn.Query(context.Background(), fmt.Sprintf(latencySQL, dim), uint64(from.UnixNano()), uint64(to.UnixNano()))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var (
				key                  string
				calls, failed, withT uint64
				d50, d95, d99        uint64
				t50, t95, t99        uint64
			)
			if err := rows.Scan(&key, &calls, &failed, &d50, &d95, &d99, &withT, &t50, &t95, &t99); err != nil {
				t.Fatal(err)
			}
			p := table + "/" + key + "/"
			want[p+"calls"], want[p+"failed"] = fmt.Sprint(calls), fmt.Sprint(failed)
			want[p+"error_rate"] = fmt.Sprintf("%.1f%%", 100*float64(failed)/float64(calls))
			levels := map[string][2]uint64{"duration_p50": {d50}, "duration_p95": {d95}, "duration_p99": {d99}}
			if withT > 0 {
				levels["ttft_p50"], levels["ttft_p95"], levels["ttft_p99"] = [2]uint64{t50}, [2]uint64{t95}, [2]uint64{t99}
			}
			for field, v := range levels {
				want[p+field+"_ns"] = fmt.Sprint(v[0])
				want[p+field] = viewer.LatencyText(v[0])
			}
			if table != "all" {
				want[p+"ttft_calls"] = fmt.Sprint(withT)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	for k, v := range want {
		if shown[k] != v {
			t.Errorf("%s: page shows %q, ClickHouse says %q", k, shown[k], v)
		}
	}
	for k, v := range shown {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: page shows %q, which ClickHouse does not", k, v)
		}
	}
	// The fixture's model is there, with its failures and its copies
	// counted once.
	if shown["model/latency-model/calls"] != "5" || shown["model/latency-model/failed"] != "2" || shown["model/latency-model/ttft_calls"] != "3" {
		t.Errorf("latency-model: calls %q failed %q with TTFT %q, want 5, 2, 3", shown["model/latency-model/calls"],
			shown["model/latency-model/failed"], shown["model/latency-model/ttft_calls"])
	}

	// The JSON twin says the same, and a bad parameter is a 400 naming it.
	var report struct {
		All struct {
			Calls uint64 `json:"calls"`
		} `json:"all"`
		Tables []struct {
			By string `json:"by"`
		} `json:"tables"`
	}
	getJSON(t, h, "/api/latency?group_by=model&"+q.Encode(), http.StatusOK, &report)
	if fmt.Sprint(report.All.Calls) != want["all//calls"] || len(report.Tables) != 1 || report.Tables[0].By != "model" {
		t.Errorf("/api/latency?group_by=model: %+v, want %s calls and one table by model", report, want["all//calls"])
	}
	var bad struct{ Error string }
	if getJSON(t, h, "/api/latency?group_by=day", http.StatusBadRequest, &bad); !strings.HasPrefix(bad.Error, "group_by: ") {
		t.Errorf("group_by=day: error %q, want one naming group_by", bad.Error)
	}
	if res := get(t, h, "/latency?from=yesterday"); res.status != http.StatusBadRequest || !strings.Contains(res.body, "from") {
		t.Errorf("/latency?from=yesterday: %d, want 400 naming from", res.status)
	}
	testkit.Screenshot(ctx, t, "latency")

	// At 390 px the page does not scroll sideways: its tables scroll in
	// their own box.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/latency?"+q.Encode()),
		chromedp.WaitVisible(chromedp.CSS("#latency-all"))); err != nil {
		t.Fatal(err)
	}
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if width > 390 {
		t.Errorf("at 390 px the page is %d px wide", width)
	}
	testkit.Screenshot(ctx, t, "latency-390")
}
