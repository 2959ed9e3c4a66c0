/**
 * The recorder: the one place where replay policy lives. It turns a call into
 * an identity, decides per mode whether to replay or call through, keeps run
 * scopes (occurrences), verdicts and single-flight, and never stores a
 * failure. Stores only keep values; adapters only translate.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { manifestIdentity } from "../identity/identity.js";
import {
  type IdentityOptions,
  type InvocationRequest,
  invocationManifest,
} from "../identity/manifest.js";
import type { Manifest } from "../identity/manifest-types.js";
import {
  isToolKind,
  type ToolInvocationRequest,
  type ToolManifest,
  toolManifest,
} from "../identity/tool-manifest.js";
import { NORMALIZATION_VERSION } from "../normalize/rules.js";
import { IDENTITY_SECRETS } from "../normalize/secrets-rule.js";
import {
  createSecretScanner,
  restoreSecrets,
  type SecretOptions,
  type SecretScanner,
} from "../secrets/redact.js";
import { type Entry, entryKey, entryLeaseKey, runKey, validateEntry } from "../store/envelope.js";
import { assertJsonValue } from "../store/json.js";
import { openStore } from "../store/open.js";
import type { JsonValue, Store } from "../store/types.js";
import { defaultStoreUrl } from "../store/url.js";
import { INVOCACHE_VERSION } from "../version.js";
import { DivergenceError, EntryTooLargeError, UnknownInvocationError } from "./errors.js";
import { Emitter, type Listener, type RecorderEvents } from "./events.js";
import { diffJson } from "./json-diff.js";
import { type KindModes, type ResolvedModes, resolveKindModes } from "./kind-modes.js";
import { missError } from "./miss-report.js";
import type { Mode } from "./mode.js";
import { type RunInfo, RunScope, type ServedCall } from "./run-scope.js";
import { type StreamOptions, type StreamResult, streamCall } from "./stream.js";
import { ToolDivergenceError } from "./tool-errors.js";
import { toolMissError } from "./tool-miss.js";
import { sideEffectBypass, type ToolPolicy } from "./tool-policy.js";

/** Identity options a recorder applies to every call (per-call options win). */
export type RecorderIdentityDefaults = Pick<
  IdentityOptions,
  "homeDir" | "tmpDirs" | "roots" | "rules"
>;

