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
 */

import { type OpenAIClient, OpenAIProvider } from "@openai/agents";
import { requireRecorder } from "../adapters/index.js";
import { type CreateFetchOptions, createFetch, type Recorder } from "../index.js";

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
