package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/convtrace/convtrace/collector/pricing"
	"github.com/convtrace/convtrace/viewer/query"
)

// Store is what the tools read: query.Store satisfies it. Its methods are
// called concurrently, one call per tool call, with the call's context.
type Store interface {
	Threads(ctx context.Context, f query.ThreadFilter) (query.ThreadPage, error)
	Thread(ctx context.Context, id string) (query.Thread, error)
	Turns(ctx context.Context, threadID string, f query.TurnFilter, limit, contentBytes int) ([]query.Turn, error)
	CountTurns(ctx context.Context, threadID string, f query.TurnFilter) (int, error)
	Search(ctx context.Context, f query.SearchFilter, limit int) ([]query.SearchHit, error)
	ThreadTitles(ctx context.Context, hits []query.SearchHit) (map[string]string, error)
	RecentContext(ctx context.Context, threadID string, limit int) ([]query.ContextMessage, error)
	CostData(ctx context.Context, f query.CostFilter, withCells bool, threadLimit int, now time.Time) ([]query.CostCell, []query.CostThread, error)
}

var _ Store = query.Store{}

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
// logged: a client sees each tool error in its answer.
func WithLogger(l *slog.Logger) Option { return optionFunc(func(c *config) { c.logger = l }) }

// server holds what the tool handlers share.
type server struct {
	store  Store
	prices pricing.Prices
}

// New returns an MCP server whose tools read store; run it with Run and
// a transport, such as mcp.StdioTransport.
func New(store Store, version string, opts ...Option) *mcp.Server {
	var cfg config
	for _, o := range opts {
		o.apply(&cfg)
	}
	s := &server{store: store, prices: cfg.prices}
	srv := mcp.NewServer(&mcp.Implementation{Name: "convtrace", Title: "convtrace history", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Logger: cfg.logger})
	addTool(srv, "list_threads", listThreadsDoc, s.listThreads)
	addTool(srv, "get_thread", getThreadDoc, s.getThread)
	addTool(srv, "search", searchDoc, s.search)
	addTool(srv, "recent_context", recentContextDoc, s.recentContext)
	addTool(srv, "cost", costDoc, s.cost)
	return srv
}

// instructions tell the client what the server is for.
const instructions = `convtrace records every call of an agent pipeline: threads of turns (prompts, responses, tool calls) ` +
	`grouped by phase and round. Find a thread with list_threads or search, read it with get_thread, take its last ` +
	`messages in chat format with recent_context, and what it cost with cost. Every tool only reads.`

// addTool registers a read-only tool whose handler returns its answer or
// an error: a bad argument, an unknown thread or a failed query becomes a
// tool error with the error's message, a panic too, and an answer over
// MaxAnswerBytes is refused rather than sent.
func addTool[In, Out any](srv *mcp.Server, name, doc string, h func(context.Context, In) (Out, error)) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
	mcp.AddTool(srv, &mcp.Tool{Name: name, Description: doc, Annotations: readOnly},
		func(ctx context.Context, _ *mcp.CallToolRequest, in In) (_ *mcp.CallToolResult, out Out, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("%s failed: %v", name, r)
				}
			}()
			if out, err = h(ctx, in); err != nil {
				return nil, out, toolError(err)
			}
			if n := answerBytes(out); n > MaxAnswerBytes {
				return nil, out, fmt.Errorf("the answer is %d bytes, over the %d this server sends: narrow the filters or lower limit", n, MaxAnswerBytes)
			}
			return nil, out, nil
		})
}

// toolError says what went wrong in words an agent can act on.
func toolError(err error) error {
	var pe *query.ParamError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("bad argument %s", pe.Error())
	case errors.Is(err, query.ErrTurnNotFound):
		return fmt.Errorf("%w: get_thread without turn_id lists the thread's turns", err)
	case errors.Is(err, query.ErrNotFound):
		return fmt.Errorf("%w: list_threads or search gives the ids of stored threads", err)
	}
	return err
}
