/**
 * The recorder's public contract: its options, per-call options, what a call
 * reports, and the `Recorder` interface itself. Types only, so every part of
 * the recorder (and stream-call.ts) can name them without importing the class.
 */
import type {
  IdentityOptions,
  InvocationRequest,
  Manifest,
  ToolInvocationRequest,
} from "../identity/index.js";
import type { TelemetryOptions } from "../observability/index.js";
import type { SecretOptions } from "../secrets/index.js";
import type { JsonValue, OnStale, Store } from "../store/index.js";
import type { Accounts } from "../usage/index.js";
import type { Listener, RecorderEvents } from "./events.js";
import type { KindModes, ResolvedModes } from "./kind-modes.js";
import type { Live } from "./live.js";
import type { Mode } from "./mode.js";
import type { RunInfo } from "./run-scope.js";
import type { ToolPolicy } from "./tool-policy.js";

/** Identity options a recorder applies to every call (per-call options win). */
export type RecorderIdentityDefaults = Pick<
  IdentityOptions,
  "homeDir" | "tmpDirs" | "roots" | "rules" | "disableRules"
>;

/** Options of `createRecorder`. */
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
   * Where replay misses are logged for `invocache view`'s Misses page (the
   * newest 200 kept): default beside a `sqlite://` store, else
   * `<projectRoot>/.invocache/.invocache-misses/misses.jsonl` (ignored by
   * git); none for `memory://`. `false` logs nothing. The miss error says
   * where it went.
   */
  missLog?: string | false;
  /**
   * Secrets (default on): values of secret env variables, as they are when the
   * recorder is created, and known key shapes are replaced by `{secret:NAME}`
   * in the manifest (so in the identity) and in every response before it is
   * stored. `false` turns that off; options tune it (see src/secrets).
   */
  secrets?: false | SecretOptions;
  /** On a hit, put env secret values back where the recording has `{secret:NAME}`. Default false. */
  restoreSecrets?: boolean;
  /**
   * Recordings older than this are stale: ms, or `"30d"`, `"12h"`… (by their
   * `meta.recordedAt`). Default: never, or the store's `policy.maxAge` (a
   * cassette's `maxAge`). Works on every store (docs/recorder.md, "Staleness").
   */
  maxAge?: number | string;
  /**
   * What reading a stale recording does: `"warn"` (default, served),
   * `"error"` (`StaleEntryError`), `"rerecord"` (read as absent, recorded anew).
   */
  onStale?: OnStale;
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
   * The model time of this call, when `fn` only hands over an answer fetched
   * earlier (a cache's `update` after its `lookup` missed): recorded as the
   * entry's `durationMs` (what each replay saves) instead of the time `fn`
   * took. Milliseconds, finite and ≥ 0; anything else is ignored.
   */
  upstreamMs?: number | undefined;
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

/** How a stream is stored: the head (status, headers, ids…) and timed events. */
export interface RecordedStream<H extends JsonValue = JsonValue, E extends JsonValue = JsonValue> {
  kind: "stream";
  head: H;
  /**
   * Milliseconds from the start of the upstream call to the head, 0.1 ms
   * resolution (absent in entries recorded before it was kept: no wait).
   * The time to event i from the call's start is `headAt + events[i].t`.
   */
  headAt?: number;
  /** `t`: milliseconds since the head arrived, 0.1 ms resolution. */
  events: { t: number; data: E }[];
}

/** What `recorder.stream` resolves to. */
export interface StreamResult<H, E> {
  head: H;
  events: AsyncIterable<E>;
  /** Whether this was served from a recording. */
  hit: boolean;
}

/** What `recorder.stream` resolves to when `fn` answered with `answerLive(value)`: nothing was stored. */
export interface LiveStreamResult<L> {
  live: L;
  hit: false;
}

/** What `fn` of `recorder.stream` is given. */
export interface StreamStart {
  /** Aborts when the reader stops reading or the call's own signal aborts: pass it to `fetch`. */
  signal: AbortSignal;
}

/** Options of `recorder.stream`. */
export interface StreamOptions extends CallOptions {
  /** Replay as fast as possible (default) or with the recorded gaps between events. The older spelling of `replaySpeed` 0 / 1. */
  timing?: "none" | "recorded";
  /**
   * How fast a replayed stream comes back: 0 = as fast as possible (the
   * default), 1 = with the recorded time to the head and gaps between
   * events, 2 = twice as fast. A finite number ≥ 0, else `InvalidOptionError`.
   */
  replaySpeed?: number;
}

/** What `fn` of `recorder.stream` resolves to: the head and the live events. */
export interface StreamOpened<H, E> {
  head: H;
  events: AsyncIterable<E>;
}

/** A recorder: see `createRecorder`. */
export interface Recorder {
  /** The mode of model calls (and of tool calls unless `modes.tool` differs). */
  readonly mode: Mode;
  /** The mode of each kind of invocation. */
  readonly modes: ResolvedModes;
  readonly namespace: string;
  readonly store: Store;
  /**
   * Replay or call `fn` for `req`, per mode. `fn` may resolve to
   * `answerLive(value)`: `value` goes back to the caller, nothing is stored
   * and the call does not count in the run (as for a failure). A
   * `{ kind: "tool", … }` request is a tool call (docs/tools.md).
   */
  call<T>(
    req: InvocationRequest | ToolInvocationRequest,
    fn: () => Promise<T | Live<T>>,
    opts?: CallOptions,
  ): Promise<T>;
  /**
   * Record or replay a streaming call: `fn` resolves to a head and an async
   * iterable of JSON events. Live events reach the caller while they are
   * recorded; see stream-call.ts.
   */
  stream<H extends JsonValue, E extends JsonValue>(
    req: InvocationRequest,
    fn: (start: StreamStart) => Promise<StreamOpened<H, E>>,
    opts?: StreamOptions,
  ): Promise<StreamResult<H, E>>;
  /** As above; `fn` may also resolve to `answerLive(value)`, handed back as `{ live: value }`, unstored. */
  stream<H extends JsonValue, E extends JsonValue, L>(
    req: InvocationRequest,
    fn: (start: StreamStart) => Promise<StreamOpened<H, E> | Live<L>>,
    opts?: StreamOptions,
  ): Promise<StreamResult<H, E> | LiveStreamResult<L>>;
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
  /**
   * The normalization roots and rules applied to every call (read-only).
   * Kept for compatibility: the recorder applies them itself, so adapters
   * never need them.
   */
  readonly identity: Readonly<RecorderIdentityDefaults>;
  readonly stats: Readonly<RecorderStats>;
  on<K extends keyof RecorderEvents>(name: K, listener: Listener<K>): () => void;
  /** Wait for pending writes and close the store (only if the recorder opened it). */
  close(): Promise<void>;
}
