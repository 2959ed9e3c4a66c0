/**
 * `invocache/openai-agents`: the OpenAI Agents SDK (`@openai/agents`) over
 * invocache. The SDK talks to the model through an OpenAI client; this gives
 * it one whose `fetch` is invocache's `createFetch`, so every Responses (or
 * Chat Completions) call of every agent, turn, tool round and handoff is an
 * invocation: recorded once, replayed after, keyed like any `createFetch`
 * call (docs/integrations.md, "createFetch: what it records").
 *
 * Role, task and attempt come from `withInvocation` around `run()`; a run of
 * the agent loop becomes one trajectory when it runs inside `recorder.run`.
 * The SDK's tracing never reaches the model request body, and its retries
 * repeat the same body, so neither changes an identity.
 *
 * Function tools: `invocacheTool` is the SDK's `tool()` with its `execute`
 * behind invocache's tool wrapper, so a replayed run runs no tool either.
 */

import {
  type OpenAIClient,
  OpenAIProvider,
  type ToolInputParameters,
  type ToolOptions,
  type ToolOutputSchema,
  tool,
  type UnknownContext,
} from "@openai/agents";
import { requireRecorder } from "../adapters/index.js";
import {
  type CreateFetchOptions,
  createFetch,
  type Recorder,
  type ToolArgRules,
  type ToolPolicy,
  wrapTool,
} from "../index.js";

/**
 * What is needed of the OpenAI client: `withOptions` (openai v6). Structural,
 * so a client from another copy of `openai` than the SDK's own is accepted.
 */
export interface OpenAIClientLike {
  withOptions(options: { fetch: typeof globalThis.fetch }): object;
}

/** Options of {@link invocacheModelProvider}. */
export interface InvocacheModelProviderOptions {
  recorder: Recorder;
  /** The OpenAI client the agents would use (`new OpenAI({ apiKey, baseURL })`). */
  client: OpenAIClientLike;
  /** Responses API (default, as the SDK) or Chat Completions. */
  useResponses?: boolean | undefined;
  /** Passed to `createFetch`: the upstream `fetch` (default `globalThis.fetch`), volatile fields, completeness, stream timing. */
  fetchOptions?: Omit<CreateFetchOptions, "recorder"> | undefined;
}

/**
 * A model provider for `new Runner({ modelProvider })` whose model calls go
 * through invocache.
 *
 * @example
 * import { Agent, Runner } from "@openai/agents";
 * import OpenAI from "openai";
 * const runner = new Runner({ modelProvider: invocacheModelProvider({ recorder, client: new OpenAI() }) });
 * const result = await withInvocation({ role: "triage" }, () => runner.run(agent, "Where is order 42?"));
 */
export function invocacheModelProvider(options: InvocacheModelProviderOptions): OpenAIProvider {
  const recorder = requireRecorder(options, "invocacheModelProvider", "{ recorder, client }");
  return new OpenAIProvider({
    openAIClient: invocacheClient({ ...options, recorder }),
    useResponses: options.useResponses ?? true,
  });
}

/**
 * The same OpenAI client with invocache's `createFetch` in front of its own
 * fetch (for `setDefaultOpenAIClient`, or anything else that takes a client).
 *
 * @example
 * setDefaultOpenAIClient(invocacheClient({ recorder, client: new OpenAI() }));
 */
export function invocacheClient(options: InvocacheModelProviderOptions): OpenAIClient {
  const recorder = requireRecorder(options, "invocacheClient", "{ recorder, client }");
  const { client } = options;
  if (client === null || typeof client !== "object" || typeof client.withOptions !== "function") {
    throw new TypeError(
      "invocacheModelProvider: options.client must be an OpenAI client (new OpenAI({ apiKey, baseURL }))",
    );
  }
  // withOptions keeps the client's key, base URL and retries; only fetch changes.
  return client.withOptions({
    fetch: createFetch({ ...options.fetchOptions, recorder }),
  }) as OpenAIClient;
}

/** Options of {@link invocacheTool}: the recorder and the tool's side-effect hints (docs/tools.md). */
export interface InvocacheToolOptions extends ToolPolicy {
  recorder: Recorder;
  /** A toolbox name, part of the identity. Default "openai-agents". */
  server?: string | undefined;
  /** Which normalization rules the input goes through; default "roots": the input is data, kept exact but for the checkout/home/tmp roots. */
  argRules?: ToolArgRules | undefined;
}

/** What the SDK hands `execute` besides the input: the abort signal is honoured. */
interface ExecuteDetails {
  signal?: AbortSignal | undefined;
}

/**
 * The SDK's `tool({ … })` with `execute` recorded and replayed through
 * `wrapTool`: same recorder, same run scope (inside `recorder.run` the tool
 * call is a step of the run's trajectory, between the model calls). The
 * identity is the tool name (as the SDK spells it), the toolbox and the
 * parsed input, never the call id or the run context. Input parsing,
 * guardrails, timeouts and the error function stay the SDK's: a tool that
 * throws is not recorded, and the model sees the SDK's error text as usual.
 *
 * @example
 * const lookupOrder = invocacheTool(
 *   { name: "lookup_order", description: "Look an order up", parameters: z.object({ order: z.string() }),
 *     execute: async ({ order }) => orders.get(order) },
 *   { recorder, readOnlyHint: true },
 * );
 * new Agent({ name: "Billing agent", tools: [lookupOrder] });
 */
export function invocacheTool<
  TParameters extends ToolInputParameters = undefined,
  Context = UnknownContext,
  Result = string,
  TOutputSchema extends ToolOutputSchema | undefined = undefined,
>(
  options: ToolOptions<TParameters, Context, TOutputSchema>,
  record: InvocacheToolOptions,
): ReturnType<typeof tool<TParameters, Context, Result, TOutputSchema>> {
  const recorder = requireRecorder(record, "invocacheTool", "(toolOptions, { recorder })");
  if (options === null || typeof options !== "object" || typeof options.execute !== "function") {
    throw new TypeError(
      "invocacheTool: the first argument must be the options of the SDK's tool(), with an execute function",
    );
  }
  const { server, recorder: _recorder, argRules, ...policy } = record;
  const execute = options.execute as (input: unknown, ...rest: unknown[]) => Promise<unknown>;
  // tool() decides the name (it normalizes it); the wrapper is made once the name is known.
  let recorded: ((input: unknown, ...rest: unknown[]) => Promise<unknown>) | undefined;
  const made = tool<TParameters, Context, Result, TOutputSchema>({
    ...options,
    execute: ((input: unknown, ...rest: unknown[]) =>
      (recorded as NonNullable<typeof recorded>)(input, ...rest)) as never,
  } as ToolOptions<TParameters, Context, TOutputSchema>);
  recorded = wrapTool(execute, {
    ...policy,
    name: made.name,
    recorder,
    server: server ?? "openai-agents",
    args: (input: unknown) => ({ input }),
    argRules,
    signal: (_input: unknown, _context?: unknown, details?: unknown) =>
      (details as ExecuteDetails | undefined)?.signal,
  });
  return made;
}
