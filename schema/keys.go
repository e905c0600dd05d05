package schema

// Attribute keys of the OpenTelemetry GenAI semantic conventions. Go's
// semconv packages no longer carry them, so they are declared once, here.
const (
	KeyOperationName     = "gen_ai.operation.name"
	KeyProviderName      = "gen_ai.provider.name"
	KeySystem            = "gen_ai.system" // the older name of gen_ai.provider.name
	KeyRequestModel      = "gen_ai.request.model"
	KeyResponseModel     = "gen_ai.response.model"
	KeyResponseID        = "gen_ai.response.id"
	KeyConversationID    = "gen_ai.conversation.id"
	KeyAgentName         = "gen_ai.agent.name"
	KeyInputTokens       = "gen_ai.usage.input_tokens"
	KeyOutputTokens      = "gen_ai.usage.output_tokens"
	KeyCacheReadTokens   = "gen_ai.usage.cache_read.input_tokens"
	KeyCacheWriteTokens  = "gen_ai.usage.cache_write.input_tokens"
	KeyReasoningTokens   = "gen_ai.usage.reasoning.output_tokens"
	KeyToolName          = "gen_ai.tool.name"
	KeyToolCallID        = "gen_ai.tool.call.id"
	KeyToolCallArguments = "gen_ai.tool.call.arguments"
	KeyToolCallResult    = "gen_ai.tool.call.result"
	KeyErrorType         = "error.type"
	// KeyTimeToFirstChunk is a streamed call's time to first chunk, in
	// seconds (a double): what convtrace stores as its time to first token.
	KeyTimeToFirstChunk = "gen_ai.response.time_to_first_chunk"

	// Content attributes: JSON with parts (gen-ai-input-messages.json,
	// gen-ai-output-messages.json, gen-ai-system-instructions.json).
	KeyInputMessages      = "gen_ai.input.messages"
	KeyOutputMessages     = "gen_ai.output.messages"
	KeySystemInstructions = "gen_ai.system_instructions"

	// KeyCacheCreationTokens is the older name of KeyCacheWriteTokens.
	KeyCacheCreationTokens = "gen_ai.usage.cache_creation.input_tokens"

	// KeyEventContent holds the body of a GenAI event recorded as a span
	// event (as the Azure AI and Semantic Kernel instrumentations do); the
	// collector also files the body of a GenAI log record under it.
	KeyEventContent = "gen_ai.event.content"

	// KeyEventName named a log record's event before OTLP log records had
	// an event_name field.
	KeyEventName = "event.name"
)

// GenAI event names: the per-message events deprecated since semantic
// conventions v1.37, and the event that replaced them. They arrive as span
// events or as log records linked to the span by trace and span id.
const (
	EventSystemMessage    = "gen_ai.system.message"
	EventUserMessage      = "gen_ai.user.message"
	EventAssistantMessage = "gen_ai.assistant.message"
	EventToolMessage      = "gen_ai.tool.message"
	EventChoice           = "gen_ai.choice"
	EventInferenceDetails = "gen_ai.client.inference.operation.details"
)

// Values of gen_ai.operation.name that convtrace writes or reads.
const (
	OperationChat            = "chat"
	OperationTextCompletion  = "text_completion"
	OperationGenerateContent = "generate_content"
	OperationEmbeddings      = "embeddings"
	OperationExecuteTool     = "execute_tool"
	OperationCreateAgent     = "create_agent"
	OperationInvokeAgent     = "invoke_agent"
)

// convtrace's own attribute keys, used only where GenAI has no name.
const (
	KeyThreadID     = "convtrace.thread.id"
	KeyPhase        = "convtrace.phase"
	KeyRound        = "convtrace.round"
	KeySpeaker      = "convtrace.speaker"
	KeyAgent        = "convtrace.agent"
	KeyParentTurnID = "convtrace.parent_turn_id"
	KeySessionID    = "convtrace.session_id"
	KeyProject      = "convtrace.project"
	KeyCostUSD      = "convtrace.cost_usd"
	// KeyInternal (a bool) marks a call as internal: its turns stay in the
	// audit trail but out of a thread's recent context and default view.
	KeyInternal = "convtrace.internal"

	// KeyThreadAttrPrefix begins the thread attributes: a span attribute
	// convtrace.thread.<name> (a task or card id: convtrace.thread.task)
	// is an attribute of the span's thread, the latest value winning. The
	// thread id, KeyThreadID, is not one.
	KeyThreadAttrPrefix = "convtrace.thread."

	// Attributes of the prompt and response events.
	KeyContent          = "convtrace.content"
	KeyContentBytes     = "convtrace.content.bytes"
	KeyContentTruncated = "convtrace.content.truncated"

	// KeyProviderRequestID is the provider's id of a call's request (an
	// Anthropic request-id), beside gen_ai.response.id, the id of its
	// answer.
	KeyProviderRequestID = "convtrace.provider.request_id"

	// KeyRecordedBy, a resource attribute of an agent's own telemetry,
	// says a convtrace run records the agent's calls itself (from its
	// output): its records and spans then make no turns, so each call is
	// stored once. convtrace run puts it in the agent's
	// OTEL_RESOURCE_ATTRIBUTES.
	KeyRecordedBy = "convtrace.recorded_by"

	// KeyRecordedElsewhere (a bool) on a prompt or response event says the
	// call's input, or answer, is already a turn: the call stores none of
	// its own for it. A span whose answer is elsewhere ends with its prompt
	// turn, which carries the span's duration (docs/design/mapping.md).
	KeyRecordedElsewhere = "convtrace.recorded_elsewhere"

	// KeyContentInTurns, on a spans row, says with the value ContentInTurns
	// that the span's turns hold what it said, and the row does not: its
	// content attributes were left out (the rule "Content stored once").
	KeyContentInTurns = "convtrace.content"
	ContentInTurns    = "turns"
)

// Event names written by package instrument.
const (
	EventPrompt   = "gen_ai.prompt"
	EventResponse = "gen_ai.response"
)

// Resource attribute naming the service, the project when convtrace.project
// is absent.
const KeyServiceName = "service.name"

// Turns between a call's prompt and its final answer, such as what a CLI
// agent says along the way (system, reasoning, unknown lines, warnings): a
// convtrace.turn event on the call's span names its role, carries its
// content like the prompt and response events, and may carry a code.
const (
	EventTurn = "convtrace.turn"
	KeyRole   = "convtrace.role"
	KeyCode   = "convtrace.code"
	// KeyRejectedSession, on a warning turn, names a session the agent
	// refused to resume: it is no longer the thread's current session.
	KeyRejectedSession = "convtrace.session.rejected"
)

// EventContextReset marks, on a span of its own (instrument's
// Recorder.ResetContext), that the span's thread's recent context starts
// anew at the event's time: the collector stores it as a context_reset
// turn (RoleContextReset).
const EventContextReset = "convtrace.context_reset"
