package viewer_test

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convtrace/convtrace/internal/testkit"
)

// The cost page of the demo data renders its charts and tables in a real
// browser, and every CSV link of the page downloads CSV that parses.
func TestCostPageInBrowser(t *testing.T) {
	ctx := browserTab(t)
	h, _, _ := demoServer(t)
	base := serve(t, h)
	// The demo ran moments ago: the default range (30 days) holds it.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/cost"), chromedp.WaitVisible(chromedp.CSS("svg.chart rect.bar"))); err != nil {
		t.Fatal(err)
	}
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.chart rect.bar").length`))
	if err != nil {
		t.Fatal(err)
	}
	// One bar per day and model with a cost, and one per day and model
	// with tokens, as the JSON twin counts them.
	var report struct {
		Days struct {
			Rows []struct {
				TokensIn  *uint64  `json:"tokens_in"`
				TokensOut *uint64  `json:"tokens_out"`
				CostUSD   *float64 `json:"cost_usd"`
			} `json:"rows"`
		} `json:"days"`
	}
	getJSON(t, h, "/api/cost", http.StatusOK, &report)
	wantBars := 0
	for _, r := range report.Days.Rows {
		if r.CostUSD != nil && *r.CostUSD > 0 {
			wantBars++
		}
		if r.TokensIn != nil && *r.TokensIn > 0 || r.TokensOut != nil && *r.TokensOut > 0 {
			wantBars++
		}
	}
	if bars != wantBars || bars == 0 {
		t.Errorf("the charts have %d bars, want %d (days by model: %d rows)", bars, wantBars, len(report.Days.Rows))
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]int](
		`Object.fromEntries([...document.querySelectorAll("table.cost")].map(t => [t.id, t.tBodies[0].rows.length]))`))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"cost-threads", "cost-model", "cost-provider", "cost-phase", "cost-speaker", "cost-agent", "cost-day"} {
		if rows[id] == 0 {
			t.Errorf("table #%s has no rows (tables: %v)", id, rows)
		}
	}
	total, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#cost-total")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(total, "$") {
		t.Errorf("total cost %q, want dollars: the demo's calls are priced or provided", total)
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("p.csv a")].map(a => a.getAttribute("href"))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 8 {
		t.Errorf("%d CSV links, want 8 (day and model, threads, six tables): %q", len(links), links)
	}
	for _, link := range links {
		res := get(t, h, link)
		records, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
		if res.status != http.StatusOK || err != nil || len(records) < 2 {
			u, _ := url.Parse(link)
			t.Errorf("CSV %s: status %d, %d records, parse error %v:\n%s", u.Query().Get("table"), res.status, len(records), err, res.body)
		}
	}
	// Picking a model in the legend fades the other models' bars.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".cost-chart .legend-item"))); err != nil {
		t.Fatal(err)
	}
	faded, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](
		`[document.querySelectorAll("rect.bar.faded").length, document.querySelectorAll("rect.bar:not(.faded)").length,
		  document.querySelectorAll("rect.bar.s0").length]`))
	if err != nil {
		t.Fatal(err)
	}
	// The first model's bars (series s0) stay, every other bar fades.
	if len(faded) != 3 || faded[0] == 0 || faded[1] != faded[2] || faded[0]+faded[1] != bars {
		t.Errorf("after picking the first model: %v faded, unfaded and first-model bars of %d; want the first model's unfaded, all others faded", faded, bars)
	}
	testkit.Screenshot(ctx, t, "cost")
	noSideScroll(ctx, t, base+"/cost", "cost-390")
}
