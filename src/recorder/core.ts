/**
 * What every part of the recorder shares: its settings and counters (one
 * `Core` per recorder), one call on its way (`CallContext`, read-only once
 * built), what upstream gave (`Upstream`) and what answered it (`Answer`).
 * Each step of the pipeline (pipeline.ts) takes the part of `Core` it needs
 * (a `Pick<Core, …>` named in its file) and the call, and returns explicit
 * values; nothing is handed between steps by setting a field.
 */
import type { IdentityOptions, InvocationRequest, Manifest } from "../identity/index.js";
import type { SecretScanner } from "../secrets/index.js";
import type { JsonValue, Store } from "../store/index.js";
import type { Usage } from "../usage/index.js";
import type { Emitter } from "./events.js";
import type { FailOpen } from "./fail-open.js";
import type { InvocationKind } from "./kind-modes.js";
import type { Mode } from "./mode.js";
import type { RunScope } from "./run-scope.js";
import type { StreamTooLarge } from "./stream-limit.js";
import type { CallOptions, RecorderOptions, RecorderStats } from "./types.js";

/** Values read from a Store are JSON by the Store contract: check the envelope's shape only. */
export const TRUSTED = { deep: false } as const;

/** One recorder's settings, counters and event channel. */
export interface Core {
  /**
   * The mode of model calls. A call is answered by its own mode
   * (`CallContext.mode`); this one governs what belongs to the run as a
   * whole (run records, verdicts) and whether the model is strictly replayed.
   */
  readonly mode: Mode;
  readonly namespace: string;
  readonly store: Store;
  readonly stats: RecorderStats;
  readonly events: Emitter;
  readonly opts: RecorderOptions;
  /** Scrubs responses before they are stored; undefined with `secrets: false`. */
  readonly secrets: SecretScanner | undefined;
  readonly maxEntryBytes: number;
  readonly leaseMs: number;
  /** This recorder's lease owner name. */
  readonly owner: string;
  readonly failOpen: FailOpen;
  /** `record` mode reads the entry before going upstream, for a fixture error only (record-probe.ts). */
  readonly probesBeforeRecord: boolean;
  /** Where replay misses are logged (miss-log.ts); undefined: not logged. */
  readonly missLog: string | undefined;
}

/** One call, from identity to answer. */
export interface CallContext {
  /** A tool request is cast here: its fields are only read through `manifest` (tool-manifest.ts). */
  readonly req: InvocationRequest;
  /** Which recipe made the manifest (model or tool). */
  readonly kind: InvocationKind;
  /** The mode of this call: the recorder's mode for its kind. */
  readonly mode: Mode;
  readonly fn: () => Promise<unknown>;
  readonly opts: CallOptions;
  readonly identityOpts: IdentityOptions;
  readonly manifest: Manifest;
  readonly id: string;
  readonly occurrence: number;
  readonly key: string;
  readonly scope: RunScope | undefined;
  /** What happened, for the accounting only (see {@link CallFacts}). */
  readonly facts: CallFacts;
}

/**
 * The two facts about a call that must reach the accounting even when the
 * call throws (so no Answer carries them): whether `fn` was called, and
 * whether the lookup missed. Steps only set them; accounting.ts reads them
 * after the call; no decision ever reads them.
 */
export interface CallFacts {
  /** `fn` was called: the model was reached. */
  upstream: boolean;
  /** The call was looked up and not found. */
  missed: boolean;
}

/** What answered a call. */
export interface Answer {
  value: unknown;
  hit: boolean;
  /** Upstream time of the recording behind the value (what a follower saved). */
  durationMs?: number;
  /** Served to a single-flight follower: it did not go upstream, but shares the leader's recording. */
  shared?: boolean;
  /** Not a value a follower can use (a stream whose recording was given up, a live answer): followers call themselves. */
  unshareable?: boolean;
  /** `fn` answered with `answerLive`: nothing stored, the call does not count in the run. */
  live?: boolean;
  /**
   * Called upstream by policy and not stored, yet it counts in the run: a
   * tool with side effects on a shared store (tool-policy.ts). Served live,
   * so a verdict on it has no recording to attach to.
   */
  uncached?: boolean;
  /** Tokens of the recording behind the value (a hit), or as the live response reported them. */
  usage?: Usage;
  /** The value was stored as a new recording. */
  recorded?: boolean;
  /** The verdict stored with the recording a hit replayed. */
  verdict?: string;
  /** Why the call bypassed the cache, when it did. */
  bypass?: string;
  /** Verify mode: the live answer differed from the recording. */
  divergence?: "response";
}

/**
 * What came back from upstream (upstream.ts), handed by the pipeline to the
 * step that uses it (record, verify).
 */
export type Upstream =
  | { kind: "value"; value: unknown }
  /** `fn` answered with `answerLive`: hand back, never store. */
  | { kind: "live"; value: unknown }
  /** A stream past the entry limit: recording given up, the reader goes on live. */
  | { kind: "too-large"; value: unknown; limit: StreamTooLarge };

/** The `isComplete` in effect for a call (per call, else the recorder's). */
export function completeness(
  core: Pick<Core, "opts">,
  c: CallContext,
): ((v: unknown) => boolean) | undefined {
  return c.opts.isComplete ?? core.opts.isComplete;
}

/** A response as it is stored: secrets redacted (the caller keeps the live value). */
export function storable(core: Pick<Core, "secrets">, value: JsonValue): JsonValue {
  return core.secrets === undefined ? value : core.secrets.redact(value).value;
}
