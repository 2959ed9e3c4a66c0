/**
 * Fail-open store access: a store failure the call survives is never silent
 * (a `warning` event each time, and once per recorder a Node process warning
 * with the cause and the fix), and a cassette that cannot be used is a
 * fixture error, thrown in every mode. Writes are tracked so `close()` can
 * wait for them.
 */
import { CassetteError } from "../errors.js";
import type { SecretScanner } from "../secrets/index.js";
import { redactOutward } from "../secrets/index.js";
import type { JsonValue, Store } from "../store/index.js";
import { StaleEntryError } from "./errors.js";
import type { Emitter } from "./events.js";
import type { Mode } from "./mode.js";

export class FailOpen {
  /** Process warnings already emitted, by code: once per recorder each. */
  readonly #warnedOnce = new Set<string>();
  readonly #pending = new Set<Promise<unknown>>();

  constructor(
    private readonly store: Store,
    private readonly events: Emitter,
    private readonly mode: Mode,
    private readonly ttl: number | undefined,
    /** The recorder's secret scanner: warnings leave the process redacted like the store. */
    private readonly scanner?: SecretScanner,
  ) {}

  /**
   * A `warning` event. Its message is redacted (a store's error may quote
   * a URL with a password, an upstream's a key); `error` is the original
   * value, in process, for the listener to inspect.
   */
  warn(message: string, error?: unknown, id?: string): void {
    this.events.emit("warning", {
      message: redactOutward(message, this.scanner),
      ...(error === undefined ? {} : { error }),
      ...(id === undefined ? {} : { id }),
    });
  }

  /** Node's convention for a degraded library: process.emitWarning, once per recorder and code. */
  processWarning(code: string, message: string, detail?: string): void {
    if (this.#warnedOnce.has(code)) return;
    this.#warnedOnce.add(code);
    process.emitWarning(redactOutward(message, this.scanner), {
      type: "InvocacheWarning",
      code,
      ...(detail === undefined ? {} : { detail: redactOutward(detail, this.scanner) }),
    });
  }

  /**
   * A store failure the call survives (fail-open). Never silent: a `warning`
   * event each time, and the first one of this recorder also goes to
   * `process.emitWarning` (Node's convention for a degraded library), with
   * the cause and the fix. A cassette that cannot be used is a fixture error,
   * never an outage: it is thrown in every mode.
   */
  storeFailed(message: string, error: unknown, id?: string): void {
    if (isFixtureError(error)) throw error;
    this.warn(message, error, id);
    const cause = error instanceof Error ? error.message : String(error);
    this.processWarning(
      "INVOCACHE_STORE_DEGRADED",
      `invocache: the cache is degraded: ${message} (cause: ${cause}). Calls still get answers, from upstream, but are not replayed or recorded while the store fails.`,
      `Fix the store (${this.store.url}): check that it is reachable, readable and writable. Every failure is also a recorder "warning" event (recorder.on("warning", …)); use mode: "replay" (or INVOCACHE_MODE=replay) to fail instead of calling upstream. This warning is shown once per recorder.`,
    );
  }

  /**
   * A read whose failure only costs a shortcut (the wait for another
   * process's recording, which reads again; the record-mode probe):
   * undefined on a store failure, which the next write reports. A cassette
   * that cannot be loaded is thrown.
   */
  async peek(key: string): Promise<JsonValue | undefined> {
    const raw = await this.read(key);
    return raw === FAILED_READ ? undefined : raw;
  }

  /**
   * A read whose "no" would send a call upstream (the re-check after taking
   * a lease): a store failure is {@link FAILED_READ}, not a miss, since not
   * knowing must not count as "no". A cassette that cannot be loaded is thrown.
   */
  async read(key: string): Promise<JsonValue | undefined | typeof FAILED_READ> {
    try {
      return await this.store.get(key);
    } catch (error) {
      if (isFixtureError(error)) throw error;
      return FAILED_READ;
    }
  }

  /**
   * Write an entry: a failure is thrown in record mode, a warning otherwise.
   * `mode` is the mode of the call being written (a tool call may differ
   * from the recorder's model mode).
   */
  async write(key: string, value: JsonValue, id: string, mode: Mode = this.mode): Promise<void> {
    const ttl = this.ttl;
    const p = this.store.set(key, value, ttl === undefined ? undefined : { ttlMs: ttl });
    this.#pending.add(p);
    try {
      await p;
    } catch (error) {
      if (mode === "record") throw error;
      this.storeFailed(
        `store ${this.store.url} failed to write ${key}; the response was returned but not recorded`,
        error,
        id,
      );
    } finally {
      this.#pending.delete(p);
    }
  }

  /** Settle every write still going. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }
}

/** {@link FailOpen.read}'s answer when the store failed the read. */
export const FAILED_READ: unique symbol = Symbol("invocache.failedRead");

/** A cassette that cannot be used, or a recording out of date: the fixture's fault, thrown in every mode. */
function isFixtureError(error: unknown): boolean {
  return error instanceof CassetteError || error instanceof StaleEntryError;
}
