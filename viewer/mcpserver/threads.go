package mcpserver

import (
	"context"
	"strings"

	"github.com/convtrace/convtrace/store"
	"github.com/convtrace/convtrace/store/page"
)

// Bounds of list_threads.
const (
	defaultThreads = 20
	maxThreads     = 100
)

const listThreadsDoc = `List threads, newest first (by their last turn), as the viewer's threads list shows them: id, title, ` +
	`project, providers, last update, turn count, tokens, cost (null when unknown) and a one-line preview of the last answer. ` +
	`Filter by project, provider, a text in the title, or archived threads only. At most 100 threads a call ` +
	`(limit, default 20); pass "older" as before (or "newer" as after) for the page beside.`

type listThreadsIn struct {
	Project  string `json:"project,omitempty" jsonschema:"only threads of this project"`
	Provider string `json:"provider,omitempty" jsonschema:"only threads with a call to this provider (openai, anthropic, ...)"`
	Query    string `json:"query,omitempty" jsonschema:"only threads whose title holds this text, any case"`
	Archived bool   `json:"archived,omitempty" jsonschema:"list the archived threads instead of the others"`
	Attr     words  `json:"attr,omitempty" jsonschema:"only threads with these thread attributes, each KEY=VALUE (task=T-7), all must hold: a task's or a card's threads"`
	Limit    *int   `json:"limit,omitempty" jsonschema:"how many threads, 1 to 100 (default 20)"`
	Before   string `json:"before,omitempty" jsonschema:"a cursor (older of an earlier answer): the threads older than it"`
	After    string `json:"after,omitempty" jsonschema:"a cursor (newer of an earlier answer): the threads newer than it"`
}

type listThreadsOut struct {
	Threads []threadOut `json:"threads"`
	// Older and Newer are the cursors of the pages beside, "" at either end.
	Older string `json:"older"`
	Newer string `json:"newer"`
}

func (s *server) listThreads(ctx context.Context, in listThreadsIn) (listThreadsOut, error) {
	f := store.ThreadFilter{Project: in.Project, Provider: in.Provider, Query: strings.TrimSpace(in.Query), Archived: in.Archived}
	for _, kv := range in.Attr {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return listThreadsOut{}, page.BadParam("attr", "%q is not KEY=VALUE", kv)
		}
		if f.Attrs == nil {
			f.Attrs = map[string]string{}
		}
		f.Attrs[strings.TrimSpace(k)] = v
	}
	var err error
	if f.Limit, err = inRange("limit", in.Limit, defaultThreads, 1, maxThreads); err != nil {
		return listThreadsOut{}, err
	}
	if f.Before, err = store.ParseCursor("before", in.Before); err != nil {
		return listThreadsOut{}, err
	}
	if f.After, err = store.ParseCursor("after", in.After); err != nil {
		return listThreadsOut{}, err
	}
	if f.Before != nil && f.After != nil {
		return listThreadsOut{}, page.BadParam("after", "give before or after, not both")
	}
	page, err := s.store.Threads(ctx, f)
	if err != nil {
		return listThreadsOut{}, err
	}
	out := listThreadsOut{Threads: newThreadOuts(page.Threads)}
	if page.Older != nil {
		out.Older = page.Older.String()
	}
	if page.Newer != nil {
		out.Newer = page.Newer.String()
	}
	return out, nil
}
