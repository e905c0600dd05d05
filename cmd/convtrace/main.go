package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand: setup registers its flags on fs and returns
// the function that runs it once they are parsed.
type command struct {
	name, summary string
	setup         func(fs *flag.FlagSet) func(ctx context.Context, out streams) error
}

// streams are where a command prints: results to stdout, progress and
// errors to stderr.
type streams struct {
	stdout, stderr io.Writer
}

var commands = []command{
	{"serve", "serve the viewer on http://127.0.0.1:8080", serveCmd},
	{"demo", "record one demo pipeline run through the in-process exporter", demoCmd},
	{"migrate", "apply pending schema migrations and print the schema version", migrateCmd},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], streams{os.Stdout, os.Stderr})
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, out streams) int {
	stderr := out.stderr
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		fs := flag.NewFlagSet("convtrace "+c.name, flag.ContinueOnError)
		fs.SetOutput(stderr)
		runCmd := c.setup(fs)
		if err := fs.Parse(args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "convtrace %s: unexpected argument %q\n", c.name, fs.Arg(0))
			return 2
		}
		if err := runCmd(ctx, out); err != nil {
			fmt.Fprintf(stderr, "convtrace %s: %v\n", c.name, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "convtrace: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "convtrace records, stores and shows what AI agents say to each other.")
	fmt.Fprintln(w, "\nUsage: convtrace COMMAND [flags]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'convtrace COMMAND --help' for a command's flags.")
}
