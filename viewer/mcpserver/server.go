package mcpserver

import (
	"context"
	"encoding/json"
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
	RecentContext(ctx context.Context, threadID string, limit int, opts ...store.ContextOption) ([]store.ContextMessage, error)
	CostData(ctx context.Context, f store.CostFilter, withCells bool, threadLimit int, now time.Time) ([]store.CostCell, []store.CostThread, error)
}

var _ Store = store.Store{}

// Option configures New.
type Option interface{ apply(*config) }

type config struct {
	prices pricing.Prices
	logger *slog.Logger
	writes Writer
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

// WithWrites adds the tools that write, reset_context and set_title,
// which change the history through w. Without it every tool only reads.
func WithWrites(w Writer) Option { return optionFunc(func(c *config) { c.writes = w }) }

// server holds what the tool handlers share.
type server struct {
	store  Store
	writes Writer // nil: the tools only read
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
	s := &server{store: st, writes: cfg.writes, prices: cfg.prices, logger: cfg.logger}
	instr := instructions + readOnlyInstructions
	if s.writes != nil {
		instr = instructions + writeInstructions
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "convtrace", Title: "convtrace history", Version: version},
		&mcp.ServerOptions{Instructions: instr, Logger: cfg.logger})
	srv.AddReceivingMiddleware(cutToolErrors)
	addTool(srv, s, "list_threads", listThreadsDoc, readOnly, s.listThreads)
	addTool(srv, s, "get_thread", getThreadDoc, readOnly, s.getThread)
	addTool(srv, s, "search", searchDoc, readOnly, s.search)
	addTool(srv, s, "recent_context", recentContextDoc, readOnly, s.recentContext)
	addTool(srv, s, "cost", costDoc, readOnly, s.cost)
	if s.writes != nil {
		addTool(srv, s, "reset_context", resetContextDoc, writes(false), s.resetContext)
		addTool(srv, s, "set_title", setTitleDoc, writes(true), s.setTitle)
	}
	return srv
}

// readOnly annotates a tool that only reads.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}

// writes annotates a tool that changes the history but destroys nothing:
// every turn stays stored.
func writes(idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{DestructiveHint: new(bool), IdempotentHint: idempotent, OpenWorldHint: new(bool)}
}

// instructions tell the client what the server is for.
const instructions = `convtrace records every call of an agent pipeline: threads of turns (prompts, responses, tool calls) ` +
	`grouped by phase and round. Find a thread with list_threads or search, read it with get_thread, take its last ` +
	`messages in chat format with recent_context, and what it cost with cost.`

const (
	readOnlyInstructions = ` Every tool only reads.`
	writeInstructions    = ` reset_context and set_title write (the server was started with --allow-writes): ` +
		`reset_context starts a thread's recent context anew, set_title names a thread; the others only read.`
)

// addTool adds a tool whose arguments are In and whose answer is Out,
// annotated with ann. Its input schema gives every argument one type (clients with
// single-type schema dialects refuse ["null","integer"]); the arguments
// are decoded here, so that a value of the wrong type is refused naming
// the argument and the type it needs.
func addTool[In, Out any](srv *mcp.Server, s *server, name, doc string, ann *mcp.ToolAnnotations, h func(context.Context, In) (Out, error)) {
	args, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err)) // In is one of this package's types
	}
	boundArgs(args)
	oneType(args)
	bounds, err := args.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	outSchema, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	srv.AddTool(&mcp.Tool{Name: name, Description: doc, Annotations: ann, InputSchema: args, OutputSchema: outSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
			defer func() {
				if r := recover(); r != nil {
					res, err = errorResult(s.toolError(ctx, name, fmt.Errorf("panic: %v", r))), nil
				}
			}()
			in, err := decodeArgs[In](req.Params.Arguments, bounds)
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
	return fmt.Errorf("%s failed; the server's log says why: try again, or narrow the call", tool)
}
