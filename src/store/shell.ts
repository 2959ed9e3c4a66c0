/**
 * What every `Store` implementation shares, whatever keeps the bytes (keyv
 * backends in keyv-store.ts, the YAML cassette in src/cassette): the
 * argument checks of the contract, the write snapshot, closing (later calls
 * reject, close waits for calls already started), and turning a backend
 * failure into a `StoreError` that names the store, the operation, the key
 * and the fix (never a miss). Backends only talk to their storage.
 */
import { InvocacheError, StoreError } from "../errors.js";
import { jsonSnapshot } from "../json/index.js";
import { assertKeyPrefix, assertStoreKey, assertTtl } from "./keys.js";
import type { JsonValue, SetOptions } from "./types.js";

/** A `set` call checked: the value snapshotted, the options validated. */
export interface CheckedSet {
  snapshot: JsonValue;
  ttlMs: number | undefined;
  /** See `SetOptions.refresh`. */
  refresh: boolean;
}

/**
 * Check a `set` call's arguments and snapshot the value now: a caller who
 * mutates `value` after calling `set()` must not change what is stored.
 * `snapshot` defaults to `jsonSnapshot` (check and frozen copy in one walk).
 *
 * @throws TypeError/RangeError naming `key`, `value` or `options.ttlMs`.
 */
export function checkSet(
  key: string,
  value: JsonValue,
  options: SetOptions | undefined,
  snapshot: (value: JsonValue) => JsonValue = (v) => jsonSnapshot(v, "value"),
): CheckedSet {
  assertStoreKey(key, "key");
  const checked = snapshot(value);
  const ttlMs = options?.ttlMs;
  if (ttlMs !== undefined) assertTtl(ttlMs, "options.ttlMs");
  return { snapshot: checked, ttlMs, refresh: options?.refresh === true };
}

/** Check a lease call's arguments (`ttlMs` for `acquireLease` only). */
export function checkLease(key: string, owner: string, ttlMs?: number): void {
  assertStoreKey(key, "key");
  assertStoreKey(owner, "owner");
  if (ttlMs !== undefined) assertTtl(ttlMs, "ttlMs");
}

/** Check a `get`/`delete` key. */
export function checkKey(key: string): void {
  assertStoreKey(key, "key");
}

/** Check a `list` prefix. */
export function checkPrefix(prefix: string): void {
  assertKeyPrefix(prefix, "prefix");
}

/** How a store names itself in messages, and the fix a failure suggests. */
export interface ShellLabels {
  /** The store's `url`. */
  url: string;
  /** The subject of messages: `store sqlite:///…`, `cassette cassettes/x.yaml`. */
  subject: string;
  /** What to check when an operation fails. */
  fix: string;
  /** How to get a store again after `close()`. */
  reopen: string;
}

/**
 * Closed state and the operations in flight: `track` refuses a call once
 * the store is closing, and `closeOnce` waits for every call already started
 * before it runs the backend's own close (once, whoever calls it).
 */
export class StoreShell {
  readonly labels: ShellLabels;
  #closing: Promise<void> | undefined;
  readonly #inflight = new Set<Promise<unknown>>();

  constructor(labels: ShellLabels) {
    this.labels = labels;
  }

  /** True once `closeOnce` was called. */
  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /** Run `fn` as operation `operation` on `key`: refused when closed, failures wrapped, tracked for close. */
  run<T>(operation: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closedError(operation, key));
    return this.track(this.guard(operation, key, fn));
  }

  /** Track `op` so that close waits for it. */
  track<T>(op: Promise<T>): Promise<T> {
    this.#inflight.add(op);
    // Inline, not a named const: the bundle's keepNames would name it on every call.
    op.then(
      () => this.#inflight.delete(op),
      () => this.#inflight.delete(op),
    );
    return op;
  }

  /** Close: later calls reject; `fn` runs once, after every call already started settled. */
  closeOnce(fn: () => Promise<void>, waitFirst = true): Promise<void> {
    this.#closing ??= (async () => {
      if (waitFirst) await this.settled();
      await fn();
    })();
    return this.#closing;
  }

  /** Resolves once every call in flight now has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.#inflight);
  }

  /** `fn`, with a failure that is not already one of ours turned into a `StoreError`. */
  async guard<T>(
    operation: string,
    key: string | undefined,
    fn: () => Promise<T>,
    context = "",
  ): Promise<T> {
    try {
      return await fn();
    } catch (cause) {
      throw this.wrap(operation, key, cause, context);
    }
  }

  /** A failure as the error callers see: ours (StoreError, CassetteError, SecretLeakError…) as is, others a `StoreError`. */
  wrap(operation: string, key: string | undefined, cause: unknown, context = ""): InvocacheError {
    // Our own errors already say what to do.
    if (cause instanceof InvocacheError) return cause;
    const message = cause instanceof Error ? cause.message : String(cause);
    return this.error(operation, key, context + message, this.labels.fix, cause);
  }

  /** The error of a call made after close. */
  closedError(operation: string, key: string | undefined): StoreError {
    return this.error(operation, key, "the store is closed", this.labels.reopen);
  }

  /** A `StoreError`: `invocache <subject>: <operation> "<key>" failed: <what>. <fix>` */
  error(
    operation: string,
    key: string | undefined,
    what: string,
    fix: string,
    cause?: unknown,
  ): StoreError {
    const target = key === undefined ? "" : ` ${JSON.stringify(key)}`;
    const message = `invocache ${this.labels.subject}: ${operation}${target} failed: ${what}. ${fix}`;
    return new StoreError(this.labels.url, operation, message, {
      ...(cause === undefined ? {} : { cause }),
      ...(key === undefined ? {} : { key }),
    });
  }
}
