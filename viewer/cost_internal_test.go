package viewer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/convtrace/convtrace/store"
)

// The threadCost partial, which the thread page includes, renders a
// thread's phase totals with — for what is unknown.
func TestThreadCostPartial(t *testing.T) {
	in, out, cost := uint64(1200), uint64(300), 0.0425
	totals := []store.PhaseTotal{
		{Phase: "plan", CostUsage: store.CostUsage{Calls: 2, TokensIn: &in, TokensOut: &out, CostUSD: &cost}},
		{Phase: "execute", CostUsage: store.CostUsage{Calls: 1, Unpriced: 1}},
	}
	body, err := parsePages(false).render("threadCost", totals)
	if err != nil {
		t.Fatal(err)
	}
	html := strings.Join(strings.Fields(string(body)), " ")
	for _, want := range []string{
		`<td>plan</td><td class="num">2</td> <td class="num">1,200</td><td class="num">300</td><td class="num">—</td> <td class="num">$0.0425</td>`,
		`<td>execute</td><td class="num">1</td> <td class="num">—</td><td class="num">—</td><td class="num">—</td> <td class="num">— <span class="unpriced" title="calls without a price">+1 unpriced</span></td>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("threadCost partial lacks\n%s\nin\n%s", want, html)
		}
	}
	if empty, err := parsePages(false).render("threadCost", []store.PhaseTotal{}); err != nil || strings.TrimSpace(string(empty)) != "" {
		t.Errorf("threadCost of no totals = %q, %v; want nothing", empty, err)
	}
}

// Colours repeat every eight models, series never: picking the ninth model
// out must not pick the first.
func TestChartSeries(t *testing.T) {
	days := store.CostTable{By: []string{"day", "model"}}
	for i := range 9 {
		cost := float64(i + 1)
		days.Rows = append(days.Rows, store.CostGroup{Key: []string{"2026-05-01", fmt.Sprintf("model-%d", i)}, CostUsage: store.CostUsage{Calls: 1, CostUSD: &cost}})
	}
	c := newChart(days, "cost", func(u store.CostUsage) float64 { return store.Deref(u.CostUSD) }, formatUSD)
	var legend, bars []string
	for _, l := range c.Legend {
		legend = append(legend, l.Model+" "+l.Class+" "+l.Series)
	}
	for _, b := range c.Bars {
		bars = append(bars, b.Class+" "+b.Series)
	}
	wantLegend := "[model-0 m0 s0 model-1 m1 s1 model-2 m2 s2 model-3 m3 s3 model-4 m4 s4 model-5 m5 s5 model-6 m6 s6 model-7 m7 s7 model-8 m0 s8]"
	wantBars := "[m0 s0 m1 s1 m2 s2 m3 s3 m4 s4 m5 s5 m6 s6 m7 s7 m0 s8]"
	if fmt.Sprint(legend) != wantLegend || fmt.Sprint(bars) != wantBars {
		t.Errorf("chart of 9 models:\nlegend %v\n  bars %v\nwant legend %s\n  bars %s", legend, bars, wantLegend, wantBars)
	}
}

// A cache hit rate is never above 100%, on rows stored before input
// counted the cache too (the Claude Code run: input 35, cache read
// 13,700, cache write 4,430 read as 39,142.9%).
func TestHitRateNeverAbove100(t *testing.T) {
	u := func(n uint64) *uint64 { return &n }
	for _, tt := range []struct {
		usage store.CostUsage
		want  string
	}{
		{store.CostUsage{TokensIn: u(35), CacheRead: u(13_700), CacheWrite: u(4_430)}, "75.6%"},
		{store.CostUsage{TokensIn: u(18_165), CacheRead: u(13_700), CacheWrite: u(4_430)}, "75.4%"},
		{store.CostUsage{TokensIn: u(100), CacheRead: u(400)}, "100.0%"},
		{store.CostUsage{TokensIn: u(1_100), CacheRead: u(1_000)}, "90.9%"},
		{store.CostUsage{TokensIn: u(0), CacheRead: u(0)}, "—"},
	} {
		if got := tt.usage.HitRate(); got != tt.want {
			t.Errorf("HitRate(in %d, read %d) = %s, want %s", *tt.usage.TokensIn, *tt.usage.CacheRead, got, tt.want)
		}
	}
}
