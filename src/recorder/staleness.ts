/**
 * Staleness, a replay policy for every store (memory, SQLite, Redis,
 * Postgres, cassettes): a recording older than `maxAge` no longer says much
 * about today's model, and `onStale` says what happens when one is read
 * (docs/recorder.md, "Staleness"):
 *
 * - `warn` (default): served; a `warning` event each time and, once per
 *   entry and recorder, a process warning (or the store's `onWarning`).
 * - `error`: a `StaleEntryError`, in every mode.
 * - `rerecord`: read as absent, so `auto`/`record` record it anew (a miss in
 *   `replay`); the new recording is written with `refresh`, so a cassette
 *   does not keep the old bytes of an equal re-record and its age starts over.
 *
 * It works as a view of the store the recorder reads and writes through, so
 * every read (lookup, the lease re-check, verify) sees one policy. Without
 * `maxAge` there is no view: the store is used as it is. A recorder that
 * only records (every kind in `record` mode) serves nothing it reads: for
 * it every stale entry is `rerecord` (no warning, no error), so its
 * re-recording is a refresh and its age starts over.
 */

import { redactOutward } from "../secrets/index.js";
import type { GetOptions, JsonValue, SetOptions, Store, StorePolicy } from "../store/index.js";
import { isEntryKey } from "../store/index.js";
import { checkOnStale, isStale, type OnStale, parseMaxAge, recordedAt } from "../store/internal.js";
import { StaleEntryError } from "./errors.js";
import type { Emitter } from "./events.js";
import type { ResolvedModes } from "./kind-modes.js";

/** Staleness resolved: what a recorder runs with. */
export interface Staleness {
  /** `maxAge` as given (for messages). */
  readonly maxAge: number | string;
  readonly maxAgeMs: number;
  readonly onStale: OnStale;
  /** Where the once-per-entry warning goes (the store's `onWarning`); default `process.emitWarning`. */
  readonly onWarning: ((message: string) => void) | undefined;
}

/**
 * The recorder's staleness from its options, else the store's defaults;
 * undefined when no `maxAge` is set.
 *
 * @throws RangeError naming `maxAge`, TypeError naming `onStale`.
 */
export function resolveStaleness(
  opts: { maxAge?: number | string; onStale?: OnStale },
  policy: StorePolicy | undefined,
): Staleness | undefined {
  const onStale = checkOnStale(opts.onStale) ?? checkOnStale(policy?.onStale) ?? "warn";
  const maxAge = opts.maxAge ?? policy?.maxAge;
  if (maxAge === undefined) return undefined;
  return { maxAge, maxAgeMs: parseMaxAge(maxAge), onStale, onWarning: policy?.onWarning };
}

/** `store` as the recorder sees it under `staleness` (no view without it). */
export function stalenessView(
  store: Store,
  staleness: Staleness | undefined,
  events: Emitter,
  modes: ResolvedModes,
): Store {
  if (staleness === undefined) return store;
  const recordOnly = Object.values(modes).every((m) => m === "record");
  return new StaleView(
    store,
    recordOnly ? { ...staleness, onStale: "rerecord" } : staleness,
    events,
  );
}

class StaleView implements Store {
  readonly url: string;
  // The store's optional capabilities, present exactly when the store has
  // them (callers test for presence): declared, so an absent one is no key.
  declare readonly policy?: StorePolicy;
  declare readonly listsInKeyOrder?: boolean;
  declare readonly deleteIfUnchanged?: (key: string, digest: string) => Promise<boolean>;
  declare readonly listByRecordedAt?: (prefix: string) => AsyncIterable<[string, JsonValue]>;
  declare readonly getHit?: (key: string, options?: GetOptions) => Promise<JsonValue | undefined>;
  /** Entries already reported by a process warning. */
  readonly #warned = new Set<string>();
  /** Entries read as absent under `rerecord`: their next write is a refresh. */
  readonly #rerecording = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly staleness: Staleness,
    private readonly events: Emitter,
  ) {
    this.url = store.url;
    const self = this as {
      -readonly [K in
        | "policy"
        | "listsInKeyOrder"
        | "deleteIfUnchanged"
        | "listByRecordedAt"
        | "getHit"]?: Store[K];
    };
    // A hit's read is a read of the entry to serve it: the same policy as get
    // (isStale reads meta.recordedAt, which the hit's value keeps).
    if (store.getHit !== undefined)
      self.getHit = async (key, options) => this.#judge(key, await store.getHit!(key, options));
    if (store.policy !== undefined) self.policy = store.policy;
    if (store.listsInKeyOrder !== undefined) self.listsInKeyOrder = store.listsInKeyOrder;
    // Pass-throughs: deleting or listing is not reading an entry to serve it.
    if (store.deleteIfUnchanged !== undefined)
      self.deleteIfUnchanged = (key, digest) => store.deleteIfUnchanged!(key, digest);
    if (store.listByRecordedAt !== undefined)
      self.listByRecordedAt = (prefix) => store.listByRecordedAt!(prefix);
  }

  async get(key: string, options?: GetOptions): Promise<JsonValue | undefined> {
    return this.#judge(key, await this.store.get(key, options));
  }

  /** `value`, read under `key`, as the staleness policy lets it be served. */
  #judge(key: string, value: JsonValue | undefined): JsonValue | undefined {
    if (value === undefined || !isEntryKey(key)) return value;
    const { maxAge, maxAgeMs, onStale } = this.staleness;
    if (!isStale(value, maxAgeMs, Date.now())) return value;
    const at = recordedAt(value)!;
    if (onStale === "error") throw new StaleEntryError(this.url, key, at, maxAge);
    if (onStale === "rerecord") {
      this.#rerecording.add(key);
      return undefined;
    }
    this.#warn(
      key,
      `invocache: ${this.url}: entry ${key} was recorded at ${at}, more than maxAge (${String(maxAge)}) ago; replaying it anyway (onStale: "warn"). Re-record with INVOCACHE_MODE=record.`,
    );
    return value;
  }

  set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    if (!this.#rerecording.delete(key)) return this.store.set(key, value, options);
    return this.store.set(key, value, { ...options, refresh: true });
  }

  delete(key: string): Promise<boolean> {
    return this.store.delete(key);
  }

  list(prefix: string): AsyncIterable<[string, JsonValue]> {
    return this.store.list(prefix);
  }

  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.store.acquireLease(key, owner, ttlMs);
  }

  releaseLease(key: string, owner: string): Promise<void> {
    return this.store.releaseLease(key, owner);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  #warn(key: string, raw: string): void {
    const message = redactOutward(raw); // leaves the process: redacted like the store
    this.events.emit("warning", { message });
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    const { onWarning } = this.staleness;
    if (onWarning !== undefined) onWarning(message);
    else process.emitWarning(message, { type: "InvocacheWarning", code: "INVOCACHE_STALE" });
  }
}
