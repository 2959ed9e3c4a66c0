/**
 * The recorder: the one place where replay policy lives. It turns a call into
 * an identity, decides per mode whether to replay or call through, keeps run
 * scopes (occurrences), verdicts and single-flight, and never stores a
 * failure. Stores only keep values; adapters only translate.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { CassetteError } from "../errors.js";
import { manifestIdentity } from "../identity/identity.js";
import {
  type IdentityOptions,
  type InvocationRequest,
  invocationManifest,
} from "../identity/manifest.js";
import type { Manifest } from "../identity/manifest-types.js";
import { NORMALIZATION_VERSION } from "../normalize/rules.js";
import { IDENTITY_SECRETS } from "../normalize/secrets-rule.js";
// [hook: accounting/telemetry] usage, cost and spans are computed outside the policy code.
import {
  type CallTelemetry,
  createTelemetry,
  type TelemetryOptions,
} from "../observability/otel.js";
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
import { extractUsage, type Usage } from "../usage/extract.js";
import {
  type Accounts,
  addToAccounts,
  type CallSummary,
  emptyAccounts,
  emptyTally,
  priceCall,
} from "../usage/summary.js";
import { INVOCACHE_VERSION } from "../version.js";
import { DivergenceError, EntryTooLargeError, UnknownInvocationError } from "./errors.js";
import { Emitter, type Listener, type RecorderEvents } from "./events.js";
import { missError } from "./miss-report.js";
import { type Mode, resolveMode } from "./mode.js";
import { type RunInfo, RunScope, type ServedCall } from "./run-scope.js";
import {
  type StreamOptions,
  type StreamResult,
  type StreamStart,
  StreamTooLarge,
  streamCall,
} from "./stream.js";

/** Identity options a recorder applies to every call (per-call options win). */
export type RecorderIdentityDefaults = Pick<
  IdentityOptions,
  "homeDir" | "tmpDirs" | "roots" | "rules" | "disableRules"
>;

/** Options of {@link createRecorder}. */
export interface RecorderOptions {
  /** A store, or a store URL (`sqlite://…`, `memory://`, `redis://…`, `postgres://…`). Default: `.invocache/cache.sqlite` under `projectRoot`. */
  store?: Store | string;
  /** Default: `INVOCACHE_MODE`, else `replay` under `CI`, else `auto`. */
  mode?: Mode;
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
  /**
   * OpenTelemetry spans and counters per call (docs/observability.md). Default
   * on when `@opentelemetry/api` is installed (a no-op until an SDK is
   * registered); `false` turns it off; providers may be given.
   */
  telemetry?: boolean | TelemetryOptions;
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
  /**
   * Count this call in this run (from `recorder.run(fn)` or `currentRun()`)
   * instead of the run found in the async context. For calls that lost it:
   * a job queue, pool or timer created before the run runs its jobs where no
   * run is in effect. See also {@link Recorder.withRun}.
   */
  run?: RunInfo | undefined;
}

/** What answered one call (see {@link CallOptions.onServed}). */
export interface ServedInfo {
  id: string;
  occurrence: number;
  hit: boolean;
  manifest: Manifest;
}

/**
 * Counters since the recorder was created. Besides these, the savings
 * accounts (src/usage/summary.ts): calls, upstream calls, tokens and dollars
 * spent and saved, by run, role, model and namespace.
 */
