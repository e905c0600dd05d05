package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

func costCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	since := fs.String("since", "7d", "start of the range: an age (24h, 7d) or a time (2026-05-01, RFC 3339)")
	until := fs.String("until", "", "end of the range, like --since (default now)")
	by := fs.String("by", "model", "comma-separated groups: "+strings.Join(store.CostDimensions, ", "))
	project := fs.String("project", "", "only this project (default all)")
	format := fs.String("format", "table", "output format: table, csv or json")
	prices := fs.String("prices", "", "price file (YAML or JSON) over the built-in table, for the cache savings")
	return func(ctx context.Context, out streams, _ []string) error {
		write, ok := costWriters[*format]
		if !ok {
			return fmt.Errorf("--format: %q is not table, csv or json", *format)
		}
		f, err := store.ParseCostRange(*since, *until, time.Now())
		if err != nil {
			return flagError(err, map[string]string{"from": "--since", "to": "--until"})
		}
		f.Project = *project
		dims := strings.Split(*by, ",")
		for i := range dims {
			dims[i] = strings.TrimSpace(dims[i])
		}
		if _, err := store.GroupCost(nil, dims); err != nil {
			return flagError(err, map[string]string{"by": "--by"})
		}
		p, err := loadPrices(*prices)
		if err != nil {
			return err
		}
		st, err := sf.openExisting(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		cells, err := store.New(st.conn, 0, 0).WithReplicas(st.replicaDialer()).QueryCost(ctx, f, p)
		if err != nil {
			return err
		}
		t, err := store.GroupCost(cells, dims)
		if err != nil {
			return err
		}
		var total store.CostUsage
		for _, r := range t.Rows {
			total.Add(r.CostUsage)
		}
		return write(out.stdout, t, total)
	}
}

// loadPrices returns the built-in price table, with the file at path over
// it when path is set.
func loadPrices(path string) (pricing.Prices, error) {
	if path == "" {
		return pricing.DefaultPrices(), nil
	}
	return pricing.LoadPrices(path, pricing.DefaultPrices())
}

// flagError names the command-line flag of a viewer parameter error.
func flagError(err error, flags map[string]string) error {
	var pe *page.ParamError
	if errors.As(err, &pe) {
		if flag, ok := flags[pe.Param]; ok {
			return fmt.Errorf("%s: %s", flag, pe.Reason)
		}
	}
	return err
}

var costWriters = map[string]func(io.Writer, store.CostTable, store.CostUsage) error{
	"table": writeCostTable,
	"csv":   func(w io.Writer, t store.CostTable, _ store.CostUsage) error { return store.WriteCostCSV(w, t) },
	"json": func(w io.Writer, t store.CostTable, total store.CostUsage) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			store.CostTable
			Totals store.CostUsage `json:"totals"`
		}{t, total})
	},
}

// writeCostTable prints the table aligned, numbers right-aligned, with a
// total line; unknown values are —, and a row of calls none of which
// reported usage says so in TOKENS IN.
func writeCostTable(w io.Writer, t store.CostTable, total store.CostUsage) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := append(upper(t.By), "CALLS", "TOKENS IN", "TOKENS OUT", "CACHE READ", "CACHE WRITE", "COST USD", "UNPRICED", "CACHE SAVED")
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	line := func(key []string, u store.CostUsage) {
		in := count(u.TokensIn)
		if note := u.UsageNote(); note != "" {
			in = note
		}
		cells := append(key, strconv.FormatUint(u.Calls, 10), in, count(u.TokensOut), count(u.CacheRead),
			count(u.CacheWrite), usd(u.CostUSD), strconv.FormatUint(u.Unpriced, 10), usd(u.CacheSavingsUSD))
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

// count and usd format a sum of CostUsage for the table: — when unknown.
func count(n *uint64) string {
	if n == nil {
		return "—"
	}
	return store.FormatCount(*n)
}

func usd(f *float64) string {
	if f == nil {
		return "—"
	}
	return store.FormatUSD(*f)
}
