// Package mcpserver lets an agent read its own history over the Model
// Context Protocol: five read-only tools (list_threads, get_thread,
// search, recent_context, cost) over the viewer's queries (package
// viewer/query), so that an answer says what the viewer's page or API says.
//
// Answers are bounded: each tool caps how many items it returns and cuts
// long texts, saying what it cut and how to ask for more, and no answer
// exceeds MaxAnswerBytes on the wire. `convtrace mcp` serves it on stdio.
package mcpserver
