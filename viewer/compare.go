package viewer

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/convtrace/convtrace/schema"
	"github.com/convtrace/convtrace/schema/genai"
	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// compareRoutes serves the page comparing two calls of a thread, its
// JSON twin, and the natural partners of a call.
func (s *Server) compareRoutes(app, api *gin.RouterGroup) {
	app.GET("/threads/:id/compare", s.comparePage)
	api.GET("/threads/:id/compare", s.apiCompare)
	api.GET("/threads/:id/compare/pairs", s.apiComparePairs)
}

const (
	// compareMaxBytes bounds the text compared of each side: a diff costs
	// up to the product of the two lengths (in words) before its timeout.
	compareMaxBytes = 200 << 10
	// answerReadBytes is how much of an answer turn's content is read: its
	// text (messages JSON without the JSON) then is cut to compareMaxBytes.
	answerReadBytes = 4 * compareMaxBytes
	// compareListTurns is how many of a thread's newest turns the call
	// pickers and the natural pairs are drawn from: two pickers of 2,500
	// calls make a page of about 400 KB.
	compareListTurns = 5_000
)

// compareSide is one call of a comparison and the text of it compared:
// its answer (response or error; a tool's result), or the one turn asked
// for when that turn is no prompt.
type compareSide struct {
	Call       string   `json:"call"`     // the span's id (the turn's, for a turn without one)
	TurnIDs    []string `json:"turn_ids"` // the turns whose text is compared, in order
	Label      string   `json:"label"`    // speaker · phase · round · time
	Speaker    string   `json:"speaker"`
	Phase      string   `json:"phase"`
	Round      uint16   `json:"round"`
	Role       string   `json:"role"` // of the first compared turn
	Provider   string   `json:"provider"`
	Model      string   `json:"model"`
	ToolName   string   `json:"tool_name"`
	Status     string   `json:"status"`
	StartNS    uint64   `json:"start_ns"`
	DurationNS uint64   `json:"duration_ns"`
	TokensIn   *uint32  `json:"tokens_in"`
	TokensOut  *uint32  `json:"tokens_out"`
	CostUSD    *float64 `json:"cost_usd"`
	Text       string   `json:"text"`
	// Cut says Text is the start of a longer answer: its first
	// compareMaxBytes.
	Cut bool `json:"cut"`
}

// callNotFound is a compare parameter that names no turn or call of the
// thread, or one of another thread.
type callNotFound struct{ param, thread, id string }

func (e callNotFound) Error() string {
	return fmt.Sprintf("%s: thread %s has no turn or call with the id %q", e.param, e.thread, e.id)
}

func (e callNotFound) Is(target error) bool { return target == store.ErrNotFound }

// readSide reads the call that id (a turn's or a span's) names, of the
// parameter param, and the text of it compared.
func (s *Server) readSide(ctx context.Context, thread, param, id string) (compareSide, error) {
	turns, err := s.store.CallOf(ctx, thread, id)
	if err != nil {
		return compareSide{}, err
	}
	if len(turns) == 0 {
		return compareSide{}, callNotFound{param, thread, id}
	}
	c := call{ID: callID(turns[0]), Turns: turns}
	var shown []store.Turn
	if i := slices.IndexFunc(turns, func(t store.Turn) bool { return t.TurnID == id }); i >= 0 && turns[i].Role != schema.RolePrompt {
		shown = turns[i : i+1]
	} else {
		for _, t := range turns {
			if slices.Contains(answerRoles, t.Role) {
				shown = append(shown, t)
			}
		}
	}
	h := c.head()
	side := compareSide{
		Call: c.ID, TurnIDs: []string{}, Label: c.label(), Speaker: h.Speaker, Phase: h.Phase, Round: h.Round,
		Provider: h.Provider, Model: h.Model, ToolName: h.ToolName, Status: h.Status, StartNS: h.StartNS,
	}
	var texts []string
	for _, t := range shown {
		whole, err := s.store.Turns(ctx, thread, store.TurnFilter{TurnID: t.TurnID}, 1, answerReadBytes)
		if err != nil {
			return compareSide{}, err
		}
		if len(whole) == 0 {
			continue // removed since
		}
		if side.Role == "" {
			side.Role = t.Role
		}
		side.TurnIDs = append(side.TurnIDs, t.TurnID)
		side.Cut = side.Cut || whole[0].ContentCut
		if t.Model != "" {
			side.Model = t.Model
		}
		if t.Status == schema.StatusError {
			side.Status = t.Status
		}
		side.DurationNS = max(side.DurationNS, t.DurationNS)
		side.TokensIn, side.TokensOut = addKnown(side.TokensIn, t.TokensIn), addKnown(side.TokensOut, t.TokensOut)
		side.CostUSD = addKnown(side.CostUSD, t.CostUSD)
		texts = append(texts, turnText(whole[0]))
	}
	text, cut := cutText(strings.Join(texts, "\n\n"), compareMaxBytes)
	side.Text, side.Cut = text, side.Cut || cut
	return side, nil
}

// turnText is the text of a turn compared: a tool call's arguments
// indented, chat messages JSON as the thread page shows their text, an
// error's message, any other content as it is.
func turnText(t store.Turn) string {
	if t.Content == "" {
		return t.Error
	}
	if t.Role == schema.RoleToolCall {
		var b bytes.Buffer
		if json.Indent(&b, []byte(t.Content), "", "  ") == nil {
			return b.String()
		}
		return t.Content
	}
	if msgs, complete := genai.Decode(t.Content); complete && len(msgs) > 0 {
		texts := make([]string, len(msgs))
		for i, m := range msgs {
			texts[i] = m.Text()
		}
		return strings.Join(texts, "\n\n")
	}
	return t.Content
}

