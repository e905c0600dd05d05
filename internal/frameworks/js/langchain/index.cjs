// Source "langchain": LangChain JS (ChatOpenAI with bindTools, a tool()
// and RunnableLambda agents named planner and critic) traced by Arize
// OpenInference's LangChain instrumentation. The session id is LangChain
// run metadata (session_id), which OpenInference turns into session.id.
'use strict';
const { S, setupOTel, main, loader, lookupWeather } = require('../common.cjs');
const source = 'langchain';
const req = loader(__dirname);
const { LangChainInstrumentation } = req('@arizeai/openinference-instrumentation-langchain');

const otel = setupOTel(__dirname, { source });
const lcInstrumentation = new LangChainInstrumentation();
lcInstrumentation.manuallyInstrument(req('@langchain/core/callbacks/manager'));

const { ChatOpenAI } = req('@langchain/openai');
const { tool } = req('@langchain/core/tools');
const { RunnableLambda } = req('@langchain/core/runnables');
const { SystemMessage, HumanMessage } = req('@langchain/core/messages');
const { z } = req('zod');

main(async () => {
  const model = new ChatOpenAI({
    model: S.openaiModel,
    apiKey: 'fake',
    configuration: { baseURL: process.env.OPENAI_BASE_URL },
    maxRetries: 0,
  });
  const weather = tool(async ({ city }) => lookupWeather({ city }), {
    name: S.toolName,
    description: S.toolDescription,
    schema: z.object({ city: z.string().describe('The city.') }),
  });
  const planner = RunnableLambda.from(async (input, config) => {
    const withTools = model.bindTools([weather]);
    const messages = [new SystemMessage(S.plannerSystem), new HumanMessage(input)];
    const first = await withTools.invoke(messages, config);
    if (!first.tool_calls || first.tool_calls.length !== 1) throw new Error('expected one tool call, got ' + JSON.stringify(first));
    messages.push(first);
    messages.push(await weather.invoke(first.tool_calls[0], config));
    const second = await withTools.invoke(messages, config);
    return second.content;
  }).withConfig({ runName: S.plannerName });
  const critic = RunnableLambda.from(async (input, config) => {
    let text = '';
    for await (const chunk of await model.stream([new SystemMessage(S.criticSystem), new HumanMessage(input)], config)) {
      text += chunk.content;
    }
    return text;
  }).withConfig({ runName: S.criticName });
  const config = { metadata: { session_id: 'fw-' + source } };
  try {
    const plan = await planner.invoke(S.plannerUser, config);
    if (plan !== 'Plan: go outside.') throw new Error('unexpected plan ' + JSON.stringify(plan));
    const critique = await critic.invoke(S.criticUser, config);
    if (critique !== 'Looks fine.') throw new Error('unexpected critique ' + JSON.stringify(critique));
  } finally {
    await otel.shutdown();
  }
});
