package mcpserver

import (
	"slices"
	"time"

	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store"
)

// turnOut is one turn as get_thread gives it: who said what, when, at
// what cost, its text cut to a bound. Its phase and round are those of
// the group it is in.
type turnOut struct {
	TurnID       string    `json:"turn_id"`
	ParentTurnID string    `json:"parent_turn_id,omitempty"`
	Role         string    `json:"role"`
	Speaker      string    `json:"speaker,omitempty"`
	Agent        string    `json:"agent,omitempty"`
	Provider     string    `json:"provider,omitempty"`
	Model        string    `json:"model,omitempty"`
	ToolName     string    `json:"tool_name,omitempty"`
	ToolCallID   string    `json:"tool_call_id,omitempty"`
	Time         time.Time `json:"time"`
	DurationMS   float64   `json:"duration_ms,omitempty"`
	Status       string    `json:"status,omitempty"`
	Error        string    `json:"error,omitempty"`
	Running      bool      `json:"running,omitempty"`
	Interrupted  bool      `json:"interrupted,omitempty"`
	TokensIn     *uint32   `json:"tokens_in,omitempty"`
	TokensOut    *uint32   `json:"tokens_out,omitempty"`
	CacheRead    *uint32   `json:"tokens_cache_read,omitempty"`
	CostUSD      *float64  `json:"cost_usd,omitempty"`
	Starred      bool      `json:"starred,omitempty"`
	Memo         string    `json:"memo,omitempty"`
	// Text is the content when it is not chat messages; Messages the
	// content when it is, the last ones that fit, after EarlierMessages
	// left out.
	Text            string       `json:"text,omitempty"`
	Messages        []messageOut `json:"messages,omitempty"`
	EarlierMessages int          `json:"earlier_messages,omitempty"`
	// Cut says a text holds only its start, or the stored content was
	// read only in part.
	Cut bool `json:"cut,omitempty"`
}

// messageOut is one chat message of a turn: its role and its text (tool
// calls as → name(arguments), results as ← result).
type messageOut struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// newTurnOut makes t into a turnOut whose texts hold at most n bytes.
func newTurnOut(t store.Turn, n int) turnOut {
	v := turnOut{
		TurnID: t.TurnID, ParentTurnID: t.ParentTurnID, Role: t.Role, Speaker: t.Speaker, Agent: t.Agent,
		Provider: t.Provider, Model: t.Model, ToolName: t.ToolName, ToolCallID: t.ToolCallID,
		Time: time.Unix(0, int64(t.StartNS)).UTC(), DurationMS: float64(t.DurationNS) / 1e6,
		Status: t.Status, Running: t.Running, Interrupted: t.Interrupted,
		TokensIn: t.TokensIn, TokensOut: t.TokensOut, CacheRead: t.TokensCacheRead, CostUSD: t.CostUSD, Starred: t.Starred, Memo: t.Memo,
	}
	var errCut bool
	v.Error, errCut = cutText(t.Error, n)
	if msgs, _ := genai.Decode(t.Content); len(msgs) > 0 {
		v.Messages, v.EarlierMessages, v.Cut = lastMessages(msgs, n)
	} else {
		v.Text, v.Cut = cutText(t.Content, n)
	}
	v.Cut = v.Cut || errCut || t.ContentCut
	return v
}

// lastMessages returns the last of msgs whose texts fit n bytes, the
// first of them cut when it does not fit whole, and how many came before:
// a prompt repeats its history first and says what is new last.
func lastMessages(msgs []genai.Message, n int) (out []messageOut, earlier int, cut bool) {
	earlier = len(msgs)
	for earlier > 0 && n > 0 {
		m := msgs[earlier-1]
		var text string
		text, cut = cutText(m.Text(), n)
		n -= len(text)
		if cut {
			n = 0
		}
		out = append(out, messageOut{Role: m.Role, Text: text})
		earlier--
	}
	slices.Reverse(out)
	return out, earlier, cut
}
