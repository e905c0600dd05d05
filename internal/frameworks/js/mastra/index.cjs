// Source "mastra": Mastra agents (Agent with a createTool tool; the model
// from @ai-sdk/openai, whose default OpenAI model speaks the Responses
// API) with Mastra's AI tracing exported by its own OTLP exporter,
// @mastra/otel-exporter (custom provider, http/protobuf). The session id
// goes in the run's tracingOptions metadata.
'use strict';
const { S, main, loader, env, lookupWeather } = require('../common.cjs');
const source = 'mastra';
const req = loader(__dirname);
const { Mastra } = req('@mastra/core/mastra');
const { Agent } = req('@mastra/core/agent');
const { createTool } = req('@mastra/core/tools');
const { OtelExporter } = req('@mastra/otel-exporter');
const { createOpenAI } = req('@ai-sdk/openai');
const { z } = req('zod');

main(async () => {
  const openai = createOpenAI({ apiKey: 'fake', baseURL: process.env.OPENAI_BASE_URL });
  const weather = createTool({
    id: S.toolName,
    description: S.toolDescription,
    inputSchema: z.object({ city: z.string().describe('The city.') }),
    execute: async ({ context }) => lookupWeather({ city: context.city }),
  });
  const planner = new Agent({ name: S.plannerName, instructions: S.plannerSystem, model: openai(S.openaiModel), tools: { [S.toolName]: weather } });
  const critic = new Agent({ name: S.criticName, instructions: S.criticSystem, model: openai(S.openaiModel) });
  // OtelExporter loads its OTLP exporter lazily, on the first ended span,
  // and does not wait for that in shutdown(): a short run that ends before
  // the import settles exports nothing. Setting it up first avoids that.
  const exporter = new OtelExporter({
    logLevel: process.env.FW_DEBUG ? 'debug' : 'warn',
    provider: { custom: { endpoint: env('OTEL_EXPORTER_OTLP_ENDPOINT').replace(/\/$/, '') + '/v1/traces', protocol: 'http/protobuf' } },
  });
  const mastra = new Mastra({
    agents: { planner, critic },
    telemetry: { enabled: false },
    observability: {
      configs: {
        otel: {
          serviceName: 'fw-' + source,
          exporters: [exporter],
        },
      },
    },
  });
  await exporter.setup();
  const tracingOptions = { metadata: { sessionId: 'fw-' + source } };
  try {
    const plan = await mastra.getAgent('planner').generate(S.plannerUser, { maxSteps: 2, tracingOptions });
    if (plan.text !== 'Plan: go outside.') throw new Error('unexpected plan ' + JSON.stringify(plan.text));
    const stream = await mastra.getAgent('critic').stream(S.criticUser, { tracingOptions });
    let text = '';
    for await (const delta of stream.textStream) text += delta;
    if (text !== 'Looks fine.') throw new Error('unexpected critique ' + JSON.stringify(text));
  } finally {
    // Span events are handed to exporters without being awaited.
    await new Promise((r) => setTimeout(r, 300));
    await mastra.shutdown();
  }
});
