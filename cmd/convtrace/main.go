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
// the function that runs it, with the arguments left after the flags, once
// they are parsed. Only commands that take arguments accept any.
type command struct {
	name, summary string
	takesArgs     bool
	setup         func(fs *flag.FlagSet) func(ctx context.Context, io streams, args []string) error
}

// streams are what a command reads and prints: results to stdout, progress
// and errors to stderr.
type streams struct {
	stdout, stderr io.Writer
	stdin          io.Reader
}

// exitCode is an error that ends convtrace with a given exit status and no
// message, such as a wrapped agent's own.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

var commands = []command{
	{"serve", "serve the viewer on http://127.0.0.1:8080 and the OTLP receivers", false, serveCmd},
	{"run", "run a CLI agent (Claude Code, Codex, any command) and record what it says", true, runAgentCmd},
	{"demo", "record one demo pipeline run through the in-process exporter", false, demoCmd},
	{"status", "print the local store's DSN, viewer URL and OTLP endpoints", false, statusCmd},
	{"migrate", "apply pending schema migrations and print the schema version", false, migrateCmd},
	{"mcp", "serve the history to an agent as MCP tools on stdio (list_threads, get_thread, search, ...)", false, mcpCmd},
	{"cost", "print token usage and cost grouped by day, model, provider, phase, speaker or agent", false, costCmd},
	{"reprice", "recompute the priced costs of a time range after a price change", false, repriceCmd},
	{"export", "write threads (one, a project's, a time range's) as a versioned JSON or JSONL export", false, exportCmd},
	{"import", "store the threads of export files, skipping what is stored already", true, importCmd},
	{"delete", "delete one thread: its turns, spans, notes and metadata", false, deleteCmd},
	{"prune", "remove turns older than an age, keeping each thread's shell in the list", false, pruneCmd},
	{"archive", "move threads idle for an age into checked files, one per thread, and out of ClickHouse", false, archiveCmd},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], streams{os.Stdout, os.Stderr, os.Stdin})
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
		if fs.NArg() > 0 && !c.takesArgs {
			fmt.Fprintf(stderr, "convtrace %s: unexpected argument %q\n", c.name, fs.Arg(0))
			return 2
		}
		if err := runCmd(ctx, out, fs.Args()); err != nil {
			var code exitCode
			if errors.As(err, &code) {
				return int(code)
			}
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
