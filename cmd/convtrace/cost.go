package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/convtrace/convtrace/collector"
	"github.com/convtrace/convtrace/viewer"
)

func costCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	since := fs.String("since", "7d", "start of the range: an age (24h, 7d) or a time (2026-05-01, RFC 3339)")
	until := fs.String("until", "", "end of the range, like --since (default now)")
	by := fs.String("by", "model", "comma-separated groups: "+strings.Join(viewer.CostDimensions, ", "))
	project := fs.String("project", "", "only this project (default all)")
	format := fs.String("format", "table", "output format: table, csv or json")
	prices := fs.String("prices", "", "price file (YAML or JSON) over the built-in table, for the cache savings")
	return func(ctx context.Context, out streams, _ []string) error {
		write, ok := costWriters[*format]
		if !ok {
			return fmt.Errorf("--format: %q is not table, csv or json", *format)
		}
		f, err := viewer.ParseCostRange(*since, *until, time.Now())
		if err != nil {
			return flagError(err, map[string]string{"from": "--since", "to": "--until"})
		}
		f.Project = *project
		dims := strings.Split(*by, ",")
		for i := range dims {
			dims[i] = strings.TrimSpace(dims[i])
		}
		if _, err := viewer.GroupCost(nil, dims); err != nil {
			return flagError(err, map[string]string{"by": "--by"})
		}
		p, err := loadPrices(*prices)
		if err != nil {
			return err
		}
		st, err := sf.open(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		cells, err := viewer.QueryCost(ctx, st.conn, f, p)
		if err != nil {
			return err
		}
		t, err := viewer.GroupCost(cells, dims)
		if err != nil {
			return err
		}
		var total viewer.CostUsage
		for _, r := range t.Rows {
			total.Add(r.CostUsage)
		}
		return write(out.stdout, t, total)
	}
}

// loadPrices returns the built-in price table, with the file at path over
// it when path is set.
func loadPrices(path string) (collector.Prices, error) {
	if path == "" {
		return collector.DefaultPrices(), nil
	}
	return collector.LoadPrices(path, collector.DefaultPrices())
}

// flagError names the command-line flag of a viewer parameter error.
func flagError(err error, flags map[string]string) error {
	msg := err.Error()
	for param, flag := range flags {
		if rest, ok := strings.CutPrefix(msg, param+":"); ok {
			return fmt.Errorf("%s:%s", flag, rest)
		}
	}
	return err
}

var costWriters = map[string]func(io.Writer, viewer.CostTable, viewer.CostUsage) error{
	"table": writeCostTable,
	"csv":   func(w io.Writer, t viewer.CostTable, _ viewer.CostUsage) error { return viewer.WriteCostCSV(w, t) },
	"json": func(w io.Writer, t viewer.CostTable, total viewer.CostUsage) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			viewer.CostTable
			Totals viewer.CostUsage `json:"totals"`
		}{t, total})
	},
}

// writeCostTable prints the table aligned, numbers right-aligned, with a
// total line; unknown values are —.
func writeCostTable(w io.Writer, t viewer.CostTable, total viewer.CostUsage) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := append(upper(t.By), "CALLS", "TOKENS IN", "TOKENS OUT", "CACHE READ", "CACHE WRITE", "COST USD", "UNPRICED", "CACHE SAVED")
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	line := func(key []string, u viewer.CostUsage) {
		rec := u.Record() // calls, in, out, read, write, reasoning, cost, unpriced, savings
		cells := append(key, rec[0], count(rec[1]), count(rec[2]), count(rec[3]), count(rec[4]), usd(rec[6]), rec[7], usd(rec[8]))
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	for _, r := range t.Rows {
		key := make([]string, len(r.Key))
		for i, k := range r.Key {
			key[i] = k
			if k == "" {
				key[i] = "(none)"
			}
		}
		line(key, r.CostUsage)
	}
	totalKey := make([]string, len(t.By))
	if len(totalKey) > 0 {
		totalKey[0] = "TOTAL"
	}
	line(totalKey, total)
	return tw.Flush()
}

func upper(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToUpper(s)
	}
	return out
}

// count and usd format a field of CostUsage.Record for the table.
func count(field string) string {
	n, err := strconv.ParseUint(field, 10, 64)
	if err != nil {
		return "—"
	}
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func usd(field string) string {
	f, err := strconv.ParseFloat(field, 64)
	if err != nil {
		return "—"
	}
	return strconv.FormatFloat(f, 'f', 4, 64)
}
