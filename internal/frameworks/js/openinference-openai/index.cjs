// Source "openinference-openai": Arize OpenInference's OpenAI
// instrumentation, a plain OpenAI client and a manual tool loop. The agents
// and the tool run in OpenInference AGENT and TOOL spans (traceAgent,
// traceTool of @arizeai/openinference-core); the session id is set with
// setSession, which puts session.id on every span under it.
'use strict';
const { S, setupOTel, main, loader, runOpenAIChat } = require('../common.cjs');
const source = 'openinference-openai';
const req = loader(__dirname);
const { OpenAIInstrumentation } = req('@arizeai/openinference-instrumentation-openai');

const otel = setupOTel(__dirname, { source, instrumentations: [new OpenAIInstrumentation()] });
const { api } = otel;
const { setSession, traceAgent, traceTool } = req('@arizeai/openinference-core');
const OpenAI = req('openai');

main(async () => {
  const client = new OpenAI({ apiKey: 'fake', baseURL: process.env.OPENAI_BASE_URL });
  try {
    await api.context.with(setSession(api.context.active(), { sessionId: 'fw-' + source }), () => runOpenAIChat(client, {
      agent: (name, fn) => traceAgent(fn, { name, attributes: { 'agent.name': name } })(),
      tool: (name, args, fn) => traceTool(async (_args) => fn(), { name, attributes: { 'tool.name': name, 'tool.parameters': args } })(args),
    }));
  } finally {
    await otel.shutdown();
  }
});
