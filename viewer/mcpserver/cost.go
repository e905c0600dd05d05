package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/convtrace/convtrace/store"
)

// Bounds of cost.
const (
	maxCostRows       = 200
	defaultTopThreads = 10
	maxTopThreads     = 50
)

var costDoc = `Tokens and cost of the calls that started in a time range, as the viewer's cost page and ` +
	"`convtrace cost` report them: the totals, and the usage grouped by " + strings.Join(store.CostDimensions, ", ") +
	` (by, default model; several group by each combination), most expensive first (by day: oldest first), and the ` +
	`most expensive threads. from defaults to midnight UTC 30 days ago, to to now (RFC 3339, a date, or an age such ` +
	`as 7d). Costs are null when unknown; unpriced_calls counts calls whose model has no price. At most 200 rows and ` +
	`50 threads (threads, default 10).`

type costIn struct {
	From    string `json:"from,omitempty" jsonschema:"start of the range: RFC 3339, a date, or an age such as 7d (default 30 days ago, midnight UTC)"`
	To      string `json:"to,omitempty" jsonschema:"end of the range, like from (default now)"`
	Project string `json:"project,omitempty" jsonschema:"only this project"`
	By      words  `json:"by,omitempty" jsonschema:"the dimensions to group by: day, model, provider, phase, speaker, agent (default model)"`
	Threads *int   `json:"threads,omitempty" jsonschema:"how many of the most expensive threads: 1 to 50 (default 10)"`
}

type costOut struct {
	From    time.Time          `json:"from"`
	To      time.Time          `json:"to"`
	Project string             `json:"project,omitempty"`
	Totals  store.CostUsage    `json:"totals"`
	Table   store.CostTable    `json:"table"`
	Threads []store.CostThread `json:"threads"`
	// RowsLeftOut counts the table's rows past the first 200.
	RowsLeftOut int `json:"rows_left_out,omitempty"`
}

func (s *server) cost(ctx context.Context, in costIn) (costOut, error) {
	now := time.Now()
	f, err := store.ParseCostRange(in.From, in.To, now)
	if err != nil {
		return costOut{}, err
	}
	f.Project = in.Project
	by := in.By
	if len(by) == 0 {
		by = []string{"model"}
	}
	if _, err := store.GroupCost(nil, by); err != nil {
		return costOut{}, err
	}
	top, err := inRange("threads", in.Threads, defaultTopThreads, 1, maxTopThreads)
	if err != nil {
		return costOut{}, err
	}
	cells, threads, err := s.store.CostData(ctx, f, true, top, now)
	if err != nil {
		return costOut{}, err
	}
	store.AddSavings(cells, s.prices)
	out := costOut{From: time.Unix(0, int64(f.FromNS)).UTC(), To: time.Unix(0, int64(f.ToNS)).UTC(), Project: f.Project, Threads: threads}
	for _, c := range cells {
		out.Totals.Add(c.CostUsage)
	}
	if out.Table, err = store.GroupCost(cells, by); err != nil {
		return costOut{}, err
	}
	if n := len(out.Table.Rows); n > maxCostRows {
		out.Table.Rows, out.RowsLeftOut = out.Table.Rows[:maxCostRows], n-maxCostRows
	}
	if out.Threads == nil {
		out.Threads = []store.CostThread{}
	}
	return out, nil
}
