// Package mcpserver lets an agent read its own history over the Model
// Context Protocol: five read-only tools (list_threads, get_thread,
// search, recent_context, cost) over the viewer's queries (package
// store), so that an answer says what the viewer's page or API says.
// WithWrites adds the only two that write, reset_context and set_title
// (convtrace mcp --allow-writes): an agent given the server to read its
// history changes nothing unless its owner chose so.
//
// Answers are bounded: each tool caps how many items it returns and cuts
// long texts, saying what it cut and how to ask for more, and no answer
// exceeds MaxAnswerBytes on the wire, an error's included. The tools'
// input schemas bound every argument before a query runs. NewTransport
// carries the protocol one message a line, as `convtrace mcp` does on
// stdio, and answers a bad line (not JSON, over MaxFrameBytes, not one
// JSON-RPC message) with a JSON-RPC error instead of ending the session.
package mcpserver
