// Package genai is convtrace's one model of chat messages, from the page a
// prompt is recorded on to the page it is shown on.
//
// Every source's messages are stored in one shape, the OTel GenAI input and
// output messages JSON (gen-ai-input-messages.json and
// gen-ai-output-messages.json of the semantic conventions):
//
//	[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},
//	 {"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]},
//	 {"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}],"finish_reason":"tool_calls"},
//	 {"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"rainy, 14°C"}]}]
//
// Parse reads that shape and every shape a source records (Chat
// Completions, Anthropic Messages, the Vercel AI SDK's parts); Render
// writes the stored shape; Message.Text is what a page shows of a message.
// Tool call arguments that are JSON are stored as JSON with sorted keys,
// whatever form the source gave them in, so the same call reads the same
// from every convention and every transport.
//
// The package imports nothing but the standard library.
//
// Its place in the whole is described in docs/architecture.md.
package genai
