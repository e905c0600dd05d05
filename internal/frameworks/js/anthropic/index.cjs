// Source "anthropic": the Anthropic SDK (which emits its own OTel call
// spans when a tracer provider is registered; content mode on) under
// Traceloop OpenLLMetry's Anthropic instrumentation through
// @traceloop/node-server-sdk, with a manual tool loop. Agents and the tool
// run in withAgent / withTool with the conversation id in their config.
'use strict';
const { S, main, loader, env, lookupWeather, weatherSchema } = require('../common.cjs');
const source = 'anthropic';
const req = loader(__dirname);
const traceloop = req('@traceloop/node-server-sdk');
const Anthropic = req('@anthropic-ai/sdk').Anthropic;

traceloop.initialize({
  appName: 'fw-' + source,
  baseUrl: env('OTEL_EXPORTER_OTLP_ENDPOINT'),
  apiKey: '',
  traceContent: true,
  silenceInitializationMessage: true,
  instrumentModules: { anthropic: req('@anthropic-ai/sdk') },
});

main(async () => {
  const client = new Anthropic({
    apiKey: 'fake',
    baseURL: env('ANTHROPIC_BASE_URL'),
    openTelemetry: { traces: { enabled: true, contentMode: 'content' } },
  });
  const conversationId = 'fw-' + source;
  const tools = [{ name: S.toolName, description: S.toolDescription, input_schema: weatherSchema }];
  try {
    const plan = await traceloop.withAgent({ name: S.plannerName, conversationId }, async () => {
      const messages = [{ role: 'user', content: S.plannerUser }];
      const first = await client.messages.create({ model: S.anthropicModel, max_tokens: 256, system: S.plannerSystem, messages, tools });
      const use = first.content.find((b) => b.type === 'tool_use');
      if (!use) throw new Error('expected a tool_use, got ' + JSON.stringify(first.content));
      messages.push({ role: 'assistant', content: first.content });
      const result = await traceloop.withTool({ name: use.name, conversationId }, async (input) => lookupWeather(input), use.input);
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: result }] });
      const second = await client.messages.create({ model: S.anthropicModel, max_tokens: 256, system: S.plannerSystem, messages, tools });
      return second.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    });
    if (plan !== 'Plan: go outside.') throw new Error('unexpected plan ' + JSON.stringify(plan));
    const critique = await traceloop.withAgent({ name: S.criticName, conversationId }, async () => {
      const stream = await client.messages.create({
        model: S.anthropicModel, max_tokens: 256, system: S.criticSystem, stream: true,
        messages: [{ role: 'user', content: S.criticUser }],
      });
      let text = '';
      for await (const ev of stream) {
        if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
      }
      return text;
    });
    if (critique !== 'Looks fine.') throw new Error('unexpected critique ' + JSON.stringify(critique));
  } finally {
    await traceloop.forceFlush();
  }
});
