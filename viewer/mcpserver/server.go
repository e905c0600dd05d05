package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"encoding/json"
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
	RecentContext(ctx context.Context, threadID string, limit int, opts ...store.ContextOption) ([]store.ContextMessage, error)
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

// addTool adds a read-only tool whose arguments are In and whose answer is
// Out. Its input schema gives every argument one type (clients with
// single-type schema dialects refuse ["null","integer"]); the arguments
// are decoded here, so that a value of the wrong type is refused naming
// the argument and the type it needs.
func addTool[In, Out any](srv *mcp.Server, s *server, name, doc string, h func(context.Context, In) (Out, error)) {
	args, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err)) // In is one of this package's types
	}
	boundArgs(args)
	oneType(args)
	outSchema, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
	srv.AddTool(&mcp.Tool{Name: name, Description: doc, Annotations: readOnly, InputSchema: args, OutputSchema: outSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
			defer func() {
				if r := recover(); r != nil {
					res, err = errorResult(s.toolError(ctx, name, fmt.Errorf("panic: %v", r))), nil
				}
			}()
			in, err := decodeArgs[In](req.Params.Arguments)
			if err != nil {
				return errorResult(err), nil
			}
			out, err := h(ctx, in)
			if err != nil {
				return errorResult(s.toolError(ctx, name, err)), nil
			}
			body, err := json.Marshal(out)
			if err != nil {
				return nil, fmt.Errorf("marshal the answer of %s: %w", name, err)
			}
			if len(body) > maxToolBytes {
				return errorResult(fmt.Errorf("the answer is %d bytes, over the %d this server sends: narrow the filters or lower limit", len(body), maxToolBytes)), nil
			}
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(body), Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}, nil
		})
}

// errorResult is a tool's answer that it failed, saying why.
func errorResult(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

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
