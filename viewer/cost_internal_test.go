package viewer

import (
	"strings"
	"testing"
)

// The threadCost partial, which the thread page includes, renders a
// thread's phase totals with — for what is unknown.
func TestThreadCostPartial(t *testing.T) {
	in, out, cost := uint64(1200), uint64(300), 0.0425
	totals := []PhaseTotal{
		{Phase: "plan", CostUsage: CostUsage{Calls: 2, TokensIn: &in, TokensOut: &out, CostUSD: &cost}},
		{Phase: "execute", CostUsage: CostUsage{Calls: 1, Unpriced: 1}},
	}
	body, err := parsePages().render("threadCost", totals)
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
	if empty, err := parsePages().render("threadCost", []PhaseTotal{}); err != nil || strings.TrimSpace(string(empty)) != "" {
		t.Errorf("threadCost of no totals = %q, %v; want nothing", empty, err)
	}
}
