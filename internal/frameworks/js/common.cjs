// Shared helpers of the source scripts: the scenario's constants, the
// lookup_weather tool, and an OTel SDK (traces and logs over OTLP/HTTP
// protobuf to OTEL_EXPORTER_OTLP_ENDPOINT) built from the modules a
// source's own workspace resolves.
'use strict';
const path = require('node:path');

const S = {
  toolName: 'lookup_weather',
  toolDescription: 'Looks up the weather of a city.',
  toolResult: 'sunny, 21C',
  plannerName: 'planner',
  plannerSystem: 'You plan.',
  plannerUser: 'Plan a day in Paris.',
  criticName: 'critic',
  criticSystem: 'You critique.',
  criticUser: 'Critique the plan.',
  openaiModel: 'gpt-4o-mini',
  anthropicModel: 'claude-3-5-haiku-20241022',
};

function lookupWeather(args) {
  const a = typeof args === 'string' ? JSON.parse(args) : args;
  if (!a || a.city !== 'Paris') throw new Error('lookup_weather: unexpected arguments ' + JSON.stringify(args));
  return S.toolResult;
}

const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string', description: 'The city.' } },
  required: ['city'],
  additionalProperties: false,
};

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(name + ' is not set');
  return v;
}

// loader returns require() that resolves from a source's own folder.
function loader(dir) {
  return (name) => require(require.resolve(name, { paths: [dir] }));
}

// setupOTel starts a tracer provider (and a logger provider when logs is
// true) exporting to OTEL_EXPORTER_OTLP_ENDPOINT, registers the given
// instrumentations, and returns { tracer, shutdown }.
function setupOTel(dir, { source, logs = false, instrumentations = [], spanProcessors = [] }) {
  const req = loader(dir);
  const api = req('@opentelemetry/api');
  const { NodeTracerProvider } = req('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor } = req('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = req('@opentelemetry/exporter-trace-otlp-proto');
  const { resourceFromAttributes } = req('@opentelemetry/resources');
  const { registerInstrumentations } = req('@opentelemetry/instrumentation');
  const base = env('OTEL_EXPORTER_OTLP_ENDPOINT').replace(/\/$/, '');
  const resource = resourceFromAttributes({ 'service.name': 'fw-' + source });
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: base + '/v1/traces' })),
      ...spanProcessors,
    ],
  });
  provider.register();
  let loggerProvider;
  if (logs) {
    const { LoggerProvider, BatchLogRecordProcessor } = req('@opentelemetry/sdk-logs');
    const { OTLPLogExporter } = req('@opentelemetry/exporter-logs-otlp-proto');
    const apiLogs = req('@opentelemetry/api-logs');
    loggerProvider = new LoggerProvider({
      resource,
      processors: [newBatchLogProcessor(BatchLogRecordProcessor, new OTLPLogExporter({ url: base + '/v1/logs' }))],
    });
    apiLogs.logs.setGlobalLoggerProvider(loggerProvider);
  }
  if (instrumentations.length) registerInstrumentations({ instrumentations, tracerProvider: provider, loggerProvider });
  return {
    api,
    tracer: api.trace.getTracer('convtrace-fw-' + source),
    async shutdown() {
      await provider.forceFlush();
      await provider.shutdown();
      if (loggerProvider) {
        await loggerProvider.forceFlush();
        await loggerProvider.shutdown();
      }
    },
  };
}

// main runs fn and exits non-zero on any error, after fn's own cleanup.
function main(fn) {
  fn().then(
    () => process.exit(0),
    (err) => {
      console.error(err && err.stack ? err.stack : err);
      process.exit(1);
    },
  );
}

module.exports = { S, lookupWeather, weatherSchema, env, loader, setupOTel, main, path };

// runOpenAIChat runs the scenario with a plain OpenAI client and a manual
// tool loop. wrap.agent(name, fn) and wrap.tool(name, args, fn) let a
// source put each agent and the tool run in its framework's own span or
// context. The planner's calls are not streamed; the critic's is, with
// usage in the stream.
async function runOpenAIChat(client, wrap = {}) {
  const agent = wrap.agent || ((name, fn) => fn());
  const tool = wrap.tool || ((name, args, fn) => fn());
  const tools = [{
    type: 'function',
    function: { name: S.toolName, description: S.toolDescription, parameters: weatherSchema },
  }];
  const plan = await agent(S.plannerName, async () => {
    const messages = [
      { role: 'system', content: S.plannerSystem },
      { role: 'user', content: S.plannerUser },
    ];
    const first = await client.chat.completions.create({ model: S.openaiModel, messages, tools });
    const msg = first.choices[0].message;
    if (!msg.tool_calls || msg.tool_calls.length !== 1) throw new Error('expected one tool call, got ' + JSON.stringify(msg));
    messages.push(msg);
    const call = msg.tool_calls[0];
    const result = await tool(call.function.name, call.function.arguments, async () => lookupWeather(call.function.arguments));
    messages.push({ role: 'tool', tool_call_id: call.id, content: result });
    const second = await client.chat.completions.create({ model: S.openaiModel, messages, tools });
    return second.choices[0].message.content;
  });
  if (plan !== 'Plan: go outside.') throw new Error('unexpected plan ' + JSON.stringify(plan));
  const critique = await agent(S.criticName, async () => {
    const stream = await client.chat.completions.create({
      model: S.openaiModel,
      messages: [
        { role: 'system', content: S.criticSystem },
        { role: 'user', content: S.criticUser },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const chunk of stream) {
      if (chunk.choices && chunk.choices[0] && chunk.choices[0].delta && chunk.choices[0].delta.content) text += chunk.choices[0].delta.content;
    }
    return text;
  });
  if (critique !== 'Looks fine.') throw new Error('unexpected critique ' + JSON.stringify(critique));
  return { plan, critique };
}

module.exports.runOpenAIChat = runOpenAIChat;

// newBatchLogProcessor builds a BatchLogRecordProcessor across sdk-logs
// versions: (exporter, config) before 0.220, ({ exporter }) since.
function newBatchLogProcessor(Ctor, exporter) {
  return Ctor.length >= 2 ? new Ctor(exporter) : new Ctor({ exporter });
}
module.exports.newBatchLogProcessor = newBatchLogProcessor;
