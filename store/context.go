package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
)

// contextTurn is a prompt or response turn as the recent context reads it.
type contextTurn struct {
	TurnID, Role, Speaker, Phase, Content string
	Seq                                   uint16
	StartNS                               uint64
	TokensOut, TokensReasoning            *uint32
}

// contextCursor is the oldest turn read so far: the next batch is older.
type contextCursor struct {
	StartNS uint64
	Seq     uint16
	TurnID  string
}

// selectContextTurns reads the prompts, responses and context resets of
// {thread} that {older} keeps, newest first, {limit} at a time: the recent
// context stops reading once it has enough messages, or at a reset. Error
// rows and tool turns are not what was said to or by the model, and
// internal turns are kept for the audit trail only. LIMIT 1 BY turn_id
// keeps one copy of a turn delivered twice.
const (
	selectContextTurns = `
SELECT turn_id, role, seq, speaker, phase, content, start_ns, tokens_out, tokens_reasoning
FROM conversations
WHERE thread_id = {thread}
  AND role IN ('prompt', 'response', 'context_reset')
  AND internal = 0{older}
ORDER BY start_ns DESC, seq DESC, turn_id DESC, revision DESC
LIMIT 1 BY turn_id
LIMIT {limit}`
	contextOlder = `
  AND (start_ns < {start} OR (start_ns = {start} AND (seq < {seq} OR (seq = {seq} AND turn_id < {turn}))))`
)

// contextQuery is selectContextTurns of at most limit turns of a thread,
// older than before when it is given.
func contextQuery(threadID string, before *contextCursor, limit int) sqlText {
	older := raw("")
	if before != nil {
		older = sqlf(contextOlder, holes{"start": arg(before.StartNS), "seq": arg(before.Seq), "turn": arg(before.TurnID)})
	}
	return sqlf(selectContextTurns, holes{"thread": arg(threadID), "older": older, "limit": arg(uint64(limit))})
}

// selectThreadExists is 1 when {thread} has a turn, else 0.
const selectThreadExists = `
SELECT count() AS found
FROM
(
    SELECT 1
    FROM conversations
    WHERE thread_id = {thread}
    LIMIT 1
)`

// contextTurns returns at most limit prompt and response turns of a
// thread, newest first, older than before when it is given.
func (s Store) contextTurns(ctx context.Context, threadID string, before *contextCursor, limit int) ([]contextTurn, error) {
	q := contextQuery(threadID, before, limit)
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return nil, fmt.Errorf("query context turns: %w", err)
	}
	defer rows.Close()
	var turns []contextTurn
	for rows.Next() {
		var t contextTurn
		if err := rows.Scan(&t.TurnID, &t.Role, &t.Seq, &t.Speaker, &t.Phase, &t.Content, &t.StartNS,
			&t.TokensOut, &t.TokensReasoning); err != nil {
			return nil, fmt.Errorf("scan context turn: %w", err)
		}
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read context turns: %w", err)
	}
	return turns, nil
}

// ThreadExists reports whether the thread has any turn.
func (s Store) ThreadExists(ctx context.Context, threadID string) (bool, error) {
	return s.exists(ctx, "thread", sqlf(selectThreadExists, holes{"thread": arg(threadID)}))
}

// TurnCount counts the thread's turns as stored, copies not folded yet
// included.
func (s Store) TurnCount(ctx context.Context, threadID string) (uint64, error) {
	rows, err := s.db.Query(ctx, selectThreadTurnCount, threadID)
	if err != nil {
		return 0, fmt.Errorf("count the turns of thread %s: %w", threadID, err)
	}
	defer rows.Close()
	var n uint64
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, fmt.Errorf("count the turns of thread %s: %w", threadID, err)
		}
	}
	return n, rows.Err()
}

const (
	selectAnyThread       = "SELECT thread_id FROM conversations WHERE project = ? LIMIT 1"
	selectThreadTurnCount = "SELECT count() FROM conversations WHERE thread_id = ?"
)

// AnyThread returns a thread of project, if it has any.
func (s Store) AnyThread(ctx context.Context, project string) (string, bool, error) {
	rows, err := s.db.Query(ctx, selectAnyThread, project)
	if err != nil {
		return "", false, fmt.Errorf("find a thread of project %s: %w", project, err)
	}
	defer rows.Close()
	var id string
	found := rows.Next()
	if found {
		if err := rows.Scan(&id); err != nil {
			return "", false, fmt.Errorf("find a thread of project %s: %w", project, err)
		}
	}
	return id, found, rows.Err()
}

