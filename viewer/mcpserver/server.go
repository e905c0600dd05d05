package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/convtrace/convtrace/schema/pricing"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// Store is what the tools read: store.Store satisfies it. Its methods are
// called concurrently, one call per tool call, with the call's context.
type Store interface {
	Threads(ctx context.Context, f store.ThreadFilter) (store.ThreadPage, error)
	Thread(ctx context.Context, id string) (store.Thread, error)
	Turns(ctx context.Context, threadID string, f store.TurnFilter, limit, contentBytes int) ([]store.Turn, error)
	CountTurns(ctx context.Context, threadID string, f store.TurnFilter) (int, error)
	Search(ctx context.Context, f store.SearchFilter, limit int) ([]store.SearchHit, error)
	ThreadTitles(ctx context.Context, hits []store.SearchHit) (map[string]string, error)
	RecentContext(ctx context.Context, threadID string, limit int) ([]store.ContextMessage, error)
	CostData(ctx context.Context, f store.CostFilter, withCells bool, threadLimit int, now time.Time) ([]store.CostCell, []store.CostThread, error)
}

var _ Store = store.Store{}

// Option configures New.
type Option interface{ apply(*config) }

type config struct {
	prices pricing.Prices
	logger *slog.Logger
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithPrices prices the cost tool's cache savings with p. Without it they
// are unknown (null).
func WithPrices(p pricing.Prices) Option { return optionFunc(func(c *config) { c.prices = p }) }

// WithLogger logs the server's failures to l. Without it they are not
// logged: a client sees each tool error in its answer, that of a failed
// query without its details.
func WithLogger(l *slog.Logger) Option { return optionFunc(func(c *config) { c.logger = l }) }

// server holds what the tool handlers share.
type server struct {
	store  Store
	prices pricing.Prices
	logger *slog.Logger
}

// New returns an MCP server whose tools read st; run it with Run and
// a transport, such as NewTransport's.
func New(st Store, version string, opts ...Option) *mcp.Server {
	cfg := config{logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o.apply(&cfg)
	}
	s := &server{store: st, prices: cfg.prices, logger: cfg.logger}
	srv := mcp.NewServer(&mcp.Implementation{Name: "convtrace", Title: "convtrace history", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Logger: cfg.logger})
	srv.AddReceivingMiddleware(cutToolErrors)
	addTool(srv, s, "list_threads", listThreadsDoc, s.listThreads)
	addTool(srv, s, "get_thread", getThreadDoc, s.getThread)
	addTool(srv, s, "search", searchDoc, s.search)
	addTool(srv, s, "recent_context", recentContextDoc, s.recentContext)
	addTool(srv, s, "cost", costDoc, s.cost)
	return srv
}

// instructions tell the client what the server is for.
const instructions = `convtrace records every call of an agent pipeline: threads of turns (prompts, responses, tool calls) ` +
	`grouped by phase and round. Find a thread with list_threads or search, read it with get_thread, take its last ` +
	`messages in chat format with recent_context, and what it cost with cost. Every tool only reads.`

// addTool registers a read-only tool whose arguments are bounded by its
// input schema (boundArgs) and whose handler returns its answer or an
// error: a bad argument, an unknown thread, a failed query or a panic
// becomes a tool error (toolError), and an answer over maxToolBytes is
// refused rather than sent.
func addTool[In, Out any](srv *mcp.Server, s *server, name, doc string, h func(context.Context, In) (Out, error)) {
	args, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err)) // In is one of this package's types
	}
	boundArgs(args)
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
	mcp.AddTool(srv, &mcp.Tool{Name: name, Description: doc, Annotations: readOnly, InputSchema: args},
		func(ctx context.Context, _ *mcp.CallToolRequest, in In) (_ *mcp.CallToolResult, out Out, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = s.toolError(ctx, name, fmt.Errorf("panic: %v", r))
				}
			}()
			if out, err = h(ctx, in); err != nil {
				return nil, out, s.toolError(ctx, name, err)
			}
			if n := answerBytes(out); n > maxToolBytes {
				return nil, out, fmt.Errorf("the answer is %d bytes, over the %d this server sends: narrow the filters or lower limit", n, maxToolBytes)
			}
			return nil, out, nil
		})
}

// toolError says what went wrong in words an agent can act on. A failure
// of the store or the server is logged and answered without its details,
// which may quote the query and its arguments.
func (s *server) toolError(ctx context.Context, tool string, err error) error {
	var pe *page.ParamError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("bad argument %s", pe.Error())
	case errors.Is(err, store.ErrTurnNotFound):
		return fmt.Errorf("%w: get_thread without turn_id lists the thread's turns", err)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: list_threads or search gives the ids of stored threads", err)
	}
	s.logger.ErrorContext(ctx, "mcp: tool failed", "tool", tool, "err", err)
	return fmt.Errorf("%s failed reading the history; the server's log says why: try again, or narrow the call", tool)
}
