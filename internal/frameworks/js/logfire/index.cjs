// Source "logfire": Pydantic Logfire's Node SDK with its default Node
// auto-instrumentations (which include the OTel OpenAI instrumentation),
// sending to OTEL_EXPORTER_OTLP_ENDPOINT as if it were Logfire (a token and
// advanced.baseUrl), a plain OpenAI client and a manual tool loop. Agents
// and the tool run in logfire.span; the session id is an attribute of them.
'use strict';
const { S, main, loader, env, runOpenAIChat } = require('../common.cjs');
const source = 'logfire';
const req = loader(__dirname);
const logfireMod = req('@pydantic/logfire-node');
const logfire = logfireMod.default || logfireMod;

logfire.configure({
  serviceName: 'fw-' + source,
  token: 'fake-logfire-token',
  sendToLogfire: true,
  advanced: { baseUrl: env('OTEL_EXPORTER_OTLP_ENDPOINT') },
  console: false,
});
const OpenAI = req('openai');

main(async () => {
  const client = new OpenAI({ apiKey: 'fake', baseURL: process.env.OPENAI_BASE_URL });
  const session = 'fw-' + source;
  try {
    await runOpenAIChat(client, {
      agent: (name, fn) => logfire.span('agent {agent_name}', {
        attributes: { agent_name: name, 'gen_ai.agent.name': name, 'session.id': session, 'gen_ai.conversation.id': session },
        callback: () => fn(),
      }),
      tool: (name, args, fn) => logfire.span('tool {tool_name}', {
        attributes: { tool_name: name, 'gen_ai.tool.name': name, 'gen_ai.tool.call.arguments': args, 'gen_ai.conversation.id': session },
        callback: async (span) => {
          const r = await fn();
          span.setAttribute('gen_ai.tool.call.result', r);
          return r;
        },
      }),
    });
  } finally {
    await logfire.shutdown({ flush: true });
  }
});