// exists runs a query whose one row counts found rows (at most one), for
// what says whether a thread or trace exists.
func (s Store) exists(ctx context.Context, what string, q sqlText) (bool, error) {
	rows, err := s.db.Query(ctx, q.text, q.args...)
	if err != nil {
		return false, fmt.Errorf("query %s exists: %w", what, err)
	}
	defer rows.Close()
	var found uint64
	if rows.Next() {
		if err := rows.Scan(&found); err != nil {
			return false, fmt.Errorf("scan %s exists: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read %s exists: %w", what, err)
	}
	return found > 0, nil
}

// ContextMessage is one message of a thread's recent context, in the chat
// format a pipeline sends to a model, with where it came from.
type ContextMessage struct {
	Role    string    `json:"role"` // user or assistant
	Content string    `json:"content"`
	Speaker string    `json:"speaker"`
	Phase   string    `json:"phase"`
	TurnID  string    `json:"turn_id"`
	Time    time.Time `json:"time"`
	// Tokens is the message's size in tokens as estimated (EstimateTokens).
	Tokens int `json:"tokens"`
}

// A ContextOption bounds RecentContext beyond its count of messages.
type ContextOption interface{ apply(*contextConfig) }

type contextConfig struct{ maxTokens int }

type contextOptionFunc func(*contextConfig)

func (f contextOptionFunc) apply(c *contextConfig) { f(c) }

// WithMaxTokens keeps the newest messages whose estimated tokens add up
// to at most n: the messages before the first that would pass n are left
// out, so a context never has a hole. Not positive: no bound.
func WithMaxTokens(n int) ContextOption {
	return contextOptionFunc(func(c *contextConfig) { c.maxTokens = n })
}

// RecentContext returns the last limit messages said in a thread, oldest
// first: the fresh, short context a pipeline sends to a model, rebuilt from
// the full audit trail that convtrace keeps (the model never needs the
// whole history). It starts after the thread's last context reset
// (Store.ResetContext, instrument's ResetContext), if any: the turns
// before it are kept and shown but are no longer context.
//
// What was said is each prompt's new user message and each response's
// text. A prompt that is chat messages JSON repeats the history before its
// last message, so only the user messages that end it count; a prompt
// ending in tool results adds nothing. Tool calls and results, system
// prompts and failed calls' error rows are the pipeline's plumbing and are
// left out, as are internal calls (instrument.Turn.Internal).
//
// It returns ErrNotFound when the thread has no turn, and an error
// when limit is not positive.
func RecentContext(ctx context.Context, db DB, threadID string, limit int, opts ...ContextOption) ([]ContextMessage, error) {
	if limit < 1 {
		return nil, errors.New("recent context: limit must be at least 1")
	}
	return Store{db: db}.RecentContext(ctx, threadID, limit, opts...)
}

func (s Store) RecentContext(ctx context.Context, threadID string, limit int, opts ...ContextOption) ([]ContextMessage, error) {
	var cfg contextConfig
	for _, o := range opts {
		o.apply(&cfg)
	}
	// Most turns yield one message; read a few more than asked, and more
	// batches while prompts of tool loops yield none.
	batch := limit + limit/2 + 2
	var (
		newestFirst []ContextMessage
		before      *contextCursor
		tokens      int
	)
	full := func(m ContextMessage) bool {
		if len(newestFirst) >= limit {
			return true
		}
		if cfg.maxTokens > 0 && tokens+m.Tokens > cfg.maxTokens {
			return true
		}
		tokens += m.Tokens
		newestFirst = append(newestFirst, m)
		return false
	}
read:
	for {
		turns, err := s.contextTurns(ctx, threadID, before, batch)
		if err != nil {
			return nil, err
		}
		if before == nil && len(turns) == 0 {
			found, err := s.ThreadExists(ctx, threadID)
			if err != nil {
				return nil, err
			}
			if !found {
				return nil, ErrNotFound
			}
		}
		for _, t := range turns {
			if t.Role == schema.RoleContextReset {
				break read
			}
			msgs := contextMessages(t)
			for i := len(msgs) - 1; i >= 0; i-- {
				if full(msgs[i]) {
					break read
				}
			}
		}
		if len(turns) < batch {
			break
		}
		last := turns[len(turns)-1]
		before = &contextCursor{StartNS: last.StartNS, Seq: last.Seq, TurnID: last.TurnID}
	}
	slices.Reverse(newestFirst)
	if newestFirst == nil {
		newestFirst = []ContextMessage{}
	}
	return newestFirst, nil
}

// EstimateTokens is how many tokens a text of the recent context counts
// when no stored count says: its bytes divided by four, rounded up, as a
// token is about four bytes of English or code. It is a rough figure:
// text in other scripts (three UTF-8 bytes a CJK character) may count more
// tokens than this says, so a bound for such text wants a margin.
func EstimateTokens(text string) int { return (len(text) + 3) / 4 }

// contextMessages is what one prompt or response turn said, in order, each
// with its estimated tokens.
func contextMessages(t contextTurn) []ContextMessage {
	msg := func(role, text string) ContextMessage {
		return ContextMessage{Role: role, Content: text, Speaker: t.Speaker, Phase: t.Phase, TurnID: t.TurnID,
			Time: time.Unix(0, int64(t.StartNS)).UTC(), Tokens: EstimateTokens(text)}
	}
	parsed, isJSON := genai.Decode(t.Content)
	switch {
	case !isJSON && strings.TrimSpace(t.Content) == "":
		return nil
	case !isJSON && t.Role == schema.RolePrompt:
		return []ContextMessage{msg("user", t.Content)}
	case !isJSON:
		return []ContextMessage{t.counted(msg("assistant", t.Content))}
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
		m := msg("assistant", strings.Join(texts, "\n\n"))
		if len(genai.ToolCalls(parsed)) > 0 {
			return []ContextMessage{m} // the stored count holds the calls too
		}
		return []ContextMessage{t.counted(m)}
	}
}

// counted is m, the whole answer of response turn t, with the tokens the
// provider counted for it when they are stored: its output tokens less its
// reasoning, which the answer's text does not hold.
func (t contextTurn) counted(m ContextMessage) ContextMessage {
	if t.TokensOut == nil {
		return m
	}
	n := int(*t.TokensOut)
	if t.TokensReasoning != nil && int(*t.TokensReasoning) < n {
		n -= int(*t.TokensReasoning)
	}
	if n > 0 {
		m.Tokens = n
	}
	return m
}
