package viewer

import (
	"fmt"
	"math"

	"github.com/convtrace/convtrace/store"
)

// chart is a stacked bar chart of one value per day and model, drawn as SVG
// on the server so it reads without JavaScript. Colours are cost.css classes
// (m0…m7: the Content-Security-Policy forbids inline style) and repeat, so
// each model also has a series class (s0, s1, …) that cost.js picks out.
type chart struct {
	Title         string
	Width, Height float64
	PlotTop       float64
	PlotLeft      float64
	Baseline      float64
	Max           string // the value at the top of the plot
	Bars          []chartBar
	Labels        []chartLabel
	Legend        []chartLegend
}

type chartBar struct {
	X, Y, W, H    float64
	Class, Series string // colour and series classes
	Title         string // the tooltip: day, model, value
}

type chartLabel struct {
	X    float64
	Text string
}

type chartLegend struct {
	Class, Series, Model string
}

const (
	chartWidth   = 820.0
	chartHeight  = 240.0
	chartLeft    = 80.0
	chartTop     = 12.0
	chartBottom  = 28.0
	chartClasses = 8
)

// newChart stacks value per model for each day of days (a table by day and
// model, oldest day first). Both charts of a page read the same rows, so a
// model keeps its colour across them.
func newChart(days store.CostTable, title string, value func(store.CostUsage) float64, label func(float64) string) chart {
	c := chart{Title: title, Width: chartWidth, Height: chartHeight, PlotTop: chartTop, PlotLeft: chartLeft,
		Baseline: chartHeight - chartBottom}
	var order []string
	totals := map[string]float64{}
	legend := map[string]chartLegend{}
	for _, r := range days.Rows {
		day, model := r.Key[0], r.Key[1]
		if _, ok := totals[day]; !ok {
			order = append(order, day)
		}
		totals[day] += value(r.CostUsage)
		if _, ok := legend[model]; !ok {
			name := model
			if name == "" {
				name = "(no model)"
			}
			n := len(c.Legend)
			legend[model] = chartLegend{Class: fmt.Sprintf("m%d", n%chartClasses), Series: fmt.Sprintf("s%d", n), Model: name}
			c.Legend = append(c.Legend, legend[model])
		}
	}
	top := 0.0
	for _, t := range totals {
		top = math.Max(top, t)
	}
	c.Max = label(top)
	if len(order) == 0 || top == 0 {
		return c
	}
	slot := (chartWidth - chartLeft) / float64(len(order))
	width := math.Min(48, math.Max(1, slot*0.7))
	height := c.Baseline - chartTop
	x := map[string]float64{}
	stacked := map[string]float64{}
	every := int(math.Ceil(float64(len(order)) / 12)) // at most 12 day labels
	for i, day := range order {
		x[day] = chartLeft + float64(i)*slot + (slot-width)/2
		if i%every == 0 {
			c.Labels = append(c.Labels, chartLabel{X: x[day] + width/2, Text: day[5:]})
		}
	}
	for _, r := range days.Rows {
		day, model := r.Key[0], r.Key[1]
		v := value(r.CostUsage)
		if v <= 0 {
			continue
		}
		h := v / top * height
		stacked[day] += h
		c.Bars = append(c.Bars, chartBar{X: x[day], Y: c.Baseline - stacked[day], W: width, H: h,
			Class: legend[model].Class, Series: legend[model].Series, Title: day + " " + model + ": " + label(v)})
	}
	return c
}