/** Options of {@link createRecorder}. */
export interface RecorderOptions {
  /** A store, or a store URL (`sqlite://…`, `memory://`, `redis://…`, `postgres://…`). Default: `.invocache/cache.sqlite` under `projectRoot`. */
  store?: Store | string;
  /**
   * Default: `INVOCACHE_MODE`, else `replay` under `CI`, else `auto`. One mode
   * per kind: `{ model: "replay", tool: "verify" }` (docs/tools.md).
   */
  mode?: Mode | KindModes;
  /** Keeps several caches apart in one store. Default `"default"`. */
  namespace?: string;
  /** Expire recordings after this many milliseconds. Default: never. */
  ttl?: number;
  /** Largest entry stored, in bytes of JSON. Default 8 MiB. Larger ones are refused, never truncated. */
  maxEntryBytes?: number;
  /** How long a cross-process recording lease lasts before another process may take over. Default 30 s. */
  leaseMs?: number;
  /** Is a response complete enough to store? Default: yes. E.g. `(r) => r.choices?.[0]?.finish_reason !== "length"`. */
  isComplete?: (response: unknown) => boolean;
  /** Normalization roots and rules applied to every call. */
  identity?: RecorderIdentityDefaults;
  /** Where the default SQLite store lives. Default `process.cwd()`. */
  projectRoot?: string;
  /** What a miss message tells the user to run to record. */
  rerecordHint?: string;
  /**
   * Secrets (default on): values of secret env variables, as they are when the
   * recorder is created, and known key shapes are replaced by `{secret:NAME}`
   * in the manifest (so in the identity) and in every response before it is
   * stored. `false` turns that off; options tune it (see src/secrets).
   */
  secrets?: false | SecretOptions;
  /** On a hit, put env secret values back where the recording has `{secret:NAME}`. Default false. */
  restoreSecrets?: boolean;
  /** Environment used to choose the mode (tests). Default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** Per-call options of {@link Recorder.call}. */
export interface CallOptions extends IdentityOptions {
  /** Aborting rejects the call and nothing is stored. */
  signal?: AbortSignal | undefined;
  /** Overrides the recorder's `isComplete` for this call. */
  isComplete?: ((response: unknown) => boolean) | undefined;
  /**
   * Called once the call is answered, with what answered it. Unlike
   * `recorder.last`, it is per call, so it is exact under concurrency.
   */
  onServed?: ((served: ServedInfo) => void) | undefined;
  /** Tool calls only: side-effect hints and opt-ins (docs/tools.md, "Side effects"). */
  tool?: ToolPolicy | undefined;
}

/** What answered one call (see {@link CallOptions.onServed}). */
export interface ServedInfo {
  id: string;
  occurrence: number;
  hit: boolean;
  manifest: Manifest;
}

/** Counters since the recorder was created. */
export interface RecorderStats {
  hits: number;
  misses: number;
  recorded: number;
  bypassed: number;
  /** Upstream time not spent thanks to hits: sum of the recorded durations, ms. */
  savedMs: number;
  divergences: number;
}

/** A recorder: see {@link createRecorder}. */
export interface Recorder {
  /** The mode of model calls (and of tool calls unless `modes.tool` differs). */
  readonly mode: Mode;
  /** The mode of each kind of invocation. */
  readonly modes: ResolvedModes;
  readonly namespace: string;
  readonly store: Store;
  /** Replay or call `fn` for `req`, per mode. A `{ kind: "tool", … }` request is a tool call. */
  call<T>(
    req: InvocationRequest | ToolInvocationRequest,
    fn: () => Promise<T>,
    opts?: CallOptions,
  ): Promise<T>;
  /**
   * Record or replay a streaming call: `fn` resolves to a head and an async
   * iterable of JSON events. Live events reach the caller while they are
   * recorded; see stream.ts.
   */
  stream<H extends JsonValue, E extends JsonValue>(
    req: InvocationRequest,
    fn: () => Promise<{ head: H; events: AsyncIterable<E> }>,
    opts?: StreamOptions,
  ): Promise<StreamResult<H, E>>;
  /** Run `fn` as one run scope; `fn` receives the run (runId, calls, contentHash()). */
  run<T>(fn: (run: RunInfo) => Promise<T>, opts?: { runId?: string }): Promise<T>;
  /** The run scope the caller is in, if any. */
  currentRun(): RunInfo | undefined;
  /** Record a gate's verdict on the output most recently served for `id`. */
  verdict(id: string, verdict: "accepted" | "rejected", opts?: { reason?: string }): Promise<void>;
  /** Memoize any async function as an invocation. */
  wrap<A extends unknown[], R>(
    fn: (...args: A) => Promise<R>,
    toRequest?: (...args: A) => InvocationRequest | [InvocationRequest, CallOptions],
  ): (...args: A) => Promise<R>;
  /** The last identity and occurrence this recorder answered (for logs and stamps). */
  readonly last: ServedInfo | undefined;
  /** The normalization roots and rules applied to every call (read-only). */
  readonly identity: Readonly<RecorderIdentityDefaults>;
  readonly stats: Readonly<RecorderStats>;
  on<K extends keyof RecorderEvents>(name: K, listener: Listener<K>): () => void;
  /** Wait for pending writes and close the store (only if the recorder opened it). */
  close(): Promise<void>;
}

const DEFAULT_MAX_ENTRY = 8 * 1024 * 1024;
/** Values read from a Store are JSON by the Store contract: check the envelope's shape only. */
const TRUSTED = { deep: false } as const;
const DEFAULT_LEASE_MS = 30_000;

/**
 * Create a recorder.
 *
 * @example
 * const recorder = createRecorder({ store: "sqlite://.invocache/cache.sqlite" });
 * const answer = await recorder.call(
 *   { role: "planner", model: "gpt-5", prompt },
 *   () => client.chat.completions.create({ model: "gpt-5", messages }),
 *   { attempt: 0 },
 * );
 */
export function createRecorder(options: RecorderOptions = {}): Recorder {
  return new RecorderImpl(options);
}

interface Answer {
  value: unknown;
  hit: boolean;
  /** Called live and not recorded (a tool bypassed by the side-effect rule). */
  live?: boolean;
}

class RecorderImpl implements Recorder {
  readonly mode: Mode;
  readonly modes: ResolvedModes;
  readonly namespace: string;
  readonly identity: Readonly<RecorderIdentityDefaults>;
  readonly store: Store;
  readonly stats: RecorderStats = {
    hits: 0,
    misses: 0,
    recorded: 0,
    bypassed: 0,
    savedMs: 0,
    divergences: 0,
  };
  last: Recorder["last"];
  readonly #ownsStore: boolean;
  readonly #opts: RecorderOptions;
  readonly #maxEntryBytes: number;
  readonly #leaseMs: number;
  readonly #owner = `invocache-${randomUUID()}`;
  readonly #events = new Emitter();
  readonly #runs = new AsyncLocalStorage<RunScope>();
  readonly #flights = new Map<string, Promise<Answer>>();
  /** Outside runs: the last served call per id, for verdicts (bounded). */
  readonly #lastServed = new Map<string, ServedCall>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #secrets: SecretScanner | undefined;

