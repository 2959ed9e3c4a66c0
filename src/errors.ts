/**
 * Typed errors. Every invocache failure is an {@link InvocacheError} with a
 * stable `code`, context fields and an optional `cause`; messages end with
 * what to do about it (the habit we take from ky and Polly.js).
 */
import { redactOutward } from "./secrets/index.js";

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
    // A message invocache builds often quotes what it was given (a store's
    // error, an upstream's answer, a URL): it leaves the process redacted like
    // the store (src/secrets/outward.ts). `cause` stays the original value.
    super(
      redactOutward(message),
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
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

/**
 * A provenance stamp could not be made or written: the id is not the identity
 * of the manifest (`ERR_STAMP_IDENTITY`), the stamp file already holds a line
 * that is not JSON (`ERR_STAMP_MALFORMED`), reading or writing failed
 * (`ERR_STAMP_IO`), or a signing or trusted key cannot be used: not a PEM key
 * of a supported algorithm, or a key file that exists already for keygen
 * (`ERR_STAMP_KEY`). `verifyStamp` reports content problems instead of
 * throwing; it throws this only when a file cannot be read at all.
 *
 * @example
 * try { await stampArtifact("out/plan.md", { id, manifest }) } catch (e) {
 *   if (e instanceof StampError && e.code === "ERR_STAMP_IDENTITY") console.error(e.message)
 * }
 */
export class StampError extends InvocacheError {
  /** The artifact or stamp file involved, when there is one. */
  readonly path: string | undefined;
  /** 1-based line of the stamp file involved, when there is one. */
  readonly line: number | undefined;

  constructor(
    code: "ERR_STAMP_IDENTITY" | "ERR_STAMP_MALFORMED" | "ERR_STAMP_IO" | "ERR_STAMP_KEY",
    message: string,
    options?: InvocacheErrorOptions & { path?: string; line?: number },
  ) {
    super(code, message, options);
    this.path = options?.path;
    this.line = options?.line;
  }
}

/**
 * A cassette file cannot be used: malformed YAML, a hand edit that breaks the
 * format, a newer format version, a stale entry under `onStale: "error"`.
 * Carries the file and, when the problem is at a place in the file, its
 * 1-based line and column. A cassette that failed to load is never
 * overwritten. A `StoreError` (operation `load`, `get`, `flush`…), so the
 * recorder treats it as the store failing, never as a miss.
 *
 * @example
 * await cassetteStore("cassettes/broken.yaml").get(key)
 * // CassetteError: cassettes/broken.yaml:12:5: entries[0].meta.durationMs must be a number >= 0 …
 */
export class CassetteError extends StoreError {
  /** The cassette file (absolute path). */
  readonly file: string;
  /** 1-based line of the problem, when it has a place in the file. */
  readonly line: number | undefined;
  /** 1-based column of the problem, when it has a place in the file. */
  readonly column: number | undefined;

  constructor(
    file: string,
    operation: string,
    message: string,
    options?: InvocacheErrorOptions & {
      key?: string;
      line?: number;
      column?: number;
      /** The store's url; default `cassette://<file>`. */
      url?: string;
    },
  ) {
    super(options?.url ?? `cassette://${file}`, operation, message, options);
    // StoreError fixes its code; a cassette problem gets its own, stable one.
    (this as { code: string }).code = "ERR_CASSETTE";
    this.file = file;
    this.line = options?.line;
    this.column = options?.column;
  }
}

/** One secret found in a value: which one, and where. Never the secret itself. */
export interface SecretFindingInfo {
  /** Environment variable name (`OPENAI_API_KEY`) or key shape (`openai-api-key`). */
  name: string;
  /** JSON path of the string it was found in, e.g. `$.manifest.prompt`. */
  path: string;
}

/**
 * A value about to be written holds secrets and the writer was told to
 * refuse (`secrets: "refuse"`). The message and fields name each secret and
 * where it is, never its value.
 *
 * @example
 * await cassetteStore("c.yaml", { secrets: "refuse" }).set(key, entryWithKey)
 * // SecretLeakError: refusing to write 1 secret to c.yaml: OPENAI_API_KEY at $.manifest.prompt …
 */
export class SecretLeakError extends InvocacheError {
  /** Where the value was going (a cassette path, a store url). */
  readonly target: string;
  readonly findings: readonly SecretFindingInfo[];

  constructor(
    target: string,
    findings: readonly SecretFindingInfo[],
    message: string,
    options?: InvocacheErrorOptions,
  ) {
    super("ERR_SECRET_LEAK", message, options);
    this.target = target;
    this.findings = findings;
  }
}

/**
 * A test left recorded entries unused and its cassette helper runs in strict
 * mode. Lists the entries so they can be pruned or the test fixed.
 *
 * @example
 * it("plans", withCassette({ strict: true }, async ({ recorder }) => {}))
 * // UnusedEntriesError: 2 recorded entries of cassettes/… were not used …
 */
export class UnusedEntriesError extends InvocacheError {
  readonly file: string;
  /** Store keys of the unused entries (`ns:e:<id>:<occurrence>`). */
  readonly keys: readonly string[];

  constructor(file: string, keys: readonly string[], message: string) {
    super("ERR_UNUSED_ENTRIES", message);
    this.file = file;
    this.keys = keys;
  }
}

/**
 * An option was given a value it cannot take. Names the option (`field`) and
 * says what it accepts, so the fix is in the message.
 *
 * @example
 * createFetch({ recorder, replaySpeed: -1 })
 * // InvalidOptionError: createFetch: replaySpeed must be a finite number ≥ 0 …
 */
export class InvalidOptionError extends InvocacheError {
  /** The option at fault, e.g. `"replaySpeed"`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super("ERR_INVALID_OPTION", message);
    this.field = field;
  }
}

/**
 * A store cannot answer from its stored metadata (`Store.listMeta`): it was
 * created before invocache kept metadata beside each value, or some values
 * were written without it (by an older invocache). Nothing is lost: read the
 * values instead (slow on a large store), or run `invocache migrate-store`.
 *
 * @example
 * for await (const m of store.listMeta!({})) … // throws MetadataMissingError on an old SQLite file
 */
export class MetadataMissingError extends InvocacheError {
  /** The store's redacted url. */
  readonly store: string;

  constructor(store: string, reason: string) {
    super(
      "ERR_STORE_NOT_MIGRATED",
      `invocache store ${store} has no stored metadata to answer from: ${reason}. Run \`invocache migrate-store --store ${store}\` once (safe while the store is in use) so listing, stats and prune answer at once.`,
    );
    this.store = store;
  }
}
