/**
 * `invocache/langchain`: LangChain.js chat models and LLMs over invocache.
 *
 * `new InvocacheCache({ recorder })` is a `BaseCache` from `@langchain/core`,
 * in the shape of LangChain's own `new RedisCache(client)`: pass it as a
 * model's `cache` and every `invoke`/`generate` is recorded and replayed by
 * the recorder (identity, run scopes, RELOOP, stores, miss reports).
 *
 * What is in the key (docs/integrations.md, "LangChain.js"): role, task,
 * attempt, project root and input artifacts from `withInvocation`; the prompt
 * LangChain hands the cache (the conversation as one buffer string); the
 * model and params parsed out of the `llm_string` (so bound tools and the
 * response format, which LangChain puts there, count; credentials and
 * transport settings do not); and `":via": "langchain-cache"`.
 *
 * LangChain asks the cache in two steps (`lookup`, then `update` after the
 * model answered a miss). A lookup is a recorder call whose upstream is
 * "not recorded yet": on a miss it fails, so nothing is stored and, in a
 * run, its occurrence is given back; `update` is the same call again with
 * the model's answer as upstream, which the recorder stores. In replay a
 * miss is the recorder's `ReplayMissError`, thrown from the model call.
 */
import {
  BaseCache,
  deserializeStoredGeneration,
  serializeGeneration,
} from "@langchain/core/caches";
import type { Generation } from "@langchain/core/outputs";
import { invocationCall, requireRecorder } from "../adapters/index.js";
import type { CallOptions, InvocationRequest, JsonValue, Recorder } from "../index.js";
import { IntegrationError } from "./errors.js";
import { describeLlmString, notSerialized } from "./llm-string.js";

export { IntegrationError } from "./errors.js";
export { describeLlmString, LLM_STRING_IGNORED, type LlmStringParts } from "./llm-string.js";

/** Options of {@link InvocacheCache}. */
export interface InvocacheCacheOptions {
  recorder: Recorder;
}

/** A stored generation: LangChain's own stored form plus the generation info. */
interface StoredGenerationJson {
  text: string;
  message?: JsonValue;
  generationInfo?: JsonValue;
}

/** Lookups that missed and await their update, at most. */
const MAX_PENDING = 1024;

/** The failure of a lookup's upstream: "not recorded yet". Never leaves this module. */
class NotRecorded extends Error {}

/**
 * A LangChain `BaseCache` backed by an invocache recorder.
 *
 * @example
 * import { ChatOpenAI } from "@langchain/openai";
 * import { InvocacheCache } from "invocache/langchain";
 * const model = new ChatOpenAI({ model: "gpt-5", cache: new InvocacheCache({ recorder }) });
 * const answer = await withInvocation({ role: "reviewer" }, () => model.invoke("Review it"));
 */
export class InvocacheCache extends BaseCache<Generation[]> {
  readonly recorder: Recorder;
  /**
   * When each lookup that missed returned: LangChain calls the model between
   * it and `update`, so that gap is the model time the entry records (not
   * update's own ~0.1 ms). Bounded: a lookup never followed by an update
   * (the model failed) is dropped with the oldest.
   */
  readonly #missedAt = new Map<string, number>();

  constructor(options: InvocacheCacheOptions) {
    super();
    this.recorder = requireRecorder(options, "InvocacheCache", "{ recorder }");
  }

  /** The recorded generations for this prompt and model, or null to let LangChain call the model. */
  async lookup(prompt: string, llmString: string): Promise<Generation[] | null> {
    const [req, opts] = this.#call(prompt, llmString);
    try {
      const stored = await this.recorder.call<JsonValue>(
        req,
        () => Promise.reject(new NotRecorded()),
        opts,
      );
      return revive(stored);
    } catch (error) {
      if (error instanceof NotRecorded) {
        const key = `${llmString}\u0000${prompt}`;
        this.#missedAt.delete(key);
        this.#missedAt.set(key, performance.now());
        if (this.#missedAt.size > MAX_PENDING)
          this.#missedAt.delete(this.#missedAt.keys().next().value as string);
        return null;
      }
      throw error;
    }
  }

  /** Store what the model answered after a lookup returned null. */
  async update(prompt: string, llmString: string, value: Generation[]): Promise<void> {
    const [req, opts] = this.#call(prompt, llmString);
    const stored = value.map(storeGeneration);
    const key = `${llmString}\u0000${prompt}`;
    const missedAt = this.#missedAt.get(key);
    this.#missedAt.delete(key);
    await this.recorder.call<JsonValue>(
      req,
      // JSON by construction (storeGeneration round-trips it through JSON): an interface type, widened.
      () => Promise.resolve(stored as unknown as JsonValue),
      {
        ...opts,
        isComplete: (v) => complete(v as StoredGenerationJson[]),
        ...(missedAt === undefined ? {} : { upstreamMs: performance.now() - missedAt }),
      },
    );
  }

  #call(prompt: string, llmString: string): [InvocationRequest, CallOptions] {
    if (typeof prompt !== "string") {
      throw new TypeError(`InvocacheCache: prompt must be a string, got ${typeof prompt}`);
    }
    const { model, params } = describeLlmString(llmString);
    const hole = notSerialized(params);
    if (hole !== undefined) {
      // The key would not change with this value's content: refuse, never replay a wrong answer.
      throw new IntegrationError(
        "InvocacheCache.lookup",
        `InvocacheCache: params.${hole.path} is a ${hole.id} that LangChain could not write into the cache key, so its content (a tool's schema) would not count; bind tools with the model's bindTools() (which writes them in the provider's format), or use the fetch route (createFetch as the client's fetch)`,
        "ERR_INTEGRATION_KEY",
      );
    }
    return invocationCall({
      prompt,
      model,
      params: { ...params, ":via": "langchain-cache" },
    });
  }
}

function storeGeneration(generation: Generation): StoredGenerationJson {
  // LangChain's StoredGeneration is what its caches persist as JSON; its message type is a
  // class shape, so it is read as the JSON shape kept here (and copied through JSON below).
  const stored = serializeGeneration(generation) as unknown as StoredGenerationJson;
  const info = generation.generationInfo;
  if (info !== undefined) stored.generationInfo = JSON.parse(JSON.stringify(info)) as JsonValue;
  return JSON.parse(JSON.stringify(stored)) as StoredGenerationJson;
}

function revive(value: JsonValue): Generation[] {
  if (!Array.isArray(value)) {
    throw new TypeError(
      "invocache: the recording for this identity is not a LangChain generation list; re-record it with INVOCACHE_MODE=record",
    );
  }
  return value.map((g) => {
    // A recording storeGeneration wrote (its identity says so): read back as that shape, and
    // handed to LangChain as the StoredGeneration it was serialized from.
    const stored = g as unknown as StoredGenerationJson;
    const generation = deserializeStoredGeneration(
      stored as unknown as Parameters<typeof deserializeStoredGeneration>[0],
    ) as Generation;
    if (stored.generationInfo !== undefined) {
      generation.generationInfo = stored.generationInfo as Record<string, unknown>;
    }
    return generation;
  });
}

/** A generation cut by the token limit is not stored (the same rule as every adapter). */
function complete(generations: StoredGenerationJson[]): boolean {
  return generations.every((g) => {
    const info = g.generationInfo as { finish_reason?: unknown } | undefined;
    const meta = (g.message as { data?: { response_metadata?: { finish_reason?: unknown } } })?.data
      ?.response_metadata;
    const reason = info?.finish_reason ?? meta?.finish_reason;
    return reason !== "length" && reason !== "max_tokens";
  });
}