export interface RecorderStats extends Omit<Accounts, "hits" | "misses"> {
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
  readonly mode: Mode;
  readonly namespace: string;
  readonly store: Store;
  /** Replay or call `fn` for `req`, per mode. */
  call<T>(req: InvocationRequest, fn: () => Promise<T>, opts?: CallOptions): Promise<T>;
  /**
   * Record or replay a streaming call: `fn` resolves to a head and an async
   * iterable of JSON events. Live events reach the caller while they are
   * recorded; see stream.ts.
   */
  stream<H extends JsonValue, E extends JsonValue>(
    req: InvocationRequest,
    fn: (start: StreamStart) => Promise<{ head: H; events: AsyncIterable<E> }>,
    opts?: StreamOptions,
  ): Promise<StreamResult<H, E>>;
  /** Largest entry stored, in bytes of JSON (`maxEntryBytes`). */
  readonly maxEntryBytes: number;
  /**
   * Run `fn` as one run scope; `fn` receives the run (runId, calls,
   * contentHash()). Opened inside another run, it is part of that run's
   * trajectory: occurrences keep counting where the enclosing run is (a
   * retry is never occurrence 0 again), and its calls and verdicts also
   * belong to the enclosing run.
   */
  run<T>(fn: (run: RunInfo) => Promise<T>, opts?: { runId?: string }): Promise<T>;
  /**
   * Run `fn` inside a run that is still going (from `recorder.run(fn)` or
   * `currentRun()`): for work that lost the async context, such as a job a
   * queue created before the run executes. Calls made by adapters inside
   * `fn` count in `run` too.
   */
  withRun<T>(run: RunInfo, fn: () => Promise<T>): Promise<T>;
  /** The run scope the caller is in, if any. */
  currentRun(): RunInfo | undefined;
  /** Record a gate's verdict on the output most recently served for `id`. */
  verdict(
    id: string,
    verdict: "accepted" | "rejected",
    opts?: { reason?: string; run?: RunInfo },
  ): Promise<void>;
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
  /** Upstream time of the recording behind the value (what a follower saved). */
  durationMs?: number;
  /** Served to a single-flight follower: it did not go upstream, but shares the leader's recording. */
  shared?: boolean;
  /** Not a value a follower can use (a stream whose recording was given up): followers call themselves. */
  unshareable?: boolean;
  /** [hook: accounting] tokens of the recording behind the value. */
  usage?: Usage;
}

/** An in-process upstream call that identical calls wait on. */
interface Flight {
  promise: Promise<Answer>;
  /** The leader's signal: when it aborts, the followers take over. */
  signal: AbortSignal | undefined;
}

class RecorderImpl implements Recorder {
  readonly mode: Mode;
  readonly namespace: string;
  readonly identity: Readonly<RecorderIdentityDefaults>;
  readonly store: Store;
  readonly stats: RecorderStats = {
    ...emptyAccounts(),
    hits: 0,
    misses: 0,
    recorded: 0,
    bypassed: 0,
    savedMs: 0,
    divergences: 0,
  };
  /** [hook: telemetry] undefined when `telemetry: false`. */
  readonly #telemetry: CallTelemetry | undefined;
  last: Recorder["last"];
  readonly #ownsStore: boolean;
  readonly #opts: RecorderOptions;
  readonly #maxEntryBytes: number;
  readonly #leaseMs: number;
  readonly #owner = `invocache-${randomUUID()}`;
  readonly #events = new Emitter();
  readonly #runs = new AsyncLocalStorage<RunScope>();
  /** Runs this recorder opened (to refuse another recorder's run handle). */
  readonly #ownRuns = new WeakSet<RunScope>();
  /** Outermost runs still going: a call outside every run is checked against them. */
  readonly #activeRoots = new Set<RunScope>();
  /** Process warnings already emitted, by code: once per recorder each. */
  readonly #warnedOnce = new Set<string>();
  readonly #flights = new Map<string, Flight>();
  /** Outside runs: the last served call per id, for verdicts (bounded). */
  readonly #lastServed = new Map<string, ServedCall>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #secrets: SecretScanner | undefined;

  constructor(opts: RecorderOptions) {
    if (opts === null || typeof opts !== "object")
      throw new TypeError("createRecorder: options must be an object");
    this.#opts = opts;
    this.mode = resolveMode(opts.mode, opts.env);
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
    this.#telemetry = createTelemetry(opts.telemetry);
  }

  on<K extends keyof RecorderEvents>(name: K, listener: Listener<K>): () => void {
    return this.#events.on(name, listener);
  }

  currentRun(): RunInfo | undefined {
    return this.#runs.getStore();
  }

