// Source "vercel-ai": the Vercel AI SDK (ai + @ai-sdk/openai, whose default
// OpenAI model speaks the Responses API) with experimental_telemetry on.
// The agents are ToolLoopAgents with ids planner and critic; the telemetry
// functionId names the agent and its metadata carries the session id.
'use strict';
const { S, setupOTel, main, loader, lookupWeather } = require('../common.cjs');
const source = 'vercel-ai';
const req = loader(__dirname);
const otel = setupOTel(__dirname, { source });
const { ToolLoopAgent, tool, stepCountIs } = req('ai');
const { createOpenAI } = req('@ai-sdk/openai');
const { z } = req('zod');

main(async () => {
  const openai = createOpenAI({ apiKey: 'fake', baseURL: process.env.OPENAI_BASE_URL });
  const telemetry = (functionId) => ({
    isEnabled: true,
    recordInputs: true,
    recordOutputs: true,
    functionId,
    metadata: { sessionId: 'fw-' + source, agent: functionId },
  });
  const planner = new ToolLoopAgent({
    id: S.plannerName,
    model: openai(S.openaiModel),
    instructions: S.plannerSystem,
    tools: {
      [S.toolName]: tool({
        description: S.toolDescription,
        inputSchema: z.object({ city: z.string().describe('The city.') }),
        execute: async ({ city }) => lookupWeather({ city }),
      }),
    },
    stopWhen: stepCountIs(2),
    experimental_telemetry: telemetry(S.plannerName),
  });
  const critic = new ToolLoopAgent({
    id: S.criticName,
    model: openai(S.openaiModel),
    instructions: S.criticSystem,
    experimental_telemetry: telemetry(S.criticName),
  });
  try {
    const plan = await planner.generate({ prompt: S.plannerUser });
    if (plan.text !== 'Plan: go outside.') throw new Error('unexpected plan ' + JSON.stringify(plan.text));
    const stream = await critic.stream({ prompt: S.criticUser });
    let text = '';
    for await (const delta of stream.textStream) text += delta;
    if (text !== 'Looks fine.') throw new Error('unexpected critique ' + JSON.stringify(text));
  } finally {
    await otel.shutdown();
  }
});