// addKnown adds n to sum, either unknown (nil): the sum of the known
// values, unknown when none is.
func addKnown[T uint32 | float64](sum, n *T) *T {
	if n == nil {
		return sum
	}
	v := *n
	if sum != nil {
		v += *sum
	}
	return &v
}

// comparison is two calls and the word diff of their texts.
type comparison struct {
	A, B    compareSide
	Diff    []diffChunk
	Changed bool
}

func compare(a, b compareSide) comparison {
	res := comparison{A: a, B: b, Diff: wordDiff(a.Text, b.Text)}
	res.Changed = slices.ContainsFunc(res.Diff, func(d diffChunk) bool { return d.Op != opEqual })
	return res
}

// compareResponse is GET /api/threads/:id/compare: the two calls and the
// diff from a's text to b's, as chunks.
type compareResponse struct {
	ThreadID string      `json:"thread_id"`
	A        compareSide `json:"a"`
	B        compareSide `json:"b"`
	Changed  bool        `json:"changed"`
	Diff     []diffChunk `json:"diff"`
	MaxBytes int         `json:"max_bytes"` // of each side's text compared
}

// apiCompare answers GET /api/threads/:id/compare?a=&b=, a and b each a
// turn's or a call's id.
func (s *Server) apiCompare(c *gin.Context) {
	thread := c.Param("id")
	var ids [2]string
	for i, param := range []string{"a", "b"} {
		if ids[i] = c.Query(param); ids[i] == "" {
			s.apiError(c, page.BadParam(param, "missing: give the id of a turn or call of the thread"))
			return
		}
	}
	var (
		sides [2]compareSide
		errs  [3]error // the thread's, a's, b's: a missing thread explains a missing call
		wg    sync.WaitGroup
		ctx   = c.Request.Context()
	)
	wg.Go(func() { _, errs[0] = s.store.Thread(ctx, thread) })
	for i, param := range []string{"a", "b"} {
		wg.Go(func() { sides[i], errs[i+1] = s.readSide(ctx, thread, param, ids[i]) })
	}
	wg.Wait()
	if err := cmp.Or(errs[:]...); err != nil {
		s.apiError(c, err)
		return
	}
	res := compare(sides[0], sides[1])
	s.writeJSON(c, http.StatusOK, compareResponse{
		ThreadID: thread, A: res.A, B: res.B, Changed: res.Changed, Diff: res.Diff, MaxBytes: compareMaxBytes,
	})
}

// apiComparePairs answers GET /api/threads/:id/compare/pairs?call=ID with
// the natural partners of the call (or turn) ID: {"thread_id", "call",
// "pairs": [{kind, label, call, url}]}.
func (s *Server) apiComparePairs(c *gin.Context) {
	thread, id := c.Param("id"), c.Query("call")
	if id == "" {
		s.apiError(c, page.BadParam("call", "missing: give the id of a turn or call of the thread"))
		return
	}
	var (
		turns []store.Turn
		own   []store.Turn
	)
	g, ctx := errgroup.WithContext(c.Request.Context())
	g.Go(func() error { _, err := s.store.Thread(ctx, thread); return err })
	g.Go(func() (err error) { turns, err = s.store.CallTurns(ctx, thread, compareListTurns); return err })
	g.Go(func() (err error) { own, err = s.store.CallOf(ctx, thread, id); return err })
	err := g.Wait()
	if err == nil && len(own) == 0 {
		err = callNotFound{"call", thread, id}
	}
	if err != nil {
		s.apiError(c, err)
		return
	}
	pairs := comparePairs(turns)[id]
	if pairs == nil {
		pairs = []pairLink{}
	}
	s.writeJSON(c, http.StatusOK, struct {
		ThreadID string     `json:"thread_id"`
		Call     string     `json:"call"`
		Pairs    []pairLink `json:"pairs"`
	}{thread, callID(own[0]), pairs})
}

// comparePage renders GET /threads/:id/compare?a=&b=: the two calls side
// by side with their diff, and the form to pick two others. Without both
// a and b it shows the form only.
func (s *Server) comparePage(c *gin.Context) {
	thread := c.Param("id")
	ids := [2]string{c.Query("a"), c.Query("b")}
	v := compareView{PickA: ids[0], PickB: ids[1], MaxKB: compareMaxBytes >> 10}
	var (
		sides [2]compareSide
		turns []store.Turn
		errs  [4]error // the thread's first: a missing thread explains a missing call
		wg    sync.WaitGroup
		ctx   = c.Request.Context()
	)
	wg.Go(func() { v.Thread, errs[0] = s.store.Thread(ctx, thread) })
	wg.Go(func() { turns, errs[1] = s.store.CallTurns(ctx, thread, compareListTurns) })
	both := ids[0] != "" && ids[1] != ""
	if both {
		for i, param := range []string{"a", "b"} {
			wg.Go(func() { sides[i], errs[i+2] = s.readSide(ctx, thread, param, ids[i]) })
		}
	}
	wg.Wait()
	err := cmp.Or(errs[:]...)
	if errors.Is(err, store.ErrNotFound) {
		msg := "No thread has the id " + thread + "."
		if nf, ok := errors.AsType[callNotFound](err); ok {
			msg = nf.Error() + "."
		}
		s.html(c, http.StatusNotFound, "notfound.html", msg)
		return
	}
	if err != nil {
		s.pageError(c, err)
		return
	}
	v.fill(turns, sides, both)
	s.html(c, http.StatusOK, "compare.html", v)
}
