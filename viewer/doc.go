// Package viewer is convtrace's web viewer: a gin server that renders the
// threads recorded in ClickHouse as HTML pages, one per thread grouped by
// phase and round, and serves the same data as JSON.
//
// Routes:
//
//	GET /                           threads, newest first (archived ones hidden)
//	GET /threads/:id                one thread, grouped by phase, then round
//	GET /api/threads                the threads of / as JSON
//	GET /api/threads/:id/turns      a thread's turns as JSON, by start time;
//	                                ?phase= and ?role= filter them
//	GET /static/*                   the embedded stylesheet and script
//
// All SQL lives in the store files (store_threads.go, store_turns.go) and
// takes bound parameters. It runs on every supported server, ClickHouse
// 18.16 through 26.x, so it uses neither window functions nor JSON
// functions. A turn delivered twice is read once: the threads list reads
// conversations FINAL, a thread's turns are deduplicated with LIMIT 1 BY
// turn_id.
//
// A turn whose content is chat messages JSON (OpenAI's or OpenTelemetry
// GenAI's shape) shows as its messages, each under its role; the JSON API
// returns content as stored.
//
// Every string that came from a model is escaped by html/template; pages
// carry a Content-Security-Policy that allows only the viewer's own script
// and stylesheet.
package viewer
