/**
 * Typed errors. Every invocache failure is an {@link InvocacheError} with a
 * stable `code`, context fields and an optional `cause`; messages end with
 * what to do about it (the habit we take from ky and Polly.js).
 */

/** Options shared by every invocache error. */
export interface InvocacheErrorOptions {
  cause?: unknown;
}

/**
 * Base class of all errors invocache throws on purpose.
 *
 * @example
 * try { await recorder.call(req, fn) } catch (e) {
 *   if (e instanceof InvocacheError) console.error(e.code, e.message)
 * }
 */
export class InvocacheError extends Error {
  /** Stable machine-readable code, e.g. `"ERR_REPLAY_MISS"`. */
  readonly code: string;

  constructor(code: string, message: string, options?: InvocacheErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * A short id prefix matched no identity, or more than one.
 *
 * @example
 * resolvePrefix("3f2a", ids) // throws: prefix too short
 */
export class AmbiguousIdError extends InvocacheError {
  readonly prefix: string;
  readonly candidates: readonly string[];

  constructor(prefix: string, candidates: readonly string[], message: string) {
    super(candidates.length === 0 ? "ERR_ID_NOT_FOUND" : "ERR_ID_AMBIGUOUS", message);
    this.prefix = prefix;
    this.candidates = candidates;
  }
}

/**
 * A store could not be opened, read or written. Never reported as a miss.
 *
 * @example
 * await openStore("redis://127.0.0.1:1").get("k") // StoreError, cause: ECONNREFUSED
 */
export class StoreError extends InvocacheError {
  /** The store's redacted url (`store.url`). */
  readonly store: string;
  /** The store method that failed: `get`, `set`, `list`, `acquireLease`, `open`… */
  readonly operation: string;
  /** The key involved, when there was one. */
  readonly key: string | undefined;

  constructor(
    store: string,
    operation: string,
    message: string,
    options?: InvocacheErrorOptions & { key?: string },
  ) {
    super("ERR_STORE", message, options);
    this.store = store;
    this.operation = operation;
    this.key = options?.key;
  }
}

/**
 * A stored entry is not a valid invocache entry envelope (corrupt, hand-edited,
 * or written by something else). Reported, never misread as a hit.
 *
 * @example
 * validateEntry({ v: 1, id: "nope" }, "redis://127.0.0.1:6379 key ns:e:…:0") // throws EntryFormatError
 */
export class EntryFormatError extends InvocacheError {
  /** Where the entry came from (store url and key, cassette file…). */
  readonly where: string;
  /** JSON path of the offending field, e.g. `$.meta.occurrence`. */
  readonly path: string;

  constructor(where: string, path: string, message: string, options?: InvocacheErrorOptions) {
    super("ERR_ENTRY_FORMAT", message, options);
    this.where = where;
    this.path = path;
  }
}

/**
 * A stored entry uses a newer envelope version than this invocache reads.
 * It is reported instead of being guessed at.
 *
 * @example
 * validateEntry({ v: 2, … }, "cache.sqlite") // throws UnsupportedEntryVersionError
 */
export class UnsupportedEntryVersionError extends InvocacheError {
  readonly where: string;
  /** The version found in the entry. */
  readonly version: number;
  /** The highest version this invocache reads. */
  readonly supported: number;

  constructor(where: string, version: number, supported: number, message: string) {
    super("ERR_ENTRY_VERSION", message);
    this.where = where;
    this.version = version;
    this.supported = supported;
  }
}
