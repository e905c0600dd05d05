package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/store"
)

func deleteCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	thread := fs.String("thread", "", "id of the thread to delete")
	project := fs.String("project", "", "delete every thread of this project instead")
	yes := fs.Bool("yes", false, "delete without asking")
	return func(ctx context.Context, out streams, _ []string) error {
		if (*thread == "") == (*project == "") {
			return errors.New("--thread: name the thread to delete (or --project, every thread of a project)")
		}
		st, err := sf.openExisting(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		reads := store.New(st.conn, 0, 0)
		ids := []string{*thread}
		if *project != "" {
			if ids, err = projectThreads(ctx, reads, *project); err != nil {
				return err
			}
		}
		var size store.Removal
		for _, id := range ids {
			one, err := reads.ThreadSize(ctx, id)
			if errors.Is(err, store.ErrNotFound) && *thread != "" {
				return fmt.Errorf("no thread has the id %q", id)
			}
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			size.Add(one)
		}
		what := "thread " + *thread
		if *project != "" {
			what = "project " + *project
		}
		fmt.Fprintf(out.stderr, "%s: %s\n", what, describeRemoval(size))
		if err := confirm(out, *yes, "delete it for good"); err != nil {
			return err
		}
		var removed store.Removal
		for i, id := range ids {
			one, err := reads.DeleteThread(ctx, id, mutationProgress(out.stderr))
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("thread %s (%d of %d): %w", id, i+1, len(ids), err)
			}
			removed.Add(one)
			if len(ids) > 1 {
				fmt.Fprintf(out.stderr, "deleted %d of %d threads\n", i+1, len(ids))
			}
		}
		fmt.Fprintf(out.stdout, "deleted %s: %s\n", what, describeRemoval(removed))
		return nil
	}
}

// projectThreads lists every thread of project, an error when it has none.
func projectThreads(ctx context.Context, reads store.Store, project string) ([]string, error) {
	threads, err := reads.IdleThreads(ctx, schema.MaxTimeNS, project)
	if err != nil {
		return nil, err
	}
	if len(threads) == 0 {
		return nil, fmt.Errorf("no thread is in the project %q", project)
	}
	ids := make([]string, len(threads))
	for i, th := range threads {
		ids[i] = th.ID
	}
	return ids, nil
}

func pruneCmd(fs *flag.FlagSet) func(context.Context, streams, []string) error {
	var sf storageFlags
	sf.register(fs)
	olderThan := fs.String("older-than", "", "remove the turns and spans that started longer ago than this age (180d, 720h; required)")
	project := fs.String("project", "", "only this project (default all)")
	dryRun := fs.Bool("dry-run", false, "print what would be removed and remove nothing")
	yes := fs.Bool("yes", false, "prune without asking")
	return func(ctx context.Context, out streams, _ []string) error {
		cutoff, err := ageFlag("--older-than", *olderThan)
		if err != nil {
			return err
		}
		scope := store.PruneScope{BeforeNS: uint64(cutoff.UnixNano()), Project: *project}
		st, err := sf.openExisting(ctx, out.stderr)
		if err != nil {
			return err
		}
		defer st.close()
		reads := store.New(st.conn, 0, 0)
		plan, err := reads.PlanPrune(ctx, scope)
		if err != nil {
			return err
		}
		fmt.Fprintf(out.stdout, "%s before %s%s: %s, %d of the threads left with no turn; %d partitions dropped whole\n",
			map[bool]string{true: "would prune", false: "pruning"}[*dryRun], cutoff.UTC().Format(time.RFC3339),
			projectSuffix(*project), describeRemoval(plan.Removal), plan.WholeThreads, len(plan.Partitions)+len(plan.SpanPartitions))
		if plan.Unfinished > 0 {
			fmt.Fprintf(out.stdout, "an interrupted prune of %d threads is finished first\n", plan.Unfinished)
		}
		if *dryRun || plan.Turns == 0 && plan.Spans == 0 && plan.Unfinished == 0 {
			return nil
		}
		if err := confirm(out, *yes, "prune"); err != nil {
			return err
		}
		done, err := reads.Prune(ctx, scope, func(step string) { fmt.Fprintln(out.stderr, step) })
		if err != nil {
			return err
		}
		fmt.Fprintf(out.stdout, "pruned %s; every thread keeps its shell in the threads list\n", describeRemoval(done.Removal))
		return nil
	}
}

func projectSuffix(p string) string {
	if p == "" {
		return ""
	}
	return " in project " + p
}

// describeRemoval says what a removal holds, in one line.
func describeRemoval(r store.Removal) string {
	return fmt.Sprintf("%d threads, %d turns (%s of content), %d spans, %d notes", r.Threads, r.Turns, bytesString(r.Bytes), r.Spans, r.Notes)
}

func bytesString(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// confirm asks on a terminal whether to go on, unless yes; without a
// terminal to ask on, it refuses and names --yes.
func confirm(out streams, yes bool, what string) error {
	if yes {
		return nil
	}
	f, ok := out.stdin.(*os.File)
	if info, err := os.Stdin.Stat(); !ok || f != os.Stdin || err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return fmt.Errorf("not asking without a terminal: add --yes to %s", what)
	}
	fmt.Fprintf(out.stderr, "%s? [y/N] ", what)
	answer, err := bufio.NewReader(out.stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the answer: %w", err)
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return errors.New("nothing removed")
	}
	return nil
}

// mutationProgress prints the deletions still running, each state once.
func mutationProgress(w io.Writer) func(mutations, parts uint64) {
	return func(mutations, parts uint64) {
		if mutations > 0 {
			fmt.Fprintf(w, "deleting: %d mutations, %d parts to rewrite\n", mutations, parts)
		}
	}
}
