/**
 * The `Store` behind every `openStore` URL: the store shell (shell.ts:
 * argument checks, snapshots, closing, error wrapping, shared with the
 * cassette) over a keyv backend, plus what keyv backends need: lazy backend
 * creation and a timeout on every operation. Backends only talk to their database.
 */
import { MetadataMissingError, type StoreError } from "../errors.js";
import type { Backend, BackendFactory, RawRow } from "./backend.js";
import { PendingRead, ReadDeadlines } from "./deadlines.js";
import { assertDigest, valueDigest } from "./digest.js";
import { recordWithoutManifest, withoutManifest } from "./hit-record.js";
import { deserializeRecord, isExpired, serializeRecord } from "./json.js";
import {
  checkMetaQuery,
  type MetaQuery,
  metaFromValues,
  metaIsLive,
  type StoredMeta,
  storedMetaOf,
} from "./meta.js";
import { checkMetaStatsQuery, foldMetaStats } from "./meta-stats.js";
import type { MetaStats, MetaStatsQuery } from "./meta-types.js";
import { checkKey, checkLease, checkPrefix, checkSet, StoreShell } from "./shell.js";
import type { JsonValue, SetOptions, Store } from "./types.js";

/** Options of a {@link KeyvStore}. */
export interface KeyvStoreOptions {
  /** Longest time one operation may take before it fails with a StoreError. */
  timeoutMs: number;
  /**
   * Loads the backend's code (driver packages) before the first timeout
   * starts: importing a driver on a busy machine is not the store failing to
   * answer. Its failure is ignored here; the factory reports it.
   */
  load?: () => Promise<unknown>;
  /**
   * The backend sorts by recording time (`Backend.listRawByRecordedAt`): the
   * store then has `listByRecordedAt`. Only the backends that can are given it.
   */
  sortsByRecordedAt?: boolean;
  /** The backend's `listRaw` pages through its keys in binary order (see `Store.listsInKeyOrder`). */
  listsInKeyOrder?: boolean;
  /**
   * Where `listMeta` answers from: `"stored"` the backend's stored metadata
   * (SQLite, PostgreSQL, Redis), `"computed"` the values (memory: everything
   * is in memory anyway). Absent: the store has no `listMeta`, so callers
   * stream the values as before instead of having them all held and sorted.
   */
  meta?: "stored" | "computed";
}

/**
 * A {@link Store} over a keyv {@link Backend} created on first use, so that
 * opening a store costs nothing and never imports a driver it does not need.
 *
 * @example
 * const store = new KeyvStore("memory://", () => createMemoryBackend());
 * await store.set("k", { a: 1 });
 */
export class KeyvStore implements Store {
  readonly url: string;
  readonly #factory: BackendFactory;
  #backend: Promise<Backend> | undefined;
  readonly #shell: StoreShell;
  readonly #timeoutMs: number;
  readonly #load: (() => Promise<unknown>) | undefined;
  #loading: Promise<void> | undefined;
  /** Reads on the short path in flight, and the one timer they share. */
  readonly #reads: ReadDeadlines;
  /** The backend once it opened and the driver loaded: reads then take the short path (`#read`). */
  #opened: Backend | undefined;
  /** See `Store.listByRecordedAt`: present only when the backend sorts (`sortsByRecordedAt`). */
  readonly listByRecordedAt?: (prefix: string) => AsyncIterable<[string, JsonValue]>;
  /** See `Store.listsInKeyOrder`. */
  readonly listsInKeyOrder: boolean;
  /** See `Store.listMeta`: present only when `KeyvStoreOptions.meta` says where it answers from. */
  readonly listMeta?: (query?: MetaQuery) => AsyncIterable<StoredMeta>;
  /** See `Store.statsMeta`: wherever `listMeta` is. */
  readonly statsMeta?: (
    query?: MetaStatsQuery,
    onProgress?: (rows: number) => void,
  ) => Promise<MetaStats>;
  /** See `Store.migrateMeta`: only where the backend keeps stored metadata. */
  readonly migrateMeta?: (onProgress?: (done: number) => void) => Promise<number>;

