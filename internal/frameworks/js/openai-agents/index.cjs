// Source "openai-agents": the OpenAI Agents SDK (Agent, tool, run; the
// Responses API) traced by Arize OpenInference's OpenAI Agents
// instrumentation in its exclusive mode, which replaces the SDK's own
// exporter to OpenAI with the OpenInference processor. Both runs share one
// trace made with withTrace, whose groupId (the SDK's id for a
// conversation's traces) is the session id.
'use strict';
const { S, setupOTel, main, loader, lookupWeather } = require('../common.cjs');
const source = 'openai-agents';
const req = loader(__dirname);
const otel = setupOTel(__dirname, { source });
const agents = req('@openai/agents');
const { OpenAIAgentsInstrumentation } = req('@arizeai/openinference-instrumentation-openai-agents');
new OpenAIAgentsInstrumentation().manuallyInstrument(agents);
const OpenAI = req('openai').OpenAI;
const { z } = req('zod');

main(async () => {
  agents.setDefaultOpenAIClient(new OpenAI({ apiKey: 'fake', baseURL: process.env.OPENAI_BASE_URL }));
  const weather = agents.tool({
    name: S.toolName,
    description: S.toolDescription,
    parameters: z.object({ city: z.string().describe('The city.') }),
    execute: async ({ city }) => lookupWeather({ city }),
  });
  const planner = new agents.Agent({ name: S.plannerName, instructions: S.plannerSystem, model: S.openaiModel, tools: [weather] });
  const critic = new agents.Agent({ name: S.criticName, instructions: S.criticSystem, model: S.openaiModel });
  try {
    await agents.withTrace('fw-' + source, async () => {
      const plan = await agents.run(planner, S.plannerUser);
      if (plan.finalOutput !== 'Plan: go outside.') throw new Error('unexpected plan ' + JSON.stringify(plan.finalOutput));
      const stream = await agents.run(critic, S.criticUser, { stream: true });
      let text = '';
      for await (const chunk of stream.toTextStream()) text += chunk;
      await stream.completed;
      if (text !== 'Looks fine.') throw new Error('unexpected critique ' + JSON.stringify(text));
    }, { groupId: 'fw-' + source });
  } finally {
    await agents.getGlobalTraceProvider().forceFlush();
    await otel.shutdown();
  }
});
