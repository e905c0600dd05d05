// Package viewer is convtrace's web viewer: a gin server that renders the
// conversations recorded in ClickHouse as HTML pages and serves the same
// data as JSON, every page with a twin under /api/.
//
// Pages and their JSON:
//
//	GET /                        threads, newest first: filters project, provider, q (title),
//	GET /api/threads             archived=1; keyset pages; rename and archive below
//	GET /threads/:id             one thread by phase, then round: filters phase (repeatable),
//	GET /api/threads/:id/turns   role, speaker, session, agent, tool, from, to, starred, q; limit
//	GET /threads/:id/graph       who answered whom, hand-offs and tools as SVG; weight=calls|cost
//	GET /api/threads/:id/graph
//	GET /traces/:trace_id        a trace as a waterfall; ?span= opens a span's turns
//	GET /api/traces/:trace_id
//	GET /threads/:id/compare     two calls side by side with a word diff: a, b (turn or span ids);
//	GET /api/threads/:id/compare /api/threads/:id/compare/pairs?call= gives a call's natural pairs
//	GET /search                  search across threads: q, project, role, from, to; 100 a page
//	GET /api/search
//	GET /cost                    cost and tokens by day, model, provider, phase, speaker, agent,
//	GET /api/cost                thread; cache savings; /api/cost/csv?table= for each table
//
// More JSON:
//
//	PATCH /api/threads/:id                              {"title", "archived"}
//	DELETE /api/threads/:id                             {"confirm": id}: the thread, for good
//	PUT   /api/threads/:id/turns/:turn_id/note          {"starred", "memo"}
//	GET   /api/threads/:id/turns/:turn_id/content       a turn's whole content
//	GET   /api/threads/:id/markdown                     the (filtered) thread as markdown
//	GET   /api/threads/:id/turns/:turn_id/markdown      one turn as markdown
//	GET   /api/threads/:id/context?limit=10             the last messages in chat format
//	GET   /api/threads/:id/cost                         the thread's usage by phase
//	GET   /api/traces/:trace_id/spans/:span_id/turns    a span's turns
//
// The pages read through package store, which holds every SQL
// statement; this package writes none.
//
// Every string that came from a model is escaped by html/template; pages
// carry a Content-Security-Policy that allows only the viewer's own scripts
// and stylesheets. WithToken requires a token of every request; requests
// that change something must come from the viewer's own pages
// (same-origin, JSON bodies).
//
// Its place in the whole is described in docs/architecture.md.
package viewer