  constructor(url: string, factory: BackendFactory, options: KeyvStoreOptions) {
    this.url = url;
    this.listsInKeyOrder = options.listsInKeyOrder === true;
    if (options.sortsByRecordedAt === true) {
      this.listByRecordedAt = (prefix) =>
        this.#listing(prefix, (b) => {
          if (b.listRawByRecordedAt === undefined) {
            throw new TypeError(`the backend of ${url} cannot list by recording time`);
          }
          return b.listRawByRecordedAt(prefix);
        });
    }
    if (options.meta !== undefined) {
      this.listMeta = (query) => this.#listMeta(query);
      this.statsMeta = (query, onProgress) => this.#statsMeta(query, onProgress);
    }
    if (options.meta === "stored") this.migrateMeta = (onProgress) => this.#migrateMeta(onProgress);
    this.#factory = factory;
    this.#timeoutMs = options.timeoutMs;
    this.#load = options.load;
    this.#reads = new ReadDeadlines(options.timeoutMs, (key) => this.#timeoutError("get", key));
    this.#shell = new StoreShell({
      url,
      subject: `store ${url}`,
      fix: "Check that the store is reachable and writable; a failing store is never treated as a miss.",
      reopen: "Open a new store with openStore().",
    });
  }

  #preload(): Promise<void> {
    this.#loading ??= Promise.resolve(this.#load?.()).then(
      () => {},
      () => {},
    );
    return this.#loading;
  }

  get(key: string): Promise<JsonValue | undefined> {
    // Not an async function: the short path hands out its one promise as it is.
    try {
      checkKey(key);
    } catch (error) {
      return Promise.reject(error);
    }
    // No copy needed: our deserializer built the value with JSON.parse just
    // now, a fresh tree that nobody else holds (the memory backend too keeps text).
    const opened = this.#opened;
    if (opened !== undefined && !this.#shell.closed) return this.#read(opened, key, readValue);
    return this.#run("get", key, (b) => b.keyv.get<JsonValue>(b.keyPrefix + key));
  }

  /** See `Store.getHit`: the record's text without the manifest, then parsed (hit-record.ts). */
  getHit(key: string): Promise<JsonValue | undefined> {
    try {
      checkKey(key);
    } catch (error) {
      return Promise.reject(error);
    }
    const opened = this.#opened;
    if (opened !== undefined && !this.#shell.closed) return this.#read(opened, key, readHit);
    return this.#run("get", key, (b) => readHit(b, b.keyPrefix + key));
  }

  /**
   * A read on an open backend: what `#run` does (timeout, StoreError, waited
   * for by close), in one promise and no timer of its own (every read in
   * flight shares one, deadlines.ts), instead of seven promises and a timer
   * per read. This is the replay hit's only store operation, so its overhead
   * is the hit's. A backend whose `ready` only checks (SQLite's file guard)
   * runs it beside the read; the read fails if the check does.
   */
  #read(
    b: Backend,
    key: string,
    readFrom: (b: Backend, full: string) => Promise<JsonValue | undefined>,
  ): Promise<JsonValue | undefined> {
    return new Promise<JsonValue | undefined>((resolve, reject) => {
      const read = new PendingRead(key, reject);
      this.#reads.start(read);
      let work: Promise<JsonValue | undefined>;
      try {
        const full = b.keyPrefix + key;
        if (b.ready === undefined) work = readFrom(b, full);
        else if (b.readyOnlyChecks === true) {
          const reading = readFrom(b, full);
          reading.catch(() => {});
          work = b.ready().then(() => reading);
        } else work = b.ready().then(() => readFrom(b, full));
      } catch (cause) {
        if (this.#reads.finish(read)) reject(this.#shell.wrap("get", key, cause));
        return;
      }
      work.then(
        (value) => {
          if (this.#reads.finish(read)) resolve(value);
        },
        (cause) => {
          if (this.#reads.finish(read)) reject(this.#shell.wrap("get", key, cause));
        },
      );
    });
  }

  async set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    // Check and snapshot in one walk, now: the backend may still be opening.
    // Subtrees the recorder already snapshotted are reused.
    const { snapshot, ttlMs } = checkSet(key, value, options);
    return this.#run("set", key, async (b, notAfter) => {
      if (b.setRecord !== undefined) {
        // keyv's own envelope, so keyv reads it back as it would its own write.
        const expires = ttlMs === undefined ? undefined : Date.now() + ttlMs;
        const record = serializeRecord({ value: snapshot, expires });
        const meta =
          b.keepsMeta?.() === true ? metaOfRecord(key, snapshot, record, expires) : undefined;
        await b.setRecord(b.keyPrefix + key, record, ttlMs, notAfter, meta);
        await b.verify?.();
        return;
      }
      // keyv answers false (instead of throwing) when an adapter reports failure that way.
      if (!(await b.keyv.set(b.keyPrefix + key, snapshot, ttlMs))) {
        throw new Error("the backend did not store the value");
      }
      await b.verify?.();
    });
  }

  async delete(key: string): Promise<boolean> {
    checkKey(key);
    return this.#run("delete", key, async (b, notAfter) => {
      const removed =
        b.deleteRecord !== undefined
          ? await b.deleteRecord(b.keyPrefix + key, notAfter)
          : await b.keyv.delete(b.keyPrefix + key);
      await b.verify?.();
      return removed;
    });
  }

  async deleteIfUnchanged(key: string, digest: string): Promise<boolean> {
    checkKey(key);
    assertDigest(digest, "digest");
    return this.#run("delete", key, async (b, notAfter) => {
      const full = b.keyPrefix + key;
      // Compare on the value, delete on the exact text read: the backend's
      // conditional delete removes nothing if anyone wrote the key since.
      const text = await b.getRecord(full);
      if (text === undefined) return false;
      const record = deserializeRecord(text);
      if (isExpired(record) || valueDigest(record.value) !== digest) return false;
      const removed = await b.deleteRecordIf(full, text, notAfter);
      await b.verify?.();
      return removed;
    });
  }

  list(prefix: string): AsyncIterable<[string, JsonValue]> {
    return this.#listing(prefix, (b) => b.listRaw(prefix));
  }

  /** `list` over the rows `rowsOf` gives (`null`: a step that produced no row yet). */
  #listing(
    prefix: string,
    rowsOf: (backend: Backend) => AsyncIterable<RawRow | null>,
  ): AsyncIterable<[string, JsonValue]> {
    const store = this;
    return {
      async *[Symbol.asyncIterator]() {
        checkPrefix(prefix);
        await store.#preload();
        // Each step has the whole timeout: a long listing is fine, a stalled one is not.
        const backend = await store.#timed("list", prefix, store.#open("list", prefix));
        await store.#timed(
          "list",
          prefix,
          store.#guard("list", prefix, async () => backend.ready?.()),
        );
        const rows = rowsOf(backend)[Symbol.asyncIterator]();
        try {
          while (true) {
            const step = await store.#timed(
              "list",
              prefix,
              store.#guard("list", prefix, () => rows.next()),
            );
            if (step.done) return;
            if (step.value === null) continue;
            const [key, text] = step.value;
            const record = await store.#guard("list", key, async () => deserializeRecord(text));
            if (!isExpired(record)) yield [key, record.value];
          }
        } finally {
          // The caller may stop early (break): let the backend end its scan.
          await store.#timed("list", prefix, Promise.resolve(rows.return?.())).catch(() => {});
        }
      },
    };
  }

  /** See `Store.listMeta`: from the backend's stored metadata, or computed from the values (memory). */
  #listMeta(query: MetaQuery = {}): AsyncIterable<StoredMeta> {
    const store = this;
    return {
      async *[Symbol.asyncIterator]() {
        checkMetaQuery(query);
        const prefix = query.prefix ?? "";
        if (prefix !== "") checkPrefix(prefix);
        await store.#preload();
        const backend = await store.#timed("listMeta", prefix, store.#open("listMeta", prefix));
        await store.#timed(
          "listMeta",
          prefix,
          store.#guard("listMeta", prefix, async () => backend.ready?.()),
        );
        if (backend.listMeta === undefined) {
          // A backend without stored metadata holds everything in memory: compute it.
          yield* metaFromValues(store.list(prefix), query);
          return;
        }
        const missing = await store.#timed(
          "listMeta",
          prefix,
          store.#guard("listMeta", prefix, async () => backend.metaMissing?.()),
        );
        if (missing !== undefined) throw new MetadataMissingError(store.url, missing);
        const rows = backend.listMeta(query)[Symbol.asyncIterator]();
        try {
          while (true) {
            const step = await store.#timed(
              "listMeta",
              prefix,
              store.#guard("listMeta", prefix, () => rows.next()),
            );
            if (step.done) return;
            if (metaIsLive(step.value)) yield step.value;
          }
        } finally {
          await store.#timed("listMeta", prefix, Promise.resolve(rows.return?.())).catch(() => {});
        }
      },
    };
  }

  /**
   * See `Store.statsMeta`: summed by the backend where it can, else folded
   * from `listMeta`. No overall timeout (as `migrateMeta`: a million rows
   * take seconds); each statement still fails on its own when the store does.
   */
  async #statsMeta(
    query: MetaStatsQuery = {},
    onProgress?: (rows: number) => void,
  ): Promise<MetaStats> {
    checkMetaStatsQuery(query);
    const prefix = query.prefix ?? "";
    if (prefix !== "") checkPrefix(prefix);
    await this.#preload();
    const backend = await this.#timed("statsMeta", prefix, this.#open("statsMeta", prefix));
    await this.#timed(
      "statsMeta",
      prefix,
      this.#guard("statsMeta", prefix, async () => backend.ready?.()),
    );
    if (backend.statsMeta === undefined) {
      return foldMetaStats(this.#listMeta({ prefix }), query, onProgress);
    }
    const missing = await this.#timed(
      "statsMeta",
      prefix,
      this.#guard("statsMeta", prefix, async () => backend.metaMissing?.()),
    );
    if (missing !== undefined) throw new MetadataMissingError(this.url, missing);
    const op = this.#guard("statsMeta", prefix, () =>
      backend.statsMeta!(query, Date.now(), onProgress),
    );
    return this.#shell.track(op);
  }

  /**
   * See `Store.migrateMeta`. No overall timeout (a million rows take
   * minutes); each statement still fails on its own when the store does.
   */
  async #migrateMeta(onProgress?: (done: number) => void): Promise<number> {
    await this.#preload();
    const backend = await this.#open("migrateMeta", undefined);
    const op = this.#guard("migrateMeta", undefined, async () => {
      await backend.ready?.();
      return backend.migrateMeta === undefined ? 0 : backend.migrateMeta(onProgress);
    });
    return this.#shell.track(op);
  }

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    checkLease(key, owner, ttlMs);
    return this.#run("acquireLease", key, async (b, notAfter) => {
      const taken = await b.acquireLease(key, owner, ttlMs, notAfter);
      await b.verify?.();
      return taken;
    });
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    checkLease(key, owner);
    return this.#run("releaseLease", key, (b, notAfter) => b.releaseLease(key, owner, notAfter));
  }

  close(): Promise<void> {
    // "Flush": operations already started (reads on the short path too)
    // finish before connections go.
    return this.#shell.closeOnce(async () => {
      await this.#reads.settled();
      await this.#shutdown();
    });
  }

  async #shutdown(): Promise<void> {
    const pending = this.#backend;
    this.#backend = undefined;
    this.#opened = undefined;
    if (pending === undefined) return;
    let backend: Backend;
    try {
      backend = await this.#timed("close", undefined, pending);
    } catch {
      // Never opened (or still opening after the timeout): nothing to release
      // yet; a backend that opens later is closed then.
      pending
        .then(
          (late) => late.close(),
          () => {},
        )
        .catch(() => {});
      return;
    }
    try {
      await this.#timed(
        "close",
        undefined,
        this.#guard("close", undefined, () => backend.close()),
      );
    } catch (error) {
      // A server that does not answer cannot be said goodbye to: drop the connection.
      backend.destroy?.();
      throw error;
    }
  }

  /**
   * Run one operation under the timeout. `notAfter` (epoch ms, this
   * process's clock) is when the operation times out: backends refuse a
   * write or lease change that reaches the server later, so an operation
   * reported as failed can never take effect afterwards.
   */
  #run<T>(
    operation: string,
    key: string,
    fn: (backend: Backend, notAfter: number) => Promise<T>,
  ): Promise<T> {
    // Opened now, synchronously: an operation started before close() runs.
    const opening = this.#open(operation, key);
    opening.catch(() => {});
    const op = (async () => {
      await this.#preload();
      const notAfter = Date.now() + this.#timeoutMs;
      const work = (async () => {
        const backend = await opening;
        return this.#guard(operation, key, async () => {
          await backend.ready?.();
          return fn(backend, notAfter);
        });
      })();
      return this.#timed(operation, key, work);
    })();
    return this.#shell.track(op);
  }

  /** `work`, or a StoreError once the timeout has passed without an answer. */
  #timed<T>(operation: string, key: string | undefined, work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(this.#timeoutError(operation, key));
      }, this.#timeoutMs);
    });
    // The abandoned work may still fail later: nobody is listening then.
    work.catch(() => {});
    return Promise.race([work, expired]).finally(() => clearTimeout(timer));
  }

  #open(operation: string, key: string | undefined): Promise<Backend> {
    if (this.#shell.closed) return Promise.reject(this.#shell.closedError(operation, key));
    let opening = this.#backend;
    if (opening === undefined) {
      const started = this.#factory();
      // A failed open is not cached: the next call tries again (the server may be back).
      started.then(
        (backend) => {
          // The short read path starts once the driver is loaded as well.
          void this.#preload().then(() => {
            if (this.#backend === started && !this.#shell.closed) this.#opened = backend;
          });
        },
        () => {
          if (this.#backend === started) this.#backend = undefined;
        },
      );
      this.#backend = opening = started;
    }
    const ready = opening;
    // Each caller sees a failed open under its own operation ("get", "set"…).
    return this.#guard(operation, key, () => ready, "cannot open the store: ");
  }

  #guard<T>(
    operation: string,
    key: string | undefined,
    fn: () => Promise<T>,
    context = "",
  ): Promise<T> {
    return this.#shell.guard(operation, key, fn, context);
  }

  #timeoutError(operation: string, key: string | undefined): StoreError {
    return this.#shell.error(
      operation,
      key,
      `timed out after ${this.#timeoutMs} ms (the store did not answer: frozen, overloaded or unreachable)`,
      "If it is only slow, raise the limit with openStore(url, { timeoutMs }) or ?timeoutMs= on a Redis/Postgres URL; a failing store is never treated as a miss.",
    );
  }
}

