package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/convtrace/convtrace/store"
)

func repriceCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	since := fs.String("since", "30d", "start of the range: an age (24h, 7d) or a time (2026-05-01, RFC 3339)")
	until := fs.String("until", "", "end of the range, like --since (default now)")
	project := fs.String("project", "", "only this project (default all)")
	prices := fs.String("prices", "", "price file (YAML or JSON) over the built-in table")
	return func(ctx context.Context, out streams, _ []string) error {
		f, err := store.ParseCostRange(*since, *until, time.Now())
		if err != nil {
			return flagError(err, map[string]string{"from": "--since", "to": "--until"})
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
		res, err := store.Reprice(ctx, st.conn, p, store.RepriceRange{FromNS: f.FromNS, ToNS: f.ToNS, Project: *project},
			func(mutations, parts uint64) {
				fmt.Fprintf(out.stderr, "repricing: %d mutations, %d parts to rewrite\n", mutations, parts)
			})
		if err != nil {
			return err
		}
		fmt.Fprintf(out.stdout, "repriced %d turns; %d turns of models without a price have an unknown cost\n", res.Priced, res.Unpriced)
		return nil
	}
}
