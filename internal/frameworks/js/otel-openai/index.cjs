// Source "otel-openai": the official OTel OpenAI instrumentation
// (@opentelemetry/instrumentation-openai) with content capture on, a plain
// OpenAI client and a manual tool loop. Agents and the tool run in GenAI
// semantic-convention spans (invoke_agent / execute_tool) made by hand;
// the conversation id is gen_ai.conversation.id on the agent spans.
'use strict';
const { S, setupOTel, main, loader, runOpenAIChat } = require('../common.cjs');
const source = 'otel-openai';
const req = loader(__dirname);
const { OpenAIInstrumentation } = req('@opentelemetry/instrumentation-openai');

const otel = setupOTel(__dirname, {
  source,
  logs: true,
  instrumentations: [new OpenAIInstrumentation({ captureMessageContent: true })],
});
const { api, tracer } = otel;
const OpenAI = req('openai');

main(async () => {
  const client = new OpenAI({ apiKey: 'fake', baseURL: process.env.OPENAI_BASE_URL });
  try {
    await runOpenAIChat(client, {
      agent: (name, fn) => tracer.startActiveSpan('invoke_agent ' + name, {
        kind: api.SpanKind.INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': name,
          'gen_ai.provider.name': 'openai',
          'gen_ai.conversation.id': 'fw-' + source,
        },
      }, async (span) => { try { return await fn(); } finally { span.end(); } }),
      tool: (name, args, fn) => tracer.startActiveSpan('execute_tool ' + name, {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': name,
          'gen_ai.tool.type': 'function',
          'gen_ai.tool.call.id': 'call_weather_1',
          'gen_ai.tool.call.arguments': args,
          'gen_ai.conversation.id': 'fw-' + source,
        },
      }, async (span) => {
        try {
          const r = await fn();
          span.setAttribute('gen_ai.tool.call.result', r);
          return r;
        } finally { span.end(); }
      }),
    });
  } finally {
    await otel.shutdown();
  }
});