  constructor(opts: RecorderOptions) {
    if (opts === null || typeof opts !== "object")
      throw new TypeError("createRecorder: options must be an object");
    this.#opts = opts;
    this.modes = resolveKindModes(opts.mode, opts.env);
    this.mode = this.modes.model;
    this.#secrets = opts.secrets === false ? undefined : createSecretScanner(opts.secrets ?? {});
    // The manifest uses only key-material-looking env values (so identities
    // do not depend on the machine); responses are scrubbed of every secret.
    const identitySecrets =
      opts.secrets === false
        ? false
        : createSecretScanner({ ...IDENTITY_SECRETS, ...opts.secrets });
    this.identity = Object.freeze({ secrets: identitySecrets, ...opts.identity });
    this.namespace = opts.namespace ?? "default";
    entryKey(this.namespace, "0".repeat(64), 0); // validates the namespace now, not on first call
    if (typeof opts.store === "object" && opts.store !== null) {
      this.store = opts.store;
      this.#ownsStore = false;
    } else {
      if (opts.store !== undefined && typeof opts.store !== "string") {
        throw new TypeError(
          "store must be a Store or a store URL such as sqlite://.invocache/cache.sqlite",
        );
      }
      this.store = openStore(opts.store ?? defaultStoreUrl(opts.projectRoot ?? process.cwd()));
      this.#ownsStore = true;
    }
    this.#maxEntryBytes = positive(opts.maxEntryBytes, DEFAULT_MAX_ENTRY, "maxEntryBytes");
    this.#leaseMs = positive(opts.leaseMs, DEFAULT_LEASE_MS, "leaseMs");
    if (opts.ttl !== undefined) positive(opts.ttl, 0, "ttl");
  }

  on<K extends keyof RecorderEvents>(name: K, listener: Listener<K>): () => void {
    return this.#events.on(name, listener);
  }

  currentRun(): RunInfo | undefined {
    return this.#runs.getStore();
  }

  async run<T>(fn: (run: RunInfo) => Promise<T>, opts: { runId?: string } = {}): Promise<T> {
    if (typeof fn !== "function") throw new TypeError("recorder.run: fn must be an async function");
    const scope = new RunScope(opts.runId);
    const result = await this.#runs.run(scope, () => fn(scope));
    await this.#endRun(scope);
    return result;
  }