  async run<T>(fn: (run: RunInfo) => Promise<T>, opts: { runId?: string } = {}): Promise<T> {
    if (typeof fn !== "function") throw new TypeError("recorder.run: fn must be an async function");
    const scope = new RunScope(opts.runId, this.#runs.getStore());
    this.#ownRuns.add(scope);
    if (scope.parent === undefined) this.#activeRoots.add(scope);
    let result: T;
    try {
      result = await this.#runs.run(scope, () => fn(scope));
    } finally {
      scope.active = false;
      this.#activeRoots.delete(scope);
    }
    await this.#endRun(scope);
    return result;
  }

  async withRun<T>(run: RunInfo, fn: () => Promise<T>): Promise<T> {
    if (typeof fn !== "function")
      throw new TypeError("recorder.withRun: fn must be an async function");
    const scope = this.#ownRun(run, "recorder.withRun: run");
    return this.#runs.run(scope, fn);
  }

  /** A run handle given by the caller: one of ours, still going. */
  #ownRun(run: RunInfo, what: string): RunScope {
    if (!(run instanceof RunScope) || !this.#ownRuns.has(run)) {
      throw new TypeError(
        `${what} must be a run of this recorder (the argument of recorder.run(fn), or recorder.currentRun()); this one belongs to another recorder or is not a run`,
      );
    }
    if (!run.active) {
      throw new TypeError(
        `${what}: run ${run.runId} has ended; a call cannot join a run after recorder.run() returned (start the work inside the run and await it there)`,
      );
    }
    return run;
  }

