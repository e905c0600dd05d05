package viewer

import "strconv"

// traceView is what the trace page renders: the trace, each span's bar
// geometry, the time axis, the phases' colours, and the selected span's
// detail.
type traceView struct {
	Trace
	Rows   []spanBar
	Ticks  []axisTick
	Phases []phaseLegend
	Detail *SpanDetail
}

// spanBar places a span on the waterfall. X and Width are percentages of
// the trace's duration, written for SVG attributes (the CSP forbids inline
// style); TTFTX is where the first token came, "" when unknown; Indent is
// a CSS class, capped at maxIndent levels.
type spanBar struct {
	TraceSpan
	X, Width, TTFTX string
	Indent          int
	PhaseClass      string
	DetailURL       string
}

// axisTick is a label of the time axis at X percent of the trace.
type axisTick struct {
	X, Label, Anchor string
}

// maxIndent is the deepest indent trace.css defines (.depth-0 … .depth-12);
// deeper spans share it, their order still showing the nesting.
const maxIndent = 12

// minBarPercent keeps an instant span visible as a sliver.
const minBarPercent = 0.3

func newTraceView(t Trace) traceView {
	v := traceView{Trace: t}
	total := float64(t.DurationNS)
	pct := func(ns uint64) float64 {
		if total == 0 {
			return 0
		}
		return float64(ns) / total * 100
	}
	for _, sp := range t.Spans {
		x := pct(sp.StartNS - t.StartNS)
		w := max(pct(sp.DurationNS), minBarPercent)
		if total == 0 {
			w = 100
		}
		w = min(w, 100-x)
		if w < minBarPercent { // a sliver at the very end
			x, w = 100-minBarPercent, minBarPercent
		}
		bar := spanBar{TraceSpan: sp, X: percent(x), Width: percent(w), Indent: min(sp.Depth, maxIndent),
			PhaseClass: phaseClass(sp.Phase), DetailURL: detailURL(t.TraceID, sp.SpanID)}
		if sp.TTFTNS > 0 && sp.TTFTNS <= sp.DurationNS && total > 0 {
			bar.TTFTX = percent(min(pct(sp.StartNS-t.StartNS+sp.TTFTNS), 100))
		}
		v.Rows = append(v.Rows, bar)
	}
	v.Phases = phaseLegends(t.Spans)
	for _, ns := range axisSteps(t.DurationNS) {
		tick := axisTick{X: percent(pct(ns)), Label: formatOffset(ns), Anchor: "middle"}
		switch ns {
		case 0:
			tick.Anchor = "start"
		case t.DurationNS:
			tick.Anchor = "end"
		}
		v.Ticks = append(v.Ticks, tick)
	}
	return v
}

func percent(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + "%" }

// axisSteps returns the offsets the time axis labels: 0, then multiples of
// a round step (1, 2 or 5 times a power of ten nanoseconds) giving at most
// six labels, then the end unless a label sits close to it.
func axisSteps(total uint64) []uint64 {
	steps := []uint64{0}
	if total == 0 {
		return steps
	}
	step := uint64(1)
	for total/step > 5 {
		switch s := step; {
		case total/(s*2) <= 5:
			step = s * 2
		case total/(s*5) <= 5:
			step = s * 5
		default:
			step = s * 10
		}
	}
	for ns := step; ns < total; ns += step {
		if total-ns < step/2 { // too close to the end label
			break
		}
		steps = append(steps, ns)
	}
	return append(steps, total)
}

// formatOffset writes an offset from the trace's start; 0 is "0".
func formatOffset(ns uint64) string {
	if ns == 0 {
		return "0"
	}
	return formatDuration(ns)
}
