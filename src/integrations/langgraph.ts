/**
 * `invocache/langgraph`: LangGraph.js node caching and graph runs over
 * invocache.
 *
 * - {@link InvocacheNodeCache}: the `BaseCache` graphs take
 *   (`graph.compile({ cache })`, with a `cachePolicy` per node) over a
 *   recorder. A node's cached writes are one invocation keyed by (graph,
 *   node, input, attempt): the graph name is part of the key, so two graphs
 *   with a node of the same name never share entries; `attempt` is the n-th
 *   time this graph run reaches the node with this input, so a conditional
 *   edge that loops back after a rejection is a new identity (RELOOP) and
 *   the retry is never served the rejected writes.
 * - {@link invocacheCachePolicy}: a `CachePolicy` whose key tells apart
 *   inputs that `JSON.stringify` (LangGraph's default) writes alike, such
 *   as a `Date` and its ISO string, or `undefined` and a missing member.
 * - {@link runGraph}: one graph run as one recorder run scope, its id from
 *   the thread id, so the model calls a run makes (through `createFetch`,
 *   `InvocacheCache`…) are one trajectory, stored and compared on replay.
 *
 * Node-cache lookups are not model calls: they stay out of the run's
 * trajectory (a replayed node skips the model calls it made when it was
 * recorded, so counting both would make every replay diverge).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  BaseCache,
  type CacheFullKey,
  type CacheNamespace,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { encodeJson, requireRecorder } from "../adapters/index.js";
import { canonicalJson } from "../identity/index.js";
import {
  currentInvocation,
  type InvocationRequest,
  type JsonValue,
  type Recorder,
} from "../index.js";
import { IntegrationError } from "./errors.js";

export { IntegrationError } from "./errors.js";

/** Options of {@link InvocacheNodeCache}. */
export interface InvocacheNodeCacheOptions {
  recorder: Recorder;
  /** The graph's name: part of every key, so graphs never share node entries. */
  graph: string;
  /** LangGraph's serializer for the writes (default: the checkpoint JSON+ serializer). */
  serde?: SerializerProtocol | undefined;
}

/**
 * What is stored for a node: LangGraph's typed serialization of its writes,
 * as JSON when the serializer wrote JSON (readable, and scanned for secrets
 * like every response), else as base64 bytes.
 */
type StoredWrites = { type: string; json: JsonValue } | { type: string; base64: string };

class NotRecorded extends Error {}

/**
 * A LangGraph node cache backed by an invocache recorder.
 *
 * @example
 * const cache = new InvocacheNodeCache({ recorder, graph: "release" });
 * const graph = new StateGraph(State)
 *   .addNode("builder", build, { cachePolicy: invocacheCachePolicy() })
 *   .compile({ cache });
 */
export class InvocacheNodeCache extends BaseCache<unknown> {
  readonly recorder: Recorder;
  readonly graph: string;
  /** Runs the recorder outside any run scope the graph is invoked in (see the module comment). */
  readonly #outside: <R>(fn: () => R) => R;
  /** How often each (run, namespace, key) was asked for: the next attempt. */
  readonly #attempts = new Map<string, number>();
  /** The attempt a `get` gave a key that missed, for the `set` that follows. */
  readonly #pending = new Map<string, number>();

  constructor(options: InvocacheNodeCacheOptions) {
    super(options?.serde);
    this.recorder = requireRecorder(options, "InvocacheNodeCache", "{ recorder, graph }");
    if (typeof options.graph !== "string" || options.graph === "") {
      throw new TypeError(
        'InvocacheNodeCache: options.graph must be a non-empty string naming the graph (e.g. "release")',
      );
    }
    if (this.recorder.currentRun() !== undefined) {
      throw new TypeError(
        "InvocacheNodeCache: create the cache outside recorder.run (with the graph), not inside a run",
      );
    }
    this.graph = options.graph;
    this.#outside = AsyncLocalStorage.snapshot();
  }

  async get(keys: CacheFullKey[]): Promise<{ key: CacheFullKey; value: unknown }[]> {
    const found: { key: CacheFullKey; value: unknown }[] = [];
    for (const key of keys) {
      const slot = this.#slot(key);
      const attempt = this.#attempts.get(slot) ?? 0;
      this.#attempts.set(slot, attempt + 1);
      const req = this.#request(key);
      try {
        const stored = await this.#outside(() =>
          this.recorder.call<JsonValue>(req, () => Promise.reject(new NotRecorded()), { attempt }),
        );
        found.push({ key, value: await this.#revive(stored) });
      } catch (error) {
        if (!(error instanceof NotRecorded)) throw error;
        this.#pending.set(slot, attempt);
      }
    }
    return found;
  }

  async set(pairs: { key: CacheFullKey; value: unknown; ttl?: number }[]): Promise<void> {
    for (const { key, value } of pairs) {
      const slot = this.#slot(key);
      const attempt = this.#pending.get(slot) ?? 0;
      this.#pending.delete(slot);
      const [type, bytes] = await this.serde.dumpsTyped(value);
      const stored = storedWrites(type, bytes);
      const req = this.#request(key);
      // StoredWrites holds JSON only (a parsed JSON value or base64): an interface type, widened.
      await this.#outside(() =>
        this.recorder.call<JsonValue>(req, () => Promise.resolve(stored as unknown as JsonValue), {
          attempt,
        }),
      );
    }
  }

