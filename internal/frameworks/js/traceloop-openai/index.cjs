// Source "traceloop-openai": Traceloop OpenLLMetry's OpenAI
// instrumentation through @traceloop/node-server-sdk, a plain OpenAI client
// and a manual tool loop. Agents and the tool run in withAgent / withTool,
// with the conversation id in their config (the SDK's conversationId).
'use strict';
const { S, main, loader, env, runOpenAIChat } = require('../common.cjs');
const source = 'traceloop-openai';
const req = loader(__dirname);
const traceloop = req('@traceloop/node-server-sdk');
const OpenAI = req('openai').OpenAI;

traceloop.initialize({
  appName: 'fw-' + source,
  baseUrl: env('OTEL_EXPORTER_OTLP_ENDPOINT'),
  apiKey: '',
  disableBatch: false,
  traceContent: true,
  silenceInitializationMessage: true,
  instrumentModules: { openAI: OpenAI },
});

main(async () => {
  const client = new OpenAI({ apiKey: 'fake', baseURL: process.env.OPENAI_BASE_URL });
  const conversationId = 'fw-' + source;
  try {
    await runOpenAIChat(client, {
      agent: (name, fn) => traceloop.withAgent({ name, conversationId }, fn),
      tool: (name, args, fn) => traceloop.withTool({ name, conversationId }, async (_input) => fn(), JSON.parse(args)),
    });
  } finally {
    await traceloop.forceFlush();
  }
});