/**
 * The metadata of a value about to be written as `record` (keyv's
 * `{"value":…}` text): its size is the record's minus the envelope, which
 * spares a second JSON.stringify of the value.
 */
function metaOfRecord(
  key: string,
  value: JsonValue,
  record: string,
  expires: number | undefined,
): StoredMeta {
  const envelope = expires === undefined ? 10 : 21 + String(expires).length;
  return storedMetaOf(key, value, expires, Buffer.byteLength(record) - envelope);
}

/** `get`'s read: keyv's, which parses the whole record. */
function readValue(b: Backend, full: string): Promise<JsonValue | undefined> {
  return b.keyv.get<JsonValue>(full);
}

/**
 * `getHit`'s read: the record's text from the backend (the text keyv would
 * parse, through the same adapter read and prepared statements), the
 * manifest cut out of it before parsing (`recordWithoutManifest`), or the
 * backend's own hit text (memory keeps it beside the record). A text the
 * scan does not follow, or a record that has expired, goes through keyv's
 * read as `get` does (which also removes the expired record).
 */
async function readHit(b: Backend, full: string): Promise<JsonValue | undefined> {
  const raw: unknown =
    b.getHitRecord !== undefined
      ? await b.getHitRecord(full)
      : await (b.keyv.opts.store as { get(key: string): Promise<unknown> }).get(full);
  if (raw === undefined || raw === null) return undefined;
  const cut = typeof raw === "string" ? recordWithoutManifest(raw) : undefined;
  if (cut === undefined) return withoutManifest(await b.keyv.get<JsonValue>(full));
  const record = deserializeRecord(cut);
  if (isExpired(record)) return withoutManifest(await b.keyv.get<JsonValue>(full));
  // A second manifest member (duplicate keys: JSON.parse keeps the last) is dropped too.
  return withoutManifest(record.value);
}
