package viewer

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// contextRoutes serves a thread's recent context in chat format.
func (s *Server) contextRoutes(api *gin.RouterGroup) {
	api.GET("/threads/:id/context", s.apiContext)
}

// Bounds of GET /api/threads/:id/context?limit=.
const (
	defaultContextLimit = 10
	maxContextLimit     = 200
)

// ErrThreadNotFound is what RecentContext returns for a thread that has no
// turn.
var ErrThreadNotFound = errNotFound

// ContextMessage is one message of a thread's recent context, in the chat
// format a pipeline sends to a model, with where it came from.
type ContextMessage struct {
	Role    string    `json:"role"` // user or assistant
	Content string    `json:"content"`
	Speaker string    `json:"speaker"`
	Phase   string    `json:"phase"`
	TurnID  string    `json:"turn_id"`
	Time    time.Time `json:"time"`
}

// RecentContext returns the last limit messages said in a thread, oldest
// first: the fresh, short context a pipeline sends to a model, rebuilt from
// the full audit trail that convtrace keeps (the model never needs the
// whole history).
//
// What was said is each prompt's new user message and each response's
// text. A prompt that is chat messages JSON repeats the history before its
// last message, so only the user messages that end it count; a prompt
// ending in tool results adds nothing. Tool calls and results, system
// prompts and failed calls' error rows are the pipeline's plumbing and are
// left out, as are internal calls (instrument.Turn.Internal).
//
// It returns ErrThreadNotFound when the thread has no turn, and an error
// when limit is not positive.
func RecentContext(ctx context.Context, db DB, threadID string, limit int) ([]ContextMessage, error) {
	if limit < 1 {
		return nil, errors.New("recent context: limit must be at least 1")
	}
	return store{db: db}.recentContext(ctx, threadID, limit)
}

func (s store) recentContext(ctx context.Context, threadID string, limit int) ([]ContextMessage, error) {
	// Most turns yield one message; read a few more than asked, and more
	// batches while prompts of tool loops yield none.
	batch := limit + limit/2 + 2
	var (
		newestFirst []ContextMessage
		before      *contextCursor
	)
	for len(newestFirst) < limit {
		turns, err := s.contextTurns(ctx, threadID, before, batch)
		if err != nil {
			return nil, err
		}
		if before == nil && len(turns) == 0 {
			found, err := s.threadExists(ctx, threadID)
			if err != nil {
				return nil, err
			}
			if !found {
				return nil, ErrThreadNotFound
			}
		}
		for _, t := range turns {
			msgs := contextMessages(t)
			slices.Reverse(msgs)
			newestFirst = append(newestFirst, msgs...)
		}
		if len(turns) < batch {
			break
		}
		last := turns[len(turns)-1]
		before = &contextCursor{StartNS: last.StartNS, Seq: last.Seq, TurnID: last.TurnID}
	}
	msgs := newestFirst[:min(limit, len(newestFirst))]
	slices.Reverse(msgs)
	return append([]ContextMessage{}, msgs...), nil
}

// contextMessages is what one prompt or response turn said, in order.
func contextMessages(t contextTurn) []ContextMessage {
	msg := func(role, text string) ContextMessage {
		return ContextMessage{Role: role, Content: text, Speaker: t.Speaker, Phase: t.Phase, TurnID: t.TurnID,
			Time: time.Unix(0, int64(t.StartNS)).UTC()}
	}
	parsed, isJSON := genai.Decode(t.Content)
	switch {
	case !isJSON && strings.TrimSpace(t.Content) == "":
		return nil
	case !isJSON && t.Role == schema.RolePrompt:
		return []ContextMessage{msg("user", t.Content)}
	case !isJSON:
		return []ContextMessage{msg("assistant", t.Content)}
	case t.Role == schema.RolePrompt:
		// The user messages that end the prompt are the new ones.
		start := len(parsed)
		for start > 0 && parsed[start-1].Role == "user" {
			start--
		}
		var out []ContextMessage
		for _, m := range parsed[start:] {
			if text := strings.TrimSpace(m.Said()); text != "" {
				out = append(out, msg("user", text))
			}
		}
		return out
	default:
		var texts []string
		for _, m := range parsed {
			if m.Role == "assistant" {
				if text := strings.TrimSpace(m.Said()); text != "" {
					texts = append(texts, text)
				}
			}
		}
		if len(texts) == 0 {
			return nil
		}
		return []ContextMessage{msg("assistant", strings.Join(texts, "\n\n"))}
	}
}

// apiContext answers GET /api/threads/:id/context?limit=N (default 10, at
// most 200): {"thread_id", "messages": [...]}, the thread's last N messages
// oldest first, as RecentContext reads them.
func (s *Server) apiContext(c *gin.Context) {
	limit, err := parseLimit("limit", c.Query("limit"), defaultContextLimit, maxContextLimit)
	if err != nil {
		s.apiError(c, err)
		return
	}
	id := c.Param("id")
	msgs, err := s.store.recentContext(c.Request.Context(), id, limit)
	if err != nil {
		s.apiError(c, err)
		return
	}
	s.writeJSON(c, http.StatusOK, struct {
		ThreadID string           `json:"thread_id"`
		Messages []ContextMessage `json:"messages"`
	}{id, msgs})
}
