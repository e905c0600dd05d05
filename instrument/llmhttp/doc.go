// Package llmhttp records the calls an HTTP client makes to LLM provider
// APIs as conversation spans, without span code at the call site.
//
// Wrap the client's transport with NewTransport and pass the client to the
// provider SDK (openai-go's and anthropic-sdk-go's option.WithHTTPClient, or
// any code that takes an *http.Client):
//
//	client := &http.Client{Transport: llmhttp.NewTransport(nil)}
//
// The transport recognizes OpenAI Chat Completions (/v1/chat/completions,
// and /chat/completions under any base path for OpenAI-compatible servers
// such as Ollama, vLLM, OpenRouter and Groq), OpenAI Responses
// (/v1/responses) and Anthropic Messages (/v1/messages). Each call becomes
// one span of the same shape instrument.Recorder.Call writes: a prompt event
// with the system instructions and messages, and a response event with the
// answer's text and tool calls, model, usage (cached and reasoning tokens
// included) and finish reason, or an error status for transport errors and
// HTTP statuses of 400 and above.
//
// Streamed (server-sent events) responses are assembled into one response
// turn while the client reads them, and the first event that carries answer
// text or a tool call gives the call's time to first token
// (gen_ai.response.time_to_first_chunk). As with otelhttp, the span ends when the
// response body reaches EOF or is closed, whichever comes first, so a client
// must close the body. The bytes the client reads are the provider's bytes,
// unchanged; requests are cloned, never mutated; other requests pass through
// untraced; and a body that cannot be parsed is recorded as far as it can
// be, never failing the call.
//
// The thread, phase, round, speaker and agent come from the request's
// context (instrument.WithThread and friends), so a pipeline sets them once
// on the context it hands the SDK.
package llmhttp
