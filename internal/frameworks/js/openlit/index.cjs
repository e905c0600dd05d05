// Source "openlit": openlit's own SDK (its OpenAI wrapper, traces, logs
// events and metrics over OTLP/HTTP), a plain OpenAI client and a manual
// tool loop. The agent name and the conversation id are custom span
// attributes set with openlit.usingAttributes around each agent.
'use strict';
const { S, main, loader, env, runOpenAIChat } = require('../common.cjs');
const source = 'openlit';
const req = loader(__dirname);
const openlitMod = req('openlit');
const openlit = openlitMod.default || openlitMod;
const OpenAI = req('openai');

openlit.init({
  applicationName: 'fw-' + source,
  environment: 'test',
  otlpEndpoint: env('OTEL_EXPORTER_OTLP_ENDPOINT'),
  captureMessageContent: true,
  pricingJson: {},
  instrumentations: { openai: OpenAI },
});

main(async () => {
  const client = new OpenAI({ apiKey: 'fake', baseURL: process.env.OPENAI_BASE_URL });
  try {
    await runOpenAIChat(client, {
      agent: (name, fn) => openlit.usingAttributes({ 'gen_ai.agent.name': name, 'gen_ai.conversation.id': 'fw-' + source }, fn),
    });
  } finally {
    await shutdown();
  }
});

// shutdown flushes openlit's tracer, logger and meter providers.
async function shutdown() {
  const api = req('@opentelemetry/api');
  const apiLogs = req('@opentelemetry/api-logs');
  const providers = [api.trace.getTracerProvider(), apiLogs.logs.getLoggerProvider(), api.metrics.getMeterProvider()];
  for (const p of providers) {
    const d = p && typeof p.getDelegate === 'function' ? p.getDelegate() : p;
    if (d && typeof d.forceFlush === 'function') await d.forceFlush();
    if (d && typeof d.shutdown === 'function') await d.shutdown();
  }
}