  /**
   * A call outside every run whose identity a run of this recorder that is
   * still going has already served: most likely work that lost its run (a
   * queue created before the run). It is occurrence 0 and may be served what
   * that run already got, so say so and name the fix.
   */
  #checkLostRun(id: string): void {
    for (const root of this.#activeRoots) {
      if (root.occurrences(id) === 0) continue;
      const message = `invocache: a call to ${id.slice(0, 12)} was made outside any run while run ${root.runId}, which already served that identity, is going: it counts as occurrence 0 and can be served the output that run already got (a rejected draft). Work started from a queue, pool or timer created before the run loses the run's async context. Pass the run: recorder.call(req, fn, { run }) or recorder.withRun(run, job).`;
      this.#warn(message, undefined, id);
      this.#processWarning("INVOCACHE_RUN_SCOPE_LOST", message);
      return;
    }
  }

  /** Node's convention for a degraded library: process.emitWarning, once per recorder and code. */
  #processWarning(code: string, message: string, detail?: string): void {
    if (this.#warnedOnce.has(code)) return;
    this.#warnedOnce.add(code);
    process.emitWarning(message, {
      type: "InvocacheWarning",
      code,
      ...(detail === undefined ? {} : { detail }),
    });
  }

  async call<T>(req: InvocationRequest, fn: () => Promise<T>, opts: CallOptions = {}): Promise<T> {
    if (typeof fn !== "function")
      throw new TypeError("recorder.call: fn must be a function returning a promise");
    const identityOpts: IdentityOptions = { ...this.identity, ...stripCallOnly(opts) };
    const manifest = invocationManifest(req, identityOpts);
    const id = manifestIdentity(manifest);
    const scope =
      opts.run === undefined
        ? this.#runs.getStore()
        : this.#ownRun(opts.run, "recorder.call: opts.run");
    if (scope === undefined && this.#activeRoots.size > 0) this.#checkLostRun(id);
    const served: ServedCall = scope?.reserve(id) ?? { id, occurrence: 0, from: "pending" };
    const { occurrence } = served;
    const key = entryKey(this.namespace, id, occurrence);
    // [hook: accounting/telemetry] a call note the policy fills in, and a span around the call.
    const note: CallNote = { upstream: false, missed: false };
    const started = performance.now();
    const telemetry = this.#telemetry;
    if (telemetry !== undefined && !telemetry.ready) await telemetry.load();
    const span = telemetry?.start({
      id,
      occurrence,
      attempt: manifest.attempt,
      role: manifest.role,
      model: manifest.model,
      namespace: this.namespace,
      mode: this.mode,
      store: this.store.url,
      runId: scope?.runId,
    });
    try {
      const answer = await this.#answer({
        req,
        fn,
        opts,
        identityOpts,
        manifest,
        id,
        occurrence,
        key,
        scope,
        note,
      });
      this.#endCall(manifest, id, occurrence, scope, note, started, span, answer);
      served.from = answer.shared
        ? "recorded" // a follower: its verdict goes with the leader's recording
        : answer.hit
          ? "hit"
          : this.mode === "passthrough" || this.mode === "verify"
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
      this.#endCall(manifest, id, occurrence, scope, note, started, span, undefined, error);
      throw error;
    }
  }

  /** [hook: accounting/telemetry] account for one call, emit its `call` event, end its span. */
  #endCall(
    manifest: Manifest,
    id: string,
    occurrence: number,
    scope: RunScope | undefined,
    note: CallNote,
    started: number,
    span: ReturnType<CallTelemetry["start"]>,
    answer: Answer | undefined,
    error?: unknown,
  ): void {
    const upstream = note.upstream && answer?.shared !== true;
    const usage =
      answer === undefined
        ? undefined
        : (answer.usage ?? (upstream ? extractUsage(answer.value) : undefined));
    const runIds: string[] = [];
    for (let s: RunInfo | undefined = scope; s !== undefined; s = s.parent) runIds.push(s.runId);
    const cost = priceCall(manifest.model, usage);
    const summary: CallSummary = {
      id,
      occurrence,
      attempt: manifest.attempt,
      role: manifest.role,
      model: manifest.model,
      namespace: this.namespace,
      mode: this.mode,
      runIds,
      outcome:
        answer === undefined ? "error" : answer.hit ? "hit" : note.recorded ? "recorded" : "live",
      shared: answer?.shared === true,
      missed: note.missed,
      upstream,
      ...(usage === undefined ? {} : { usage }),
      ...(cost === undefined ? {} : { cost }),
      modelMs: answer?.durationMs ?? 0,
      elapsedMs: Math.round((performance.now() - started) * 1000) / 1000,
    };
    addToAccounts(this.stats, summary);
    this.#events.emit("call", summary);
    span?.end(summary, {
      verdict: note.verdict,
      divergence: note.divergence,
      bypass: note.bypass,
      ...(error === undefined ? {} : { error }),
    });
  }

  get maxEntryBytes(): number {
    return this.#maxEntryBytes;
  }

  stream<H extends JsonValue, E extends JsonValue>(
    req: InvocationRequest,
    fn: (start: StreamStart) => Promise<{ head: H; events: AsyncIterable<E> }>,
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
    opts: { reason?: string; run?: RunInfo } = {},
  ): Promise<void> {
    if (verdict !== "accepted" && verdict !== "rejected") {
      throw new TypeError(
        `verdict must be "accepted" or "rejected", got ${JSON.stringify(verdict)}`,
      );
    }
    if (opts.reason !== undefined && typeof opts.reason !== "string") {
      throw new TypeError("verdict reason must be a string");
    }
    const scope =
      opts.run === undefined
        ? this.#runs.getStore()
        : this.#ownRun(opts.run, "recorder.verdict: opts.run");
    const served =
      scope?.lastServed(id) ?? (scope === undefined ? this.#lastServed.get(id) : undefined);
    if (served === undefined) {
      throw new UnknownInvocationError(
        id,
        `recorder.verdict: ${String(id).slice(0, 12)} was not served by this recorder${scope ? ` in run ${scope.runId}` : ""}; pass the id of a call this recorder answered (recorder.last.id)`,
      );
    }
    scope?.addVerdict({ id, occurrence: served.occurrence, verdict });
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
      this.#storeFailed(`could not read ${key} to attach a verdict; it was not stored`, error, id);
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
    switch (this.mode) {
      case "passthrough": {
        c.note.bypass = "passthrough mode";
        this.stats.bypassed++;
        this.#events.emit("bypass", {
          id: c.id,
          occurrence: c.occurrence,
          reason: "passthrough mode",
        });
        return { value: await live(c), hit: false };
      }
      case "record":
        // Record mode does not read, but a cassette that cannot be loaded is
        // a fixture error to show before a paid call, not after it.
        await this.#peek(c.key);
        return this.#shared(c, () => this.#recordLive(c));
      case "verify":
        return this.#verify(c);
      case "replay":
      case "auto": {
        const found = await this.#lookup(c);
        if (found !== undefined) return found;
        if (this.mode === "replay") {
          this.#countMiss(c);
          throw await missError({
            store: this.store,
            namespace: this.namespace,
            id: c.id,
            occurrence: c.occurrence,
            mode: this.mode,
            manifest: c.manifest,
            raw: { prompt: c.req.prompt, task: c.req.task },
            normalize: { ...c.identityOpts, projectPath: c.req.projectPath },
            rerecord: this.#opts.rerecordHint,
            inRun: c.scope !== undefined,
          });
        }
        return this.#shared(c, () => {
          this.#countMiss(c);
          return this.#recordShared(c);
        });
      }
    }
  }

  #countMiss(c: CallContext): void {
    c.note.missed = true; // stats.misses is counted with the call's accounts (#endCall)
    this.#events.emit("miss", { id: c.id, occurrence: c.occurrence, key: c.key, mode: this.mode });
  }

  /** A hit, or undefined on a miss. A store failure is an error in replay, a bypass otherwise. */
  async #lookup(c: CallContext): Promise<Answer | undefined> {
    let raw: JsonValue | undefined;
    try {
      raw = await this.store.get(c.key);
    } catch (error) {
      if (this.mode === "replay") throw error;
      this.#storeFailed(
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

  #countHit(c: CallContext, savedMs: number): void {
    // stats.hits is counted with the call's accounts (#endCall), single-flight followers included.
    this.stats.savedMs += savedMs;
    this.#events.emit("hit", { id: c.id, occurrence: c.occurrence, key: c.key, savedMs });
  }

  #hit(c: CallContext, entry: Entry): Answer {
    this.#countHit(c, entry.meta.durationMs);
    c.note.verdict = entry.meta.verdict?.verdict;
    // [hook: accounting] the usage the recording cost: stored with it, or read from an older recording.
    const usage = entry.meta.usage ?? extractUsage(entry.response);
    const value =
      this.#opts.restoreSecrets === true
        ? restoreSecrets(
            entry.response,
            this.#opts.secrets === false ? {} : (this.#opts.secrets ?? {}),
          ).value
        : entry.response;
    return {
      value,
      hit: true,
      durationMs: entry.meta.durationMs,
      ...(usage === undefined ? {} : { usage }),
    };
  }

  /**
   * In-process single-flight: concurrent calls for one entry share one
   * upstream call, and each caller's own signal and policy apply to its own
   * wait. A follower that aborts rejects alone; when the leader aborts, the
   * followers take over (one leads, the others follow it); a follower whose
   * `isComplete` refuses the shared answer calls upstream itself (not
   * stored: the entry is the leader's). A follower did not go upstream: it is
   * counted as a hit with the leader's time, and gets its own copy.
   */
  async #shared(c: CallContext, lead: () => Promise<Answer>): Promise<Answer> {
    for (;;) {
      const flight = this.#flights.get(c.key);
      if (flight === undefined) {
        const mine: Flight = {
          promise: lead().then((a) =>
            c.abandoned === undefined ? a : { ...a, unshareable: true },
          ),
          signal: c.opts.signal,
        };
        this.#flights.set(c.key, mine);
        const forget = () => this.#land(c.key, mine);
        mine.promise.then(forget, forget);
        return mine.promise;
      }
      let shared: Answer;
      try {
        shared = await untilAborted(flight.promise, c.opts.signal);
      } catch (error) {
        if (c.opts.signal?.aborted) throw error;
        if (flight.signal?.aborted === true) {
          // The leader gave up on its own; nothing was stored. Take over.
          this.#land(c.key, flight);
          continue;
        }
        throw error; // the upstream failed: the same call would fail the same way
      }
      if (shared.unshareable === true) {
        this.#land(c.key, flight);
        continue;
      }
      const complete = c.opts.isComplete ?? this.#opts.isComplete;
      if (complete !== undefined && !complete(shared.value)) {
        return this.#bypass(c, "the shared answer failed this call's isComplete");
      }
      this.#countHit(c, shared.durationMs ?? 0);
      return {
        value: structuredClone(shared.value),
        hit: true,
        shared: true,
        ...(shared.durationMs === undefined ? {} : { durationMs: shared.durationMs }),
        ...(shared.usage === undefined ? {} : { usage: shared.usage }),
      };
    }
  }

  #land(key: string, flight: Flight): void {
    if (this.#flights.get(key) === flight) this.#flights.delete(key);
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
        this.#storeFailed(
          `store ${this.store.url} failed to lease ${leaseKey}; calling upstream without single-flight`,
          error,
          c.id,
        );
        return this.#recordLive(c);
      }
      if (acquired) {
        try {
          // Someone may have recorded it between our miss and our lease.
          const raw = await this.#peek(c.key);
          if (raw !== undefined)
            return this.#hit(c, validateEntry(raw, `${this.store.url} ${c.key}`, TRUSTED));
          return await this.#recordLive(c, leaseKey);
        } finally {
          await this.store.releaseLease(leaseKey, this.#owner).catch(() => {});
        }
      }
      await sleep(delay, c.opts.signal);
      delay = Math.min(delay * 2, 250);
      const raw = await this.#peek(c.key);
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
    c.note.bypass = reason;
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
    if (c.abandoned !== undefined) {
      // A stream that passed the entry limit: recording stopped there, the reader goes on live.
      const a = c.abandoned;
      const requestBytes = Buffer.byteLength(JSON.stringify(c.manifest));
      const error = new EntryTooLargeError(
        c.id,
        a.bytes + requestBytes,
        this.#maxEntryBytes,
        value,
        {
          part: "response",
          requestBytes,
          responseBytes: a.bytes,
          streamEvents: a.events,
        },
      );
      if (this.mode === "record") throw error;
      this.#warn(error.message, error, c.id);
      this.stats.bypassed++;
      return { value, hit: false, durationMs };
    }
    const complete = c.opts.isComplete ?? this.#opts.isComplete;
    if (complete !== undefined && !complete(value)) {
      this.#events.emit("bypass", {
        id: c.id,
        occurrence: c.occurrence,
        reason: "incomplete response (isComplete returned false)",
      });
      this.stats.bypassed++;
      return { value, hit: false, durationMs };
    }
    assertJsonValue(value, "response");
    // [hook: accounting] tokens as the response reports them (none for an unknown shape).
    const usage = extractUsage(value);
    const entry: Entry = {
      v: 1,
      id: c.id,
      manifest: c.manifest,
      // The caller gets the live value; the store never sees a secret.
      response: this.#secrets === undefined ? value : this.#secrets.redact(value).value,
      meta: {
        recordedAt: new Date().toISOString(),
        durationMs,
        ...(usage === undefined ? {} : { usage }),
        normalization: NORMALIZATION_VERSION,
        invocacheVersion: INVOCACHE_VERSION,
        occurrence: c.occurrence,
        attempt: c.manifest.attempt,
        ...(c.manifest.attempt > 0 ? { parent: parentId(c) } : {}),
      },
    };
    const bytes = Buffer.byteLength(JSON.stringify(entry));
    if (bytes > this.#maxEntryBytes) {
      const requestBytes = Buffer.byteLength(JSON.stringify(entry.manifest));
      const responseBytes = Buffer.byteLength(JSON.stringify(entry.response));
      const error = new EntryTooLargeError(c.id, bytes, this.#maxEntryBytes, value, {
        part: requestBytes > responseBytes ? "request" : "response",
        requestBytes,
        responseBytes,
      });
      if (this.mode === "record") throw error;
      this.#warn(error.message, error, c.id);
      this.stats.bypassed++;
      return { value, hit: false, durationMs };
    }
    await this.#write(c.key, entry, c.id);
    this.stats.recorded++;
    c.note.recorded = true;
    this.#events.emit("record", {
      id: c.id,
      occurrence: c.occurrence,
      key: c.key,
      durationMs,
      ...(usage === undefined ? {} : { usage }),
    });
    return { value, hit: false, durationMs, ...(usage === undefined ? {} : { usage }) };
  }

  async #verify(c: CallContext): Promise<Answer> {
    // Read first: a malformed cassette is an error before anything goes upstream.
    let raw: JsonValue | undefined;
    try {
      raw = await this.store.get(c.key);
    } catch (error) {
      this.#storeFailed(
        `store ${this.store.url} failed on read; nothing to verify against`,
        error,
        c.id,
      );
    }
    const value = await live(c);
    if (c.abandoned !== undefined) {
      this.#warn(
        `the stream of ${c.id.slice(0, 12)} passed the entry limit; it was not compared with the recording`,
        undefined,
        c.id,
      );
      return { value, hit: false };
    }
    const recorded =
      raw === undefined
        ? undefined
        : validateEntry(raw, `${this.store.url} ${c.key}`, TRUSTED).response;
    if (JSON.stringify(recorded) !== JSON.stringify(value)) {
      c.note.divergence = "response";
      this.stats.divergences++;
      this.#events.emit("divergence", {
        kind: "response",
        id: c.id,
        occurrence: c.occurrence,
        expected: recorded ?? null,
        actual: value,
      });
    }
    return { value, hit: false };
  }

  async #write(key: string, entry: Entry, id: string): Promise<void> {
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
      if (this.mode === "record") throw error;
      this.#storeFailed(
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
      ...(scope.parent === undefined ? {} : { parentRunId: scope.parent.runId }),
      summary: this.stats.byRun[scope.runId] ?? emptyTally(), // [hook: accounting]
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
        this.#storeFailed(`could not read run ${scope.runId}`, error);
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
      this.#storeFailed(`could not store run ${scope.runId}`, error);
    }
  }

  #rememberServed(call: ServedCall): void {
    this.#lastServed.delete(call.id);
    this.#lastServed.set(call.id, call);
    if (this.#lastServed.size > 10_000)
      this.#lastServed.delete(this.#lastServed.keys().next().value as string);
  }

  /**
   * A read whose failure only costs a shortcut (a re-check after a lease, the
   * record-mode probe): undefined on a store failure, which the next write
   * reports. A cassette that cannot be loaded is thrown.
   */
  async #peek(key: string): Promise<JsonValue | undefined> {
    try {
      return await this.store.get(key);
    } catch (error) {
      if (error instanceof CassetteError) throw error;
      return undefined;
    }
  }

  /**
   * A store failure the call survives (fail-open). Never silent: a `warning`
   * event each time, and the first one of this recorder also goes to
   * `process.emitWarning` (Node's convention for a degraded library), with
   * the cause and the fix. A cassette that cannot be used is a fixture error,
   * never an outage: it is thrown in every mode.
   */
  #storeFailed(message: string, error: unknown, id?: string): void {
    if (error instanceof CassetteError) throw error;
    this.#warn(message, error, id);
    const cause = error instanceof Error ? error.message : String(error);
    this.#processWarning(
      "INVOCACHE_STORE_DEGRADED",
      `invocache: the cache is degraded: ${message} (cause: ${cause}). Calls still get answers, from upstream, but are not replayed or recorded while the store fails.`,
      `Fix the store (${this.store.url}): check that it is reachable, readable and writable. Every failure is also a recorder "warning" event (recorder.on("warning", …)); use mode: "replay" (or INVOCACHE_MODE=replay) to fail instead of calling upstream. This warning is shown once per recorder.`,
    );
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
  fn: () => Promise<unknown>;
  opts: CallOptions;
  identityOpts: IdentityOptions;
  manifest: Manifest;
  id: string;
  occurrence: number;
  key: string;
  scope: RunScope | undefined;
  storeDown?: boolean;
  /** Set when the call was a stream that passed the entry limit (recording given up). */
  abandoned?: StreamTooLarge;
  /** [hook: accounting/telemetry] what happened, for the `call` event and the span. */
  note: CallNote;
}

