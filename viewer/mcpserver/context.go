package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// Bounds of recent_context: those of the viewer's recent-context API.
const (
	defaultContextMessages = 10
	maxContextMessages     = 200
	defaultContextBytes    = 8 << 10
	maxContextTokens       = 10_000_000
)

const recentContextDoc = `The last messages said in a thread, oldest first, in chat format (role user or assistant, content), ` +
	`with the speaker, phase, turn id and time of each: what the viewer's GET /api/threads/ID/context gives, the fresh ` +
	`short context a pipeline sends a model. Each prompt's new user messages and each answer's text; tool calls, ` +
	`system prompts, errors and internal calls are left out, because a pipeline sends its own system prompt and ` +
	`tools and a model needs what was said, not the plumbing (get_thread gives every turn, with its role). It starts ` +
	`after the thread's last context reset (reset_context, or POST /api/threads/ID/reset): earlier turns stay in get_thread. ` +
	`At most 200 messages (limit, default 10, or 200 with max_tokens); max_tokens keeps the newest messages whose ` +
	`estimated tokens add up to at most it (each message's tokens: the provider's output count for an answer of text ` +
	`alone, else its bytes / 4 rounded up). Each content is cut to text_bytes (default 8192, at most 65536), shorter ` +
	`still when the answer would pass 256 KB, and then says cut.`

type recentContextIn struct {
	ThreadID  string `json:"thread_id" jsonschema:"the thread's id, as list_threads or search gives it"`
	Limit     *int   `json:"limit,omitempty" jsonschema:"how many messages: 1 to 200 (default 10)"`
	TextBytes *int   `json:"text_bytes,omitempty" jsonschema:"bytes of each message's content: 256 to 65536 (default 8192)"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"keep the newest messages whose estimated tokens fit: 1 to 10000000 (default no bound)"`
}

type recentContextOut struct {
	ThreadID string           `json:"thread_id"`
	Messages []contextMessage `json:"messages"`
	// Tokens is the messages' estimated tokens, summed, before any cut.
	Tokens int `json:"tokens"`
	// More says what the answer left out; "" when nothing.
	More string `json:"more,omitempty"`
}

// contextMessage is a message of the recent context, its content cut to a
// bound.
type contextMessage struct {
	store.ContextMessage
	Cut bool `json:"cut,omitempty"`
}

func (s *server) recentContext(ctx context.Context, in recentContextIn) (recentContextOut, error) {
	id, err := threadID(in.ThreadID)
	if err != nil {
		return recentContextOut{}, err
	}
	var maxTokens int
	if in.MaxTokens != nil {
		if maxTokens = *in.MaxTokens; maxTokens < 1 || maxTokens > maxContextTokens {
			return recentContextOut{}, page.BadParam("max_tokens", "%d is not a number from 1 to %d (leave it out for no bound)", maxTokens, maxContextTokens)
		}
	}
	def := defaultContextMessages
	if maxTokens > 0 {
		def = maxContextMessages
	}
	limit, err := inRange("limit", in.Limit, def, 1, maxContextMessages)
	if err != nil {
		return recentContextOut{}, err
	}
	n, err := textBytes(in.TextBytes, defaultContextBytes)
	if err != nil {
		return recentContextOut{}, err
	}
	msgs, err := s.store.RecentContext(ctx, id, limit, store.WithMaxTokens(maxTokens))
	if err != nil {
		return recentContextOut{}, fmt.Errorf("thread %q: %w", id, err)
	}
	return shrink(n, len(msgs), func(n, drop int) recentContextOut {
		out := recentContextOut{ThreadID: id, Messages: make([]contextMessage, 0, len(msgs)-drop)}
		cut := false
		for _, m := range msgs[drop:] {
			out.Tokens += m.Tokens
			var c bool
			m.Content, c = cutText(m.Content, n)
			cut = cut || c
			out.Messages = append(out.Messages, contextMessage{ContextMessage: m, Cut: c})
		}
		var says []string
		if drop > 0 {
			says = append(says, fmt.Sprintf("the %d oldest messages are left out to keep the answer under 256 KB: lower limit", drop))
		}
		if cut {
			says = append(says, "contents marked cut hold only their start: get_thread with turn_id and a larger text_bytes reads the turn")
		}
		out.More = strings.Join(says, "; ")
		return out
	}), nil
}
