/**
 * The recorder: the one place where replay policy lives. `createRecorder` is
 * the entry point; this file holds the call pipeline, top to bottom:
 *
 * 1. identity: the request becomes a manifest and an id (src/identity); its
 *    kind (model or tool) picks the recipe and the call's mode;
 * 2. run scope: the occurrence of that id in the run (run-scope.ts);
 * 3. the call pipeline (pipeline.ts): its steps in the order they run,
 *    side-effect rule, route by mode, lookup, replay miss, share, lease,
 *    upstream, record, verify (docs/recorder.md, "The call pipeline");
 * 4. what served it is remembered for verdicts (verdicts.ts, served.ts);
 *    a failed or live-answered call gives its occurrence back;
 * 5. answered or failed, it is accounted for: the `call` event, the savings
 *    accounts in `stats`, the end of its span (accounting.ts).
 *
 * A stream goes through the same pipeline (stream-call.ts). Stores only
 * keep values (store failures: fail-open.ts); adapters only translate. Run
 * records are in run-records.ts.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type {
  IdentityOptions,
  InvocationRequest,
  Manifest,
  ToolInvocationRequest,
} from "../identity/index.js";
import { callKind } from "../identity/internal.js";
import type { CallTelemetry } from "../observability/index.js";
import type { JsonValue, Store } from "../store/index.js";
import { entryPrefix } from "../store/index.js";
import { emptyAccounts, settleAccounts } from "../usage/index.js";
import { endCall } from "./accounting.js";
import { identityOptionsOf, NO_OPTIONS } from "./call-options.js";
import type { Answer, CallContext, CallFacts, Core } from "./core.js";
import { UnknownInvocationError } from "./errors.js";
import { Emitter, type Listener, type RecorderEvents } from "./events.js";
import { FailOpen } from "./fail-open.js";
import type { ResolvedModes } from "./kind-modes.js";
import type { Live } from "./live.js";
import { missLogFor, rememberMissLog } from "./miss-log.js";
import type { Mode } from "./mode.js";
import { type OnceAs, onceAs, settled } from "./once.js";
import { resolveOptions } from "./options.js";
import { answerCall } from "./pipeline.js";
import { probesBeforeRecord } from "./record-probe.js";
import { endRun } from "./run-records.js";
import { type RunInfo, RunScope, type ServedCall, servedStep } from "./run-scope.js";
import { ServedMemory } from "./served.js";
import { SingleFlight } from "./single-flight.js";
import { stalenessView } from "./staleness.js";
import { streamCall } from "./stream-call.js";
import type {
  CallOptions,
  LiveStreamResult,
  Recorder,
  RecorderIdentityDefaults,
  RecorderOptions,
  RecorderStats,
  StreamOpened,
  StreamOptions,
  StreamResult,
  StreamStart,
} from "./types.js";
import { checkVerdict, recordVerdict } from "./verdicts.js";

export type {
  CallOptions,
  Recorder,
  RecorderIdentityDefaults,
  RecorderOptions,
  RecorderStats,
  ServedInfo,
} from "./types.js";

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

class RecorderImpl implements Recorder {
  readonly mode: Mode;
  readonly modes: ResolvedModes;
  readonly namespace: string;
  readonly identity: Readonly<RecorderIdentityDefaults>;
  readonly store: Store;
  readonly maxEntryBytes: number;
  /** Read through `stats`, which prices the calls not priced yet first (accounting.ts). */
  readonly #stats: RecorderStats = {
    ...emptyAccounts(),
    hits: 0,
    misses: 0,
    recorded: 0,
    bypassed: 0,
    savedMs: 0,
    divergences: 0,
  };
  last: Recorder["last"];
  readonly #core: Core;

  /** The savings accounts, every call priced (see `settleAccounts`). */
  get stats(): RecorderStats {
    settleAccounts(this.#stats);
    return this.#stats;
  }
  /** Spans and counters per call; undefined with `telemetry: false`. */
  readonly #telemetry: CallTelemetry | undefined;
  readonly #ownsStore: boolean;
  readonly #flights = new SingleFlight();
  readonly #runs = new AsyncLocalStorage<RunScope>();
  /** Runs this recorder opened (to refuse another recorder's run handle). */
  readonly #ownRuns = new WeakSet<RunScope>();
  /** Outermost runs still going: a call outside every run is checked against them. */
  readonly #activeRoots = new Set<RunScope>();
  readonly #served = new ServedMemory();
  /** `${namespace}:e:`, the start of every entry key of this recorder. */
  readonly #entryPrefix: string;
  /** What `once` became (once.ts): unset until the first call decides it. */
  readonly #once: { as?: OnceAs; deciding?: Promise<OnceAs> } = {};

  constructor(opts: RecorderOptions) {
    const s = resolveOptions(opts);
    this.mode = s.mode;
    this.modes = s.modes;
    this.namespace = s.namespace;
    this.#entryPrefix = entryPrefix(s.namespace);
    this.identity = s.identity;
    this.store = s.store;
    this.maxEntryBytes = s.maxEntryBytes;
    this.#ownsStore = s.ownsStore;
    this.#telemetry = s.telemetry;
    const events = new Emitter();
    // Read and written through the staleness policy (the store itself when there is none).
    const store = stalenessView(s.store, s.staleness, events, s.modes);
    const once = this.#once;
    this.#core = {
      // `once` reads as what it became, so runs and verdicts follow it.
      get mode(): Mode {
        return once.as === undefined ? s.mode : settled(s.mode, once.as);
      },
      namespace: s.namespace,
      store,
      stats: this.#stats,
      events,
      opts: s.opts,
      secrets: s.secrets,
      maxEntryBytes: s.maxEntryBytes,
      leaseMs: s.leaseMs,
      owner: `invocache-${randomUUID()}`,
      failOpen: new FailOpen(store, events, s.mode, s.ttl, s.secrets),
      probesBeforeRecord: probesBeforeRecord(s.store.url, s.staleness !== undefined),
      missLog: missLogFor(s.store.url, s.opts.missLog, s.opts.projectRoot ?? process.cwd()),
    };
    rememberMissLog(this, this.#core.missLog);
  }

  on<K extends keyof RecorderEvents>(name: K, listener: Listener<K>): () => void {
    return this.#core.events.on(name, listener);
  }

  async call<T>(
    req: InvocationRequest | ToolInvocationRequest,
    fn: () => Promise<T | Live<T>>,
    opts: CallOptions = NO_OPTIONS,
  ): Promise<T> {
    if (typeof fn !== "function")
      throw new TypeError("recorder.call: fn must be a function returning a promise");
    // Most calls give no identity option: the recorder's defaults are used as they are.
    const identityOpts = identityOptionsOf(this.identity, opts);
    // The request's kind picks the recipe and the mode (identity's kind table, kind-modes.ts).
    const spec = callKind(req);
    const { kind } = spec;
    let mode = this.modes[kind];
    if (mode === "once") mode = this.#once.as ?? (await this.#settleOnce());
    const manifest = spec.manifest(req, identityOpts);
    const id = spec.identity(manifest);
    const scope = this.#scopeOf(opts.run, "recorder.call: opts.run");
    if (scope === undefined && this.#activeRoots.size > 0) this.#checkLostRun(id);
    const served: ServedCall = scope?.reserve(id, servedStep(manifest)) ?? new OutsideRun(id);
    const { occurrence } = served;
    // `id` is a hash this recorder just made and the namespace was checked
    // when it was created: the key needs no second check (envelope.ts, entryKey).
    const key = `${this.#entryPrefix}${id}:${occurrence}`;
    const c: CallContext = new Call(
      req as InvocationRequest,
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
    );
    const started = performance.now();
    const telemetry = this.#telemetry;
    if (telemetry !== undefined && !telemetry.ready) await telemetry.load(); // first call only
    // `active` first: with OpenTelemetry absent or without an SDK, nothing is built.
    const span =
      telemetry?.active !== true
        ? undefined
        : telemetry.start({
            id,
            occurrence,
            attempt: manifest.attempt,
            role: manifest.role,
            model: spec.model(manifest),
            namespace: this.namespace,
            mode,
            store: this.store.url,
            runId: scope?.runId,
          });
    let answer: Answer;
    try {
      answer = await answerCall(this.#core, this.#flights, c);
    } catch (error) {
      this.#unserved(served, scope);
      endCall(this.#core, c, started, span, undefined, error);
      throw error;
    }
    endCall(this.#core, c, started, span, answer);
    if (answer.live === true) {
      this.#unserved(served, scope);
      return answer.value as T;
    }
    served.from = servedFrom(answer, mode);
    if (scope === undefined) this.#served.remember(served);
    this.last = { id, occurrence, hit: answer.hit, manifest };
    opts.onServed?.({ id, occurrence, hit: answer.hit, manifest });
    return answer.value as T;
  }

  /**
   * A failed call (a 429 the SDK retries, an abort) or one answered live did
   * not happen as far as the run's trajectory goes: give its occurrence back,
   * so the retry that succeeds is the occurrence a replay will ask for.
   */
  #unserved(served: ServedCall, scope: RunScope | undefined): void {
    if (scope !== undefined) scope.release(served);
    else served.from = "failed";
  }

  stream<H extends JsonValue, E extends JsonValue>(
    req: InvocationRequest,
    fn: (start: StreamStart) => Promise<StreamOpened<H, E>>,
    opts?: StreamOptions,
  ): Promise<StreamResult<H, E>>;
  stream<H extends JsonValue, E extends JsonValue, L>(
    req: InvocationRequest,
    fn: (start: StreamStart) => Promise<StreamOpened<H, E> | Live<L>>,
    opts?: StreamOptions,
  ): Promise<StreamResult<H, E> | LiveStreamResult<L>>;
  stream<H extends JsonValue, E extends JsonValue, L>(
    req: InvocationRequest,
    fn: (start: StreamStart) => Promise<StreamOpened<H, E> | Live<L>>,
    opts?: StreamOptions,
  ): Promise<StreamResult<H, E> | LiveStreamResult<L>> {
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
        params: { args }, // checked as JSON when the manifest is built (request.params)
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
    checkVerdict(verdict, opts.reason);
    const scope = this.#scopeOf(opts.run, "recorder.verdict: opts.run");
    const served =
      scope?.lastServed(id) ?? (scope === undefined ? this.#served.get(id) : undefined);
    if (served === undefined) {
      throw new UnknownInvocationError(
        id,
        `recorder.verdict: ${String(id).slice(0, 12)} was not served by this recorder${scope ? ` in run ${scope.runId}` : ""}; pass the id of a call this recorder answered (recorder.last.id)`,
      );
    }
    await recordVerdict(this.#core, served, verdict, opts.reason, scope);
  }

  // ---- runs -----------------------------------------------------------------

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
    // A run without a call still ends under what `once` is: replay keeps a stored trajectory.
    if (this.#once.as === undefined && (this.mode === "once" || this.modes.tool === "once"))
      await this.#settleOnce();
    await endRun(this.#core, scope);
    return result;
  }

  async withRun<T>(run: RunInfo, fn: () => Promise<T>): Promise<T> {
    if (typeof fn !== "function")
      throw new TypeError("recorder.withRun: fn must be an async function");
    const scope = this.#ownRun(run, "recorder.withRun: run");
    return this.#runs.run(scope, fn);
  }

  /** The run a call or verdict counts in: the one given, else the async context's. */
  #scopeOf(run: RunInfo | undefined, what: string): RunScope | undefined {
    return run === undefined ? this.#runs.getStore() : this.#ownRun(run, what);
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
      this.#core.failOpen.warn(message, undefined, id);
      this.#core.failOpen.processWarning("INVOCACHE_RUN_SCOPE_LOST", message);
      return;
    }
  }

  /** Decide what `once` is for this recorder (once.ts); every caller waits for the one decision. */
  #settleOnce(): Promise<OnceAs> {
    const once = this.#once;
    once.deciding ??= onceAs(this.#core.store, this.namespace).then((as) => {
      once.as = as;
      return as;
    });
    return once.deciding;
  }

  async close(): Promise<void> {
    await this.#core.failOpen.drain();
    if (this.#ownsStore) await this.store.close();
  }
}

/** What a verdict on this call will attach to. */
function servedFrom(answer: Answer, mode: Mode): ServedCall["from"] {
  if (answer.shared) return "recorded"; // a follower: its verdict goes with the leader's recording
  if (answer.hit) return "hit";
  if (answer.uncached === true) return "live"; // a tool with side effects: nothing recorded
  return mode === "passthrough" || mode === "verify" ? "live" : "recorded";
}

/** A call outside every run: occurrence 0, remembered for verdicts (served.ts). */
class OutsideRun implements ServedCall {
  readonly occurrence = 0;
  from: ServedCall["from"] = "pending";
  constructor(readonly id: string) {}
}

/**
 * One call's context (core.ts): a class, so that making one per call is one
 * allocation of a known shape, and `fn` is wrapped without a closure.
 */
class Call implements CallContext {
  readonly facts: CallFacts = { upstream: false, missed: false };
  readonly #fn: () => Promise<unknown>;
  /** `fn` as handed out, made on first use (a hit never calls upstream). */
  #upstream: (() => Promise<unknown>) | undefined;

  constructor(
    readonly req: InvocationRequest,
    readonly kind: CallContext["kind"],
    readonly mode: Mode,
    fn: () => Promise<unknown>,
    readonly opts: CallOptions,
    readonly identityOpts: IdentityOptions,
    readonly manifest: Manifest,
    readonly id: string,
    readonly occurrence: number,
    readonly key: string,
    readonly scope: RunScope | undefined,
  ) {
    this.#fn = fn;
  }

  /** Calls upstream, noted in `facts` for the accounting. */
  get fn(): () => Promise<unknown> {
    this.#upstream ??= () => {
      this.facts.upstream = true;
      return this.#fn();
    };
    return this.#upstream;
  }
}