  async call<T>(
    req: InvocationRequest | ToolInvocationRequest,
    fn: () => Promise<T>,
    opts: CallOptions = {},
  ): Promise<T> {
    if (typeof fn !== "function")
      throw new TypeError("recorder.call: fn must be a function returning a promise");
    const identityOpts: IdentityOptions = { ...this.identity, ...stripCallOnly(opts) };
    // [tools] the request's kind picks the recipe and the mode (tool-manifest.ts, kind-modes.ts).
    const kind = isToolKind(req) ? "tool" : "model";
    const mode = this.modes[kind];
    const manifest =
      kind === "tool"
        ? (toolManifest(req as ToolInvocationRequest, identityOpts) as unknown as Manifest)
        : invocationManifest(req as InvocationRequest, identityOpts);
    const id = manifestIdentity(manifest);
    const scope = this.#runs.getStore();
    const served: ServedCall = scope?.reserve(id) ?? { id, occurrence: 0, from: "pending" };
    const { occurrence } = served;
    const key = entryKey(this.namespace, id, occurrence);
    try {
      const answer = await this.#answer({
        req: req as InvocationRequest,
        kind,
        mode,
        fn,
        opts,
        identityOpts,
        manifest,
        id,
        occurrence,
        key,
        scope,
      });
      served.from = answer.hit
        ? "hit"
        : mode === "passthrough" || mode === "verify" || answer.live === true
          ? "live"
          : "recorded";
      if (scope === undefined) this.#rememberServed(served);
      this.last = { id, occurrence, hit: answer.hit, manifest };
      opts.onServed?.({ id, occurrence, hit: answer.hit, manifest });
      return answer.value as T;
    } catch (error) {
      // A failed call (a 429 the SDK retries, an abort) did not happen as far
      // as the run's trajectory goes: give its occurrence back, so the retry
      // that succeeds is the occurrence a replay will ask for.
      if (scope !== undefined) scope.release(served);
      else served.from = "failed";
      throw error;
    }
  }

  stream<H extends JsonValue, E extends JsonValue>(
    req: InvocationRequest,
    fn: () => Promise<{ head: H; events: AsyncIterable<E> }>,
    opts?: StreamOptions,
  ): Promise<StreamResult<H, E>> {
    return streamCall(this, req, fn, opts);
  }

  wrap<A extends unknown[], R>(
    fn: (...args: A) => Promise<R>,
    toRequest?: (...args: A) => InvocationRequest | [InvocationRequest, CallOptions],
  ): (...args: A) => Promise<R> {
    if (typeof fn !== "function") throw new TypeError("recorder.wrap: fn must be a function");
    const name = fn.name || "anonymous";
    const build =
      toRequest ??
      ((...args: A): InvocationRequest => ({
        role: `fn:${name}`,
        prompt: "",
        params: { args: args as unknown as JsonValue },
      }));
    return (...args: A) => {
      const built = build(...args);
      const [req, opts] = Array.isArray(built) ? built : [built, {}];
      return this.call(req, () => fn(...args), opts);
    };
  }

  async verdict(
    id: string,
    verdict: "accepted" | "rejected",
    opts: { reason?: string } = {},
  ): Promise<void> {
    if (verdict !== "accepted" && verdict !== "rejected") {
      throw new TypeError(
        `verdict must be "accepted" or "rejected", got ${JSON.stringify(verdict)}`,
      );
    }
    if (opts.reason !== undefined && typeof opts.reason !== "string") {
      throw new TypeError("verdict reason must be a string");
    }
    const scope = this.#runs.getStore();
    const served =
      scope?.lastServed(id) ?? (scope === undefined ? this.#lastServed.get(id) : undefined);
    if (served === undefined) {
      throw new UnknownInvocationError(
        id,
        `recorder.verdict: ${String(id).slice(0, 12)} was not served by this recorder${scope ? ` in run ${scope.runId}` : ""}; pass the id of a call this recorder answered (recorder.last.id)`,
      );
    }
    scope?.verdicts.push({ id, occurrence: served.occurrence, verdict });
    this.#events.emit("verdict", {
      id,
      occurrence: served.occurrence,
      verdict,
      ...(opts.reason === undefined ? {} : { reason: opts.reason }),
    });
    if (served.from === "live") return; // passthrough / verify: nothing recorded to attach it to
    const key = entryKey(this.namespace, id, served.occurrence);
    let entry: Entry | undefined;
    try {
      const raw = await this.store.get(key);
      entry = raw === undefined ? undefined : validateEntry(raw, `${this.store.url} ${key}`);
    } catch (error) {
      if (this.mode === "replay") throw error;
      this.#warn(`could not read ${key} to attach a verdict; it was not stored`, error, id);
      return;
    }
    if (entry === undefined) {
      if (this.mode === "replay") {
        throw new UnknownInvocationError(
          id,
          `recorder.verdict: no recording of ${id.slice(0, 12)} to compare the verdict with`,
        );
      }
      return; // e.g. an incomplete response that was not stored
    }
    const recorded = entry.meta.verdict?.verdict;
    if (served.from === "hit") {
      if (recorded !== verdict) {
        this.stats.divergences++;
        this.#events.emit("divergence", {
          kind: "verdict",
          id,
          occurrence: served.occurrence,
          ...(scope ? { runId: scope.runId } : {}),
          expected: recorded ?? null,
          actual: verdict,
        });
        if (this.mode === "replay") {
          throw new DivergenceError(
            "verdict",
            recorded ?? null,
            verdict,
            `invocache: the gate said "${verdict}" for ${id.slice(0, 12)} (attempt ${entry.manifest.attempt}, occurrence ${served.occurrence}) but the recording says ${recorded === undefined ? "no verdict was given" : `"${recorded}"`}: the replayed run diverged. Re-record with INVOCACHE_MODE=record if the gate changed on purpose.`,
          );
        }
      }
      return; // a replayed entry is never rewritten in auto mode
    }
    entry.meta.verdict = {
      verdict,
      at: new Date().toISOString(),
      ...(opts.reason === undefined
        ? {}
        : { reason: this.#secrets?.redactString(opts.reason, "$.reason", []) ?? opts.reason }),
    };
    await this.#write(key, entry, id);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
    if (this.#ownsStore) await this.store.close();
  }

  // ---- policy ---------------------------------------------------------------

  async #answer(c: CallContext): Promise<Answer> {
    if (c.kind === "tool") {
      // [tools] side-effect rule (tool-policy.ts): never replay "send the email" from a shared cache.
      const name = (c.manifest as unknown as ToolManifest).name;
      const reason = sideEffectBypass(name, c.mode, this.store.url, c.opts.tool);
      if (reason !== undefined) return this.#bypass(c, reason).then((a) => ({ ...a, live: true }));
    }
    switch (c.mode) {
      case "passthrough": {
        this.stats.bypassed++;
        this.#events.emit("bypass", {
          id: c.id,
          occurrence: c.occurrence,
          reason: "passthrough mode",
        });
        return { value: await live(c), hit: false };
      }
      case "record":
        return this.#single(c.key, () => this.#recordLive(c));
      case "verify":
        return this.#verify(c);
      case "replay":
      case "auto": {
        const found = await this.#lookup(c);
        if (found !== undefined) return found;
        this.stats.misses++;
        this.#events.emit("miss", {
          id: c.id,
          occurrence: c.occurrence,
          key: c.key,
          mode: c.mode,
        });
        if (c.mode === "replay") {
          // [tools] a tool miss names the tool and its nearest recordings.
          if (c.kind === "tool") {
            throw await toolMissError({
              store: this.store,
              namespace: this.namespace,
              id: c.id,
              occurrence: c.occurrence,
              mode: c.mode,
              manifest: c.manifest as unknown as ToolManifest,
              rerecord: this.#opts.rerecordHint,
            });
          }
          throw await missError({
            store: this.store,
            namespace: this.namespace,
            id: c.id,
            occurrence: c.occurrence,
            mode: c.mode,
            manifest: c.manifest,
            raw: { prompt: c.req.prompt, task: c.req.task },
            normalize: { ...c.identityOpts, projectPath: c.req.projectPath },
            rerecord: this.#opts.rerecordHint,
            inRun: c.scope !== undefined,
          });
        }
        return this.#single(c.key, () => this.#recordShared(c));
      }
    }
  }

  /** A hit, or undefined on a miss. A store failure is an error in replay, a bypass otherwise. */
  async #lookup(c: CallContext): Promise<Answer | undefined> {
    let raw: JsonValue | undefined;
    try {
      raw = await this.store.get(c.key);
    } catch (error) {
      if (c.mode === "replay") throw error;
      this.#warn(
        `store ${this.store.url} failed on read; calling upstream without the cache`,
        error,
        c.id,
      );
      c.storeDown = true;
      return undefined;
    }
    if (raw === undefined) return undefined;
    const entry = validateEntry(raw, `${this.store.url} ${c.key}`, TRUSTED);
    return this.#hit(c, entry);
  }

  #hit(c: CallContext, entry: Entry): Answer {
    this.stats.hits++;
    this.stats.savedMs += entry.meta.durationMs;
    this.#events.emit("hit", {
      id: c.id,
      occurrence: c.occurrence,
      key: c.key,
      savedMs: entry.meta.durationMs,
    });
    const value =
      this.#opts.restoreSecrets === true
        ? restoreSecrets(
            entry.response,
            this.#opts.secrets === false ? {} : (this.#opts.secrets ?? {}),
          ).value
        : entry.response;
    return { value, hit: true };
  }

  /**
   * In-process single-flight: concurrent calls for one entry share one
   * upstream call. Each follower gets its own copy of the value.
   */
  async #single(key: string, work: () => Promise<Answer>): Promise<Answer> {
    const inflight = this.#flights.get(key);
    if (inflight !== undefined) {
      const shared = await inflight;
      return { value: structuredClone(shared.value), hit: shared.hit };
    }
    const p = work().finally(() => this.#flights.delete(key));
    this.#flights.set(key, p);
    return p;
  }

  /** auto-mode miss: take the cross-process lease, or wait for its holder's recording. */
  async #recordShared(c: CallContext): Promise<Answer> {
    if (c.storeDown) return this.#bypass(c, "store unavailable");
    const leaseKey = entryLeaseKey(this.namespace, c.id, c.occurrence);
    const deadline = Date.now() + this.#leaseMs * 3;
    let delay = 10;
    for (;;) {
      let acquired: boolean;
      try {
        acquired = await this.store.acquireLease(leaseKey, this.#owner, this.#leaseMs);
      } catch (error) {
        this.#warn(
          `store ${this.store.url} failed to lease ${leaseKey}; calling upstream without single-flight`,
          error,
          c.id,
        );
        return this.#recordLive(c);
      }
      if (acquired) {
        try {
          // Someone may have recorded it between our miss and our lease.
          const raw = await this.store.get(c.key).catch(() => undefined);
          if (raw !== undefined)
            return this.#hit(c, validateEntry(raw, `${this.store.url} ${c.key}`, TRUSTED));
          return await this.#recordLive(c, leaseKey);
        } finally {
          await this.store.releaseLease(leaseKey, this.#owner).catch(() => {});
        }
      }
      await sleep(delay, c.opts.signal);
      delay = Math.min(delay * 2, 250);
      const raw = await this.store.get(c.key).catch(() => undefined);
      if (raw !== undefined)
        return this.#hit(c, validateEntry(raw, `${this.store.url} ${c.key}`, TRUSTED));
      if (Date.now() > deadline) {
        this.#warn(
          `gave up waiting for another process to record ${c.key}; calling upstream`,
          undefined,
          c.id,
        );
        return this.#recordLive(c);
      }
    }
  }

  #bypass(c: CallContext, reason: string): Promise<Answer> {
    this.stats.bypassed++;
    this.#events.emit("bypass", { id: c.id, occurrence: c.occurrence, reason });
    return live(c).then((value) => ({ value, hit: false }));
  }

  /** Call upstream and store the result if it is storable. */
  async #recordLive(c: CallContext, leaseKey?: string): Promise<Answer> {
    const renew =
      leaseKey === undefined
        ? undefined
        : setInterval(
            () => {
              this.store.acquireLease(leaseKey, this.#owner, this.#leaseMs).catch(() => {});
            },
            Math.max(50, Math.floor(this.#leaseMs / 3)),
          );
    renew?.unref?.();
    const started = performance.now();
    let value: unknown;
    try {
      value = await live(c);
    } finally {
      if (renew !== undefined) clearInterval(renew);
    }
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const complete = c.opts.isComplete ?? this.#opts.isComplete;
    if (complete !== undefined && !complete(value)) {
      this.#events.emit("bypass", {
        id: c.id,
        occurrence: c.occurrence,
        reason: "incomplete response (isComplete returned false)",
      });
      this.stats.bypassed++;
      return { value, hit: false };
    }
    assertJsonValue(value, "response");
    const entry: Entry = {
      v: 1,
      id: c.id,
      manifest: c.manifest,
      // The caller gets the live value; the store never sees a secret.
      response: this.#secrets === undefined ? value : this.#secrets.redact(value).value,
      meta: {
        recordedAt: new Date().toISOString(),
        durationMs,
        normalization: NORMALIZATION_VERSION,
        invocacheVersion: INVOCACHE_VERSION,
        occurrence: c.occurrence,
        attempt: c.manifest.attempt,
        ...(c.manifest.attempt > 0 ? { parent: parentId(c) } : {}),
      },
    };
    const bytes = Buffer.byteLength(JSON.stringify(entry));
    if (bytes > this.#maxEntryBytes) {
      const error = new EntryTooLargeError(c.id, bytes, this.#maxEntryBytes, value);
      if (c.mode === "record") throw error;
      this.#warn(error.message, error, c.id);
      this.stats.bypassed++;
      return { value, hit: false };
    }
    await this.#write(c.key, entry, c.id, c.mode);
    this.stats.recorded++;
    this.#events.emit("record", { id: c.id, occurrence: c.occurrence, key: c.key, durationMs });
    return { value, hit: false };
  }

  async #verify(c: CallContext): Promise<Answer> {
    const value = await live(c);
    let raw: JsonValue | undefined;
    try {
      raw = await this.store.get(c.key);
    } catch (error) {
      this.#warn(`store ${this.store.url} failed on read; nothing to verify against`, error, c.id);
    }
    const recorded =
      raw === undefined
        ? undefined
        : validateEntry(raw, `${this.store.url} ${c.key}`, TRUSTED).response;
    if (JSON.stringify(recorded) !== JSON.stringify(value)) {
      this.stats.divergences++;
      // [tools] field-by-field, and an error while the model is strictly replayed.
      const fields = c.kind === "tool" ? diffJson(recorded, value) : undefined;
      this.#events.emit("divergence", {
        kind: "response",
        id: c.id,
        occurrence: c.occurrence,
        expected: recorded ?? null,
        actual: value,
        ...(fields === undefined ? {} : { fields }),
      });
      if (fields !== undefined && this.modes.model === "replay") {
        const name = (c.manifest as unknown as ToolManifest).name;
        throw new ToolDivergenceError(name, c.id, c.occurrence, fields);
      }
    }
    return { value, hit: false };
  }

  async #write(key: string, entry: Entry, id: string, mode: Mode = this.mode): Promise<void> {
    const ttl = this.#opts.ttl;
    const p = this.store.set(
      key,
      entry as unknown as JsonValue,
      ttl === undefined ? undefined : { ttlMs: ttl },
    );
    this.#pending.add(p);
    try {
      await p;
    } catch (error) {
      if (mode === "record") throw error;
      this.#warn(
        `store ${this.store.url} failed to write ${key}; the response was returned but not recorded`,
        error,
        id,
      );
    } finally {
      this.#pending.delete(p);
    }
  }

  async #endRun(scope: RunScope): Promise<void> {
    const contentHash = scope.contentHash();
    this.#events.emit("run", {
      runId: scope.runId,
      contentHash,
      calls: scope.calls.length,
      explicitId: scope.explicitId,
    });
    if (!scope.explicitId || this.mode === "passthrough" || this.mode === "verify") return;
    const key = runKey(this.namespace, scope.runId);
    const record: JsonValue = {
      v: 1,
      runId: scope.runId,
      contentHash,
      calls: scope.calls.map((c) => `${c.id}:${c.occurrence}`),
      verdicts: scope.verdicts.map((v) => `${v.id}:${v.occurrence}:${v.verdict}`),
      endedAt: new Date().toISOString(),
    };
    if (this.mode === "replay" || this.mode === "auto") {
      let stored: JsonValue | undefined;
      try {
        stored = await this.store.get(key);
      } catch (error) {
        if (this.mode === "replay") throw error;
        this.#warn(`could not read run ${scope.runId}`, error);
      }
      const storedHash = (stored as { contentHash?: unknown } | undefined)?.contentHash;
      if (typeof storedHash === "string" && storedHash !== contentHash) {
        this.stats.divergences++;
        this.#events.emit("divergence", {
          kind: "trajectory",
          runId: scope.runId,
          expected: storedHash,
          actual: contentHash,
        });
        if (this.mode === "replay") {
          throw new DivergenceError(
            "trajectory",
            storedHash,
            contentHash,
            `invocache: run ${scope.runId} took a different trajectory than when it was recorded (content hash ${contentHash.slice(0, 12)}, recorded ${storedHash.slice(0, 12)}). Re-record with INVOCACHE_MODE=record if that is intended.`,
          );
        }
      }
      if (this.mode === "replay" || storedHash === contentHash) return;
    }
    try {
      await this.store.set(key, record);
    } catch (error) {
      if (this.mode === "record") throw error;
      this.#warn(`could not store run ${scope.runId}`, error);
    }
  }

  #rememberServed(call: ServedCall): void {
    this.#lastServed.delete(call.id);
    this.#lastServed.set(call.id, call);
    if (this.#lastServed.size > 10_000)
      this.#lastServed.delete(this.#lastServed.keys().next().value as string);
  }

  #warn(message: string, error?: unknown, id?: string): void {
    this.#events.emit("warning", {
      message,
      ...(error === undefined ? {} : { error }),
      ...(id === undefined ? {} : { id }),
    });
  }
}

interface CallContext {
  req: InvocationRequest;
  /** [tools] which recipe made the manifest, and the mode of that kind. */
  kind: "model" | "tool";
  mode: Mode;
  fn: () => Promise<unknown>;
  opts: CallOptions;
  identityOpts: IdentityOptions;
  manifest: Manifest;
  id: string;
  occurrence: number;
  key: string;
  scope: RunScope | undefined;
  storeDown?: boolean;
}

/** Call upstream, honouring the abort signal: an aborted call is an error, never a result. */
async function live(c: CallContext): Promise<unknown> {
  const signal = c.opts.signal;
  signal?.throwIfAborted();
  const value = await c.fn();
  signal?.throwIfAborted();
  return value;
}

/** The identity of attempt n-1 of the same step (RELOOP layer 3: verdict chains). */
function parentId(c: CallContext): string {
  return manifestIdentity({ ...c.manifest, attempt: c.manifest.attempt - 1 });
}

function stripCallOnly(opts: CallOptions): IdentityOptions {
  const { signal: _s, isComplete: _c, onServed: _o, tool: _t, ...rest } = opts;
  return rest;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(
      `${name} must be a positive number of ${name === "maxEntryBytes" ? "bytes" : "milliseconds"}`,
    );
  }
  return value;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