  /** Recordings are never deleted by a graph: this throws, naming the fix. */
  async clear(_namespaces: CacheNamespace[]): Promise<void> {
    throw new IntegrationError(
      "InvocacheNodeCache.clear",
      "InvocacheNodeCache: recordings are not deleted by graph.clearCache(); re-record with INVOCACHE_MODE=record, or prune the store with `invocache prune`",
    );
  }

  /** Attempts are counted per graph run (recorder run scope), else per cache. */
  #slot([ns, key]: CacheFullKey): string {
    return JSON.stringify([this.recorder.currentRun()?.runId ?? null, ns, key]);
  }

  #request([ns, key]: CacheFullKey): InvocationRequest {
    const ctx = currentInvocation();
    // ns is ["__pregel_ns_writes", process name or "__dynamic__", node]: the node is the role.
    const node = ns[2] ?? ns[1] ?? "node";
    return {
      role: node,
      // LangGraph hands over a hash of the input, not the input: it goes in
      // params, which are hashed as they are (the prompt is normalized, and
      // normalization would rewrite a hex digest).
      prompt: "",
      model: null,
      task: ctx.task,
      projectPath: ctx.projectPath,
      params: {
        ":via": "langgraph-node-cache",
        graph: this.graph,
        namespace: ns.join("/"),
        input: key,
      },
    };
  }

  async #revive(stored: JsonValue): Promise<unknown> {
    const s = stored as { type?: unknown; json?: JsonValue; base64?: unknown } | null;
    if (s !== null && typeof s === "object" && typeof s.type === "string") {
      if (s.json !== undefined) return this.serde.loadsTyped(s.type, JSON.stringify(s.json));
      if (typeof s.base64 === "string") {
        return this.serde.loadsTyped(s.type, new Uint8Array(Buffer.from(s.base64, "base64")));
      }
    }
    throw new TypeError(
      "invocache: the recording for this identity is not LangGraph node writes; re-record it with INVOCACHE_MODE=record",
    );
  }
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function storedWrites(type: string, bytes: Uint8Array): StoredWrites {
  if (type === "json") {
    try {
      return { type, json: JSON.parse(UTF8.decode(bytes)) as JsonValue };
    } catch {
      // not UTF-8 JSON after all: keep the bytes
    }
  }
  return { type, base64: Buffer.from(bytes).toString("base64") };
}

/**
 * A LangGraph `CachePolicy` whose key is the node input in invocache's JSON
 * convention (Dates, bytes, URLs, `undefined` and non-finite numbers
 * tagged), as canonical JSON, so inputs `JSON.stringify` writes alike get
 * different keys. Values without a lossless JSON form (class instances such
 * as LangChain messages) are keyed by their JSON, as LangGraph does.
 *
 * @example
 * graph.addNode("builder", build, { cachePolicy: invocacheCachePolicy({ ttl: 3600 }) })
 */
export function invocacheCachePolicy(options: { ttl?: number } = {}): {
  keyFunc: (args: unknown[]) => string;
  ttl?: number;
} {
  const policy: { keyFunc: (args: unknown[]) => string; ttl?: number } = { keyFunc: nodeInputKey };
  if (options.ttl !== undefined) policy.ttl = options.ttl;
  return policy;
}

/** The key text of a node input (see {@link invocacheCachePolicy}). */
export function nodeInputKey(args: unknown[]): string {
  return canonicalJson(encodeJson(args).json);
}

/** Anything with LangGraph's `invoke(input, config)`. */
export interface InvokableGraph<I, O> {
  invoke(input: I, config?: GraphRunConfig): Promise<O>;
}

/** The part of a LangGraph config that names the run. */
export interface GraphRunConfig {
  configurable?: { thread_id?: string | undefined; [key: string]: unknown } | undefined;
  [key: string]: unknown;
}

/**
 * The run id of a graph run: `thread-<thread id>` (percent-encoded, since
 * run ids cannot hold `:`), or undefined without a thread id (then the run
 * is anonymous and not stored).
 *
 * @example
 * graphRunId({ configurable: { thread_id: "ticket-42" } }) // "thread-ticket-42"
 */
export function graphRunId(config: GraphRunConfig | undefined): string | undefined {
  const thread = config?.configurable?.thread_id;
  if (thread === undefined) return undefined;
  if (typeof thread !== "string" || thread === "") {
    throw new TypeError(
      `runGraph: config.configurable.thread_id must be a non-empty string, got ${typeof thread}`,
    );
  }
  return `thread-${encodeURIComponent(thread)}`;
}

/**
 * Invoke a compiled graph as one recorder run: the thread id becomes the run
 * id, so the graph's model calls are one trajectory with a content hash that
 * a replay must match.
 *
 * @example
 * const out = await runGraph(recorder, graph, { task }, { configurable: { thread_id: "ticket-42" } });
 */
export function runGraph<I, O>(
  recorder: Recorder,
  graph: InvokableGraph<I, O>,
  input: I,
  config?: GraphRunConfig,
): Promise<O> {
  requireRecorder({ recorder }, "runGraph", "runGraph(recorder, graph, input, config)");
  if (graph === null || typeof graph !== "object" || typeof graph.invoke !== "function") {
    throw new TypeError("runGraph: graph must be a compiled LangGraph graph (graph.compile())");
  }
  const runId = graphRunId(config);
  return recorder.run(() => graph.invoke(input, config), runId === undefined ? {} : { runId });
}