/** What the policy tells the accounting about one call. */
interface CallNote {
  /** `fn` was called (the model was reached). */
  upstream: boolean;
  missed: boolean;
  recorded?: boolean;
  verdict?: string | undefined;
  divergence?: string;
  bypass?: string;
}

/**
 * Call upstream, honouring the abort signal: an aborted call is an error,
 * never a result, and it rejects when the signal aborts even if `fn` does
 * not listen to it (its late answer is dropped, never stored).
 */
async function live(c: CallContext): Promise<unknown> {
  const signal = c.opts.signal;
  signal?.throwIfAborted();
  c.note.upstream = true; // [hook: accounting]
  let value: unknown;
  try {
    value = await untilAborted(c.fn(), signal);
  } catch (error) {
    if (!(error instanceof StreamTooLarge)) throw error;
    c.abandoned = error;
    return error.value;
  }
  signal?.throwIfAborted();
  return value;
}

/** `p`, or a rejection with the signal's reason as soon as it aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** The identity of attempt n-1 of the same step (RELOOP layer 3: verdict chains). */
function parentId(c: CallContext): string {
  return manifestIdentity({ ...c.manifest, attempt: c.manifest.attempt - 1 });
}

function stripCallOnly(opts: CallOptions): IdentityOptions {
  const { signal: _s, isComplete: _c, onServed: _o, run: _r, ...rest } = opts;
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
