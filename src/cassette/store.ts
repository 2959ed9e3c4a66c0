/**
 * `cassetteStore(path)`: a `Store` kept in one YAML file, for record/replay
 * in tests. The recorder's modes, runs and occurrences apply unchanged; this
 * file only decides how the data reaches the disk:
 *
 * - Lazy: nothing is read until the first operation.
 * - In memory, the last known file content (`disk`) plus this handle's
 *   unwritten changes (`overlay`). A miss re-checks the file's stat data and
 *   re-reads it when another process changed it, so a recording made by a
 *   parallel worker is seen.
 * - Writes: under the file lock, re-read the file if it changed, merge (keys
 *   this handle changed take its value, every other key keeps the file's),
 *   keep unchanged recordings byte-identical (stability.ts), scan for
 *   secrets, write atomically (files.ts). Concurrent writers lose nothing.
 * - `write: "eager"` (default) resolves `set` once the value is on disk;
 *   `"on-close"` buffers until `flush()`/`close()`, and `discard()` drops the
 *   buffer (the vitest helper uses it so a failed test leaves no half recording).
 */
import { resolve } from "node:path";
import { CassetteError, InvocacheError, SecretLeakError, StoreError } from "../errors.js";
import type { JsonValue } from "../json/value.js";
import { assertJsonValue } from "../json/value.js";
import { createSecretScanner, restoreSecrets, type SecretOptions } from "../secrets/redact.js";
import { assertKeyPrefix, assertStoreKey, assertTtl } from "../store/keys.js";
import type { SetOptions, Store } from "../store/types.js";
import { emitCassette, emittedChunk } from "./emit.js";
import {
  type FileStamp,
  FileTooBigError,
  readWithStamp,
  removeOrphanTemps,
  sameStamp,
  statStamp,
  writeFileAtomic,
} from "./files.js";
import { knownChunks, parseIncremental } from "./incremental.js";
import { type CassetteItem, isEntryKey } from "./item.js";
import { acquireFileLease, releaseFileLease } from "./leases.js";
import { LOCK_TIMEOUT_MS, withFileLock } from "./lock.js";
import { type CassetteSource, MAX_VALUE_DEPTH, parseCassette, tooDeep } from "./parse.js";
import {
  contentHash,
  PARSE_CACHE_MIN_BYTES,
  readParseCache,
  writeParseCache,
} from "./parse-cache.js";
import { cassetteSource, decodeCassette } from "./source.js";
import { sameRecording } from "./stability.js";
import { isStale, type OnStale, parseMaxAge } from "./staleness.js";

/** Options of {@link cassetteStore}. */
export interface CassetteOptions {
  /**
   * Secrets found in a value about to be written: `"redact"` (default)
   * replaces them by `{secret:NAME}` placeholders, `"refuse"` rejects the
   * write with `SecretLeakError`. Nothing secret reaches the disk either way.
   */
  secrets?: "redact" | "refuse";
  /** Put env secret values back into placeholders on read (from `env`). Default false. */
  restoreSecrets?: boolean;
  /** Environment for secret scanning and restoring. Default `process.env`, read at each write. */
  env?: Record<string, string | undefined>;
  /** Which env names hold secrets, extra allowed names, key shapes: see `SecretOptions`. */
  secretOptions?: Omit<SecretOptions, "env">;
  /** Entries recorded longer ago than this are stale: ms, or `"30d"`, `"12h"`… Default: never. */
  maxAge?: number | string;
  /** What a stale entry does: `"warn"` (default), `"error"`, `"rerecord"`. */
  onStale?: OnStale;
  /** Where warnings go. Default `process.emitWarning`. */
  onWarning?: (message: string) => void;
  /** `"eager"` (default): each write is on disk when it resolves. `"on-close"`: at `flush()`/`close()`. */
  write?: "eager" | "on-close";
  /**
   * Directory of the parsed-form cache (fast loads of big unchanged
   * cassettes), or false for none. Default `.invocache/cassette-cache` under
   * the working directory.
   */
  parseCache?: string | false;
  /** How long a write waits for another process's lock. Default 15 s. */
  lockTimeoutMs?: number;
  /** A writer's lock not refreshed for this long is taken over (the writer died). Default 5 s, minimum 2 s. */
  lockStaleMs?: number;
  /**
   * The biggest cassette file this store reads or writes, in bytes. Default
   * {@link MAX_CASSETTE_BYTES} (64 MiB). A cassette is loaded whole into
   * memory (parsing takes a multiple of its size), so a bigger one is
   * refused with a `CassetteError` rather than risking an out-of-memory
   * abort: split it into several cassettes, or use a SQLite store.
   */
  maxFileBytes?: number;
}

/** Default {@link CassetteOptions.maxFileBytes}: 64 MiB. */
export const MAX_CASSETTE_BYTES = 64 * 1024 * 1024;

/** Which entries of a cassette this handle used, for unused-entry reports and pruning. */
export interface CassetteUsage {
  /** Entry keys the file held that were read (replayed). */
  used: string[];
  /** Entry keys the file held that were neither read nor rewritten. */
  unused: string[];
  /** Entry keys written through this handle. */
  recorded: string[];
  /** Entry keys found stale (older than `maxAge`) when read. */
  stale: string[];
}

/** A {@link Store} kept in a YAML cassette file. */
export interface CassetteStore extends Store {
  /** Absolute path of the cassette file. */
  readonly path: string;
  /** Write pending changes now (they are written on `close()` anyway). */
  flush(): Promise<void>;
  /** Close without writing pending changes (a failed test's half recording). */
  discard(): Promise<void>;
  /** Which entries were used; entries written meanwhile by other processes count as neither. */
  usage(): Promise<CassetteUsage>;
}

/**
 * Open the YAML cassette at `path` (created on the first write; parent
 * folders too). Nothing is read until the first operation.
 *
 * @example
 * const recorder = createRecorder({ store: cassetteStore("cassettes/planner.yaml") });
 * await recorder.call({ role: "planner", model: "gpt-5", prompt }, () => callModel(prompt));
 * await recorder.close();
 * await recorder.store.close(); // the recorder closes only stores it opened
 */
export function cassetteStore(path: string, options: CassetteOptions = {}): CassetteStore {
  if (typeof path !== "string" || path === "") {
    throw new TypeError("cassetteStore: path must be a non-empty string, e.g. cassettes/test.yaml");
  }
  if (options === null || typeof options !== "object") {
    throw new TypeError("cassetteStore: options must be an object");
  }
  return new CassetteStoreImpl(resolve(path), options);
}

class CassetteStoreImpl implements CassetteStore {
  readonly path: string;
  readonly url: string;
  readonly #src: CassetteSource;
  readonly #opts: CassetteOptions;
  readonly #maxAgeMs: number | undefined;
  readonly #cacheDir: string | false;
  readonly #maxFileBytes: number;
  /** Chunk text → item of the file version last read or written (incremental.ts). */
  #known = new Map<string, CassetteItem>();

  /** Last known content of the file, in file order. */
  #disk = new Map<string, CassetteItem>();
  #stamp: FileStamp | undefined;
  /** Bumped whenever `#disk` is replaced; a slower read never overwrites a newer one. */
  #generation = 0;
  #loading: Promise<void> | undefined;
  /** This handle's changes not yet written; null is a delete. */
  readonly #overlay = new Map<string, CassetteItem | null>();
  /** Each key's item as first seen in the file: re-records equal to it keep it (stability). */
  readonly #origin = new Map<string, CassetteItem>();
  /** Items already scanned for secrets. */
  readonly #clean = new WeakSet<CassetteItem>();

  /** Keys the file held when first loaded: what "unused" is measured against. */
  #initial: Set<string> | undefined;
  readonly #read = new Set<string>();
  readonly #written = new Set<string>();
  readonly #stale = new Set<string>();

  #queued: Promise<void> | undefined;
  #running: Promise<void> | undefined;
  #orphansChecked = false;
  #closing: Promise<void> | undefined;
  readonly #inflight = new Set<Promise<unknown>>();
  readonly #background = new Set<Promise<unknown>>();

  constructor(path: string, opts: CassetteOptions) {
    this.path = path;
    this.#src = cassetteSource(path);
    this.url = this.#src.url;
    this.#opts = opts;
    if (opts.secrets !== undefined && opts.secrets !== "redact" && opts.secrets !== "refuse") {
      throw new TypeError(
        `secrets must be "redact" or "refuse", got ${JSON.stringify(opts.secrets)}`,
      );
    }
    if (opts.onStale !== undefined && !["warn", "error", "rerecord"].includes(opts.onStale)) {
      throw new TypeError(
        `onStale must be "warn", "error" or "rerecord", got ${JSON.stringify(opts.onStale)}`,
      );
    }
    if (opts.write !== undefined && opts.write !== "eager" && opts.write !== "on-close") {
      throw new TypeError(`write must be "eager" or "on-close", got ${JSON.stringify(opts.write)}`);
    }
    this.#maxAgeMs = opts.maxAge === undefined ? undefined : parseMaxAge(opts.maxAge);
    if (
      opts.maxFileBytes !== undefined &&
      !(Number.isSafeInteger(opts.maxFileBytes) && opts.maxFileBytes > 0)
    ) {
      throw new RangeError(
        `maxFileBytes must be a positive integer (bytes), got ${String(opts.maxFileBytes)}`,
      );
    }
    this.#maxFileBytes = opts.maxFileBytes ?? MAX_CASSETTE_BYTES;
    this.#cacheDir =
      opts.parseCache === false
        ? false
        : resolve(opts.parseCache ?? resolve(process.cwd(), ".invocache", "cassette-cache"));
  }

  // ---- Store -----------------------------------------------------------------

  async get(key: string): Promise<JsonValue | undefined> {
    assertStoreKey(key, "key");
    return this.#op("get", key, async () => {
      await this.#ensureLoaded();
      const now = Date.now();
      let item = live(this.#lookup(key), now);
      if (item === undefined && (await this.#refresh())) item = live(this.#lookup(key), now);
      if (item === undefined) return undefined;
      if (this.#isStale(item, now)) {
        this.#stale.add(key);
        if (this.#onStale === "rerecord") return undefined;
        const when = (item.value as { meta: { recordedAt: string } }).meta.recordedAt;
        const what = `${this.#src.display}: entry ${key} was recorded at ${when}, more than maxAge (${String(this.#opts.maxAge)}) ago`;
        if (this.#onStale === "error") {
          throw new CassetteError(
            this.path,
            "get",
            `${what}. Re-record it with INVOCACHE_MODE=record, or raise maxAge.`,
            {
              url: this.url,
              key,
            },
          );
        }
        this.#warn(
          `${what}; replaying it anyway (onStale: "warn"). Re-record with INVOCACHE_MODE=record.`,
        );
      }
      this.#read.add(key);
      return this.#out(item.value);
    });
  }

  async set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    assertStoreKey(key, "key");
    assertJsonValue(value, "value");
    if (tooDeep(value)) {
      throw new CassetteError(
        this.path,
        "set",
        `${this.#src.display}: the value for ${JSON.stringify(key)} nests deeper than ${MAX_VALUE_DEPTH} levels, more than a cassette holds. Flatten it, or record into a SQLite store.`,
        { url: this.url, key },
      );
    }
    const ttlMs = options?.ttlMs;
    if (ttlMs !== undefined) assertTtl(ttlMs, "options.ttlMs");
    // Snapshot now (a caller may mutate `value` after the call). A JSON round
    // trip is exactly what the contract promises back (-0 becomes 0).
    const snapshot = JSON.parse(JSON.stringify(value)) as JsonValue;
    return this.#op("set", key, async () => {
      const item: CassetteItem = {
        key,
        value: snapshot,
        ...(ttlMs === undefined ? {} : { expires: Date.now() + ttlMs }),
      };
      this.#overlay.set(key, this.#scrub(item));
      this.#written.add(key);
      if (this.#eager) await this.#flushAll();
    });
  }

  async delete(key: string): Promise<boolean> {
    assertStoreKey(key, "key");
    return this.#op("delete", key, async () => {
      await this.#ensureLoaded();
      let existed = live(this.#lookup(key), Date.now()) !== undefined;
      if (!existed && (await this.#refresh()))
        existed = live(this.#lookup(key), Date.now()) !== undefined;
      this.#overlay.set(key, null);
      this.#written.delete(key);
      if (this.#eager) await this.#flushAll();
      return existed;
    });
  }

  list(prefix: string): AsyncIterable<[string, JsonValue]> {
    const store = this;
    return {
      async *[Symbol.asyncIterator]() {
        assertKeyPrefix(prefix, "prefix");
        const items = await store.#op("list", prefix, async () => {
          await store.#ensureLoaded();
          await store.#refresh();
          return store.#view(Date.now()).filter((i) => i.key.startsWith(prefix));
        });
        for (const item of items) yield [item.key, store.#out(item.value)] as [string, JsonValue];
      },
    };
  }

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertStoreKey(key, "key");
    assertStoreKey(owner, "owner");
    assertTtl(ttlMs, "ttlMs");
    return this.#op("acquireLease", key, () =>
      acquireFileLease(this.path, key, owner, ttlMs, this.#lockOpts),
    );
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    assertStoreKey(key, "key");
    assertStoreKey(owner, "owner");
    return this.#op("releaseLease", key, () =>
      releaseFileLease(this.path, key, owner, this.#lockOpts),
    );
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled(this.#inflight);
      try {
        await this.#guard("close", undefined, () => this.#flushAll());
      } finally {
        await Promise.allSettled(this.#background);
      }
    })();
    return this.#closing;
  }

  // ---- CassetteStore ---------------------------------------------------------

  flush(): Promise<void> {
    return this.#op("flush", undefined, () => this.#flushAll());
  }

  discard(): Promise<void> {
    this.#closing ??= (async () => {
      this.#overlay.clear();
      await Promise.allSettled(this.#inflight);
      this.#overlay.clear();
      await Promise.allSettled(this.#background);
    })();
    return this.#closing;
  }

  usage(): Promise<CassetteUsage> {
    return this.#op("usage", undefined, async () => {
      await this.#ensureLoaded();
      const now = Date.now();
      const inFile = [...(this.#initial ?? [])].filter(isEntryKey);
      const entries = (keys: Iterable<string>) => [...keys].filter(isEntryKey);
      return {
        used: inFile.filter((k) => this.#read.has(k)),
        unused: inFile.filter(
          (k) =>
            !this.#read.has(k) && !this.#written.has(k) && live(this.#lookup(k), now) !== undefined,
        ),
        recorded: entries(this.#written),
        stale: entries(this.#stale),
      };
    });
  }

  // ---- reading ---------------------------------------------------------------

  get #eager(): boolean {
    return (this.#opts.write ?? "eager") === "eager";
  }

  get #onStale(): OnStale {
    return this.#opts.onStale ?? "warn";
  }

  get #lockOpts() {
    return {
      ...(this.#opts.lockTimeoutMs === undefined ? {} : { timeoutMs: this.#opts.lockTimeoutMs }),
      ...(this.#opts.lockStaleMs === undefined ? {} : { staleMs: this.#opts.lockStaleMs }),
      onCompromised: (error: Error) =>
        this.#warn(
          `${this.#src.display}: lost the cassette lock while writing (${error.message}); another process may have written at the same time`,
        ),
    };
  }

  #lookup(key: string): CassetteItem | undefined {
    const changed = this.#overlay.get(key);
    if (changed !== undefined) return changed ?? undefined;
    return this.#disk.get(key);
  }

  /** Every live item in file order, then this handle's new keys. */
  #view(now: number): CassetteItem[] {
    const out: CassetteItem[] = [];
    const consider = (item: CassetteItem | undefined) => {
      const it = live(item, now);
      if (it === undefined) return;
      if (this.#onStale === "rerecord" && this.#isStale(it, now)) return;
      out.push(it);
    };
    for (const key of this.#disk.keys()) consider(this.#lookup(key));
    for (const [key, item] of this.#overlay)
      if (!this.#disk.has(key) && item !== null) consider(item);
    return out;
  }

  #isStale(item: CassetteItem, now: number): boolean {
    return (
      this.#maxAgeMs !== undefined &&
      isEntryKey(item.key) &&
      isStale(item.value, this.#maxAgeMs, now)
    );
  }

  /** A fresh copy for the caller, with secrets restored when asked. */
  #out(value: JsonValue): JsonValue {
    if (this.#opts.restoreSecrets === true) {
      return restoreSecrets(value, { ...this.#opts.secretOptions, ...this.#envOpt }).value;
    }
    return structuredClone(value);
  }

  #ensureLoaded(): Promise<void> {
    if (this.#loading === undefined) {
      const loading = this.#load();
      this.#loading = loading;
      // A failed load is retried by the next operation (the file may have been fixed).
      loading.catch(() => {
        if (this.#loading === loading) this.#loading = undefined;
      });
    }
    return this.#loading;
  }

  async #load(): Promise<void> {
    const generation = this.#generation;
    if (this.#cacheDir !== false) {
      const stamp = await statStamp(this.path);
      if (stamp !== undefined && stamp.size > BigInt(this.#maxFileBytes)) {
        throw this.#tooBig("load", stamp.size, false);
      }
      if (stamp !== undefined && stamp.size >= PARSE_CACHE_MIN_BYTES) {
        const cached = await readParseCache(this.#cacheDir, this.path, stamp, async () => {
          const read = await readWithStamp(this.path);
          return read !== undefined && sameStamp(read.stamp, stamp) ? read.bytes : undefined;
        });
        if (cached !== undefined) {
          this.#adopt(cached, stamp, generation);
          this.#initial ??= new Set(cached.map((i) => i.key));
          return;
        }
      }
    }
    const { items, stamp } = await this.#readFile();
    this.#adopt(items, stamp, generation);
    this.#initial ??= new Set(items.map((i) => i.key));
  }

  /** Re-read the file if its stat data changed since we last saw it; true when it did. */
  async #refresh(): Promise<boolean> {
    const generation = this.#generation;
    const stamp = await statStamp(this.path);
    if (sameStamp(stamp, this.#stamp)) return false;
    const read = await this.#readFile();
    this.#adopt(read.items, read.stamp, generation);
    return true;
  }

  /** Read and check the file (absent: no items). Starts a parse-cache write for big files. */
  async #readFile(): Promise<{ items: CassetteItem[]; stamp: FileStamp | undefined }> {
    let read: Awaited<ReturnType<typeof readWithStamp>>;
    try {
      read = await readWithStamp(this.path, this.#maxFileBytes);
    } catch (error) {
      if (error instanceof FileTooBigError) throw this.#tooBig("load", error.size, false);
      throw error;
    }
    if (read === undefined) return { items: [], stamp: undefined };
    const text = decodeCassette(read.bytes, this.#src);
    // Another writer's version of a file we know: parse only the items that changed.
    const items = parseIncremental(text, this.#known, this.#src) ?? parseCassette(text, this.#src);
    this.#known = knownChunks(text, items);
    const cacheDir = this.#cacheDir;
    if (cacheDir !== false && read.bytes.length >= PARSE_CACHE_MIN_BYTES) {
      // In the background: hashing and serializing a big file is not the caller's wait.
      const task = new Promise<void>((done) => setImmediate(done)).then(() =>
        writeParseCache(cacheDir, this.path, read.stamp, contentHash(read.bytes), items),
      );
      this.#background.add(task);
      void task.finally(() => this.#background.delete(task));
    }
    return { items, stamp: read.stamp };
  }

  /**
   * Take `items` as the file's content. `generation` is the value seen when
   * the read started: a read that another adoption overtook is dropped, so a
   * slow read never replaces newer content. Undefined forces (under the lock).
   */
  #adopt(items: readonly CassetteItem[], stamp: FileStamp | undefined, generation?: number): void {
    if (generation !== undefined && generation !== this.#generation) return;
    this.#generation++;
    this.#disk = new Map(items.map((i) => [i.key, i]));
    this.#stamp = stamp;
    for (const item of items) if (!this.#origin.has(item.key)) this.#origin.set(item.key, item);
  }

  // ---- writing ---------------------------------------------------------------

  /**
   * Resolve once everything in the overlay now is on disk. Calls made while a
   * write runs share the next one (group commit), so N concurrent `set`s cost
   * about two writes, not N.
   */
  #flushAll(): Promise<void> {
    if (this.#queued !== undefined) return this.#queued;
    const next = (async () => {
      await this.#running?.catch(() => {});
      this.#queued = undefined;
      const run = this.#writeOverlay();
      this.#running = run;
      try {
        await run;
      } finally {
        if (this.#running === run) this.#running = undefined;
      }
    })();
    this.#queued = next;
    return next;
  }

  /**
   * Write the batch of changes now in the overlay, or fail: a `set` never
   * resolves unless its value is in the file as renamed into place.
   *
   * Optimistic, so the lock is never held across heavy work: parsing a big
   * cassette, merging, scanning for secrets and rendering YAML can keep the
   * event loop busy for seconds, and a lock that cannot be refreshed goes
   * stale and is taken over by another process. So all of that happens
   * outside the lock, against the file version last read (its stamp). Under
   * the lock only: check that the file is still that version (else drop the
   * lock, re-read and try again; another writer made progress), write the
   * temp file, check the lock is still ours, rename.
   *
   * A batch that failed is dropped from the overlay: its callers were told it
   * failed, so it must not reach the file later with someone else's write.
   */
  async #writeOverlay(): Promise<void> {
    if (this.#overlay.size === 0) return;
    const batch = new Map(this.#overlay);
    try {
      await this.#writeBatch(batch);
    } catch (error) {
      for (const [key, item] of batch) {
        if (this.#overlay.get(key) !== item) continue;
        this.#overlay.delete(key);
        if (item !== null) this.#written.delete(key);
      }
      throw error;
    }
    for (const [key, item] of batch) if (this.#overlay.get(key) === item) this.#overlay.delete(key);
  }

  async #writeBatch(batch: Map<string, CassetteItem | null>): Promise<void> {
    const started = Date.now();
    const budgetMs = 4 * (this.#opts.lockTimeoutMs ?? LOCK_TIMEOUT_MS);
    for (let attempt = 1; ; attempt++) {
      // Outside the lock: the file as it is now. A file we cannot parse
      // throws here, before anything is written over it.
      const stamp = await statStamp(this.path);
      if (!sameStamp(stamp, this.#stamp)) {
        const read = await this.#readFile();
        this.#adopt(read.items, read.stamp);
      }
      this.#initial ??= new Set(this.#disk.keys());
      const basis = this.#stamp;
      const merged = this.#merge(batch);
      const text = sameItems(merged, this.#disk) ? undefined : emitCassette(merged.values());
      if (text !== undefined && text.length > this.#maxFileBytes) {
        // A cheap lower bound first; the exact size is the UTF-8 length.
        const bytes = Buffer.byteLength(text);
        if (bytes > this.#maxFileBytes) throw this.#tooBig("set", BigInt(bytes), true);
      }
      const outcome = await withFileLock(
        this.path,
        async (lock) => {
          if (!this.#orphansChecked) {
            await removeOrphanTemps(this.path);
            this.#orphansChecked = true;
          }
          if (!sameStamp(await statStamp(this.path), basis)) return "changed" as const;
          if (text === undefined) return "unchanged" as const;
          this.#assertWritable(basis);
          const written = await writeFileAtomic(this.path, text, {
            beforeRename: () => lock.assertHeld(),
          });
          this.#generation++;
          this.#disk = merged;
          this.#stamp = written;
          this.#known = new Map();
          for (const item of merged.values()) {
            const chunk = emittedChunk(item);
            if (chunk !== undefined) this.#known.set(chunk, item);
          }
          return "written" as const;
        },
        this.#lockOpts,
      ).catch((error: unknown) => {
        if ((error as { code?: unknown }).code !== "ELOCKLOST") throw error;
        throw new CassetteError(
          this.path,
          "set",
          `${this.#src.display}: ${(error as Error).message}, so this write was not made (another process may be writing the cassette). ` +
            "Nothing of it was saved; retry. If the cassette is big, split it or raise lockStaleMs.",
          { url: this.url, cause: error },
        );
      });
      if (outcome !== "changed") return;
      if (attempt >= 3 && Date.now() - started > budgetMs) {
        throw new CassetteError(
          this.path,
          "set",
          `${this.#src.display}: other processes rewrote the cassette ${attempt} times while this one was merging its write (${Date.now() - started} ms), so it was not made. ` +
            "Nothing of it was saved; retry, give each worker its own cassette, or split the cassette.",
          { url: this.url },
        );
      }
    }
  }

  /** The file's items with `batch` applied: expired items dropped, everything scanned for secrets. */
  #merge(batch: Map<string, CassetteItem | null>): Map<string, CassetteItem> {
    const now = Date.now();
    const merged = new Map(this.#disk);
    for (const [key, item] of batch) {
      if (item === null) merged.delete(key);
      else merged.set(key, this.#stable(item, now));
    }
    for (const [key, item] of merged) {
      if (item.expires !== undefined && now > item.expires) merged.delete(key);
      else if (!this.#clean.has(item)) merged.set(key, this.#scrub(item));
    }
    return merged;
  }

  /** The file's original item when `item` records the same thing (byte-identical re-records). */
  #stable(item: CassetteItem, now: number): CassetteItem {
    const origin = this.#origin.get(item.key);
    if (origin === undefined || origin === item || origin.expires !== item.expires) return item;
    // A stale entry recorded again is refreshed, so its age starts over.
    if (this.#isStale(origin, now)) return item;
    return sameRecording(item.key, origin.value, item.value) ? origin : item;
  }

  /** `item` with its secrets redacted (or a SecretLeakError under `secrets: "refuse"`). */
  #scrub(item: CassetteItem): CassetteItem {
    const scanner = createSecretScanner({ ...this.#opts.secretOptions, ...this.#envOpt });
    const keyFindings: Parameters<typeof scanner.redactString>[2] = [];
    scanner.redactString(item.key, "key", keyFindings);
    const { value, found } = scanner.redact(item.value);
    const findings = [...keyFindings, ...found];
    if (findings.length > 0 && (keyFindings.length > 0 || this.#opts.secrets === "refuse")) {
      const list = findings.map((f) => `${f.name} at ${f.path}`).join(", ");
      const fix =
        keyFindings.length > 0
          ? "A store key cannot be redacted; do not put secrets in keys."
          : 'Remove it from the request/response, or use secrets: "redact" (the default) to write {secret:NAME} placeholders.';
      throw new SecretLeakError(
        this.#src.display,
        findings.map(({ name, path }) => ({ name, path })),
        `invocache: refusing to write ${findings.length} secret${findings.length === 1 ? "" : "s"} to ${this.#src.display}${keyFindings.length > 0 ? "" : ` (${item.key})`}: ${list}. ${fix}`,
      );
    }
    const out: CassetteItem = value === item.value ? item : { ...item, value };
    this.#clean.add(out);
    return out;
  }

  get #envOpt(): { env?: Record<string, string | undefined> } {
    return this.#opts.env === undefined ? {} : { env: this.#opts.env };
  }

  // ---- plumbing --------------------------------------------------------------

  #tooBig(operation: string, size: bigint, writing: boolean): CassetteError {
    const what = writing
      ? `this write would make the cassette ${size} bytes`
      : `the cassette is ${size} bytes`;
    return new CassetteError(
      this.path,
      operation,
      `${this.#src.display}: ${what}, over the limit of ${this.#maxFileBytes} bytes (maxFileBytes). ` +
        "A cassette is held in memory whole, and parsing takes several times its size: split it into several cassettes " +
        '(withCassette({ name }) per group of tests), or record into a SQLite store (store: "sqlite://…"). ' +
        "Raise maxFileBytes only if the process has the memory.",
      { url: this.url },
    );
  }

  /** Refuse to rewrite a cassette whose owner made it read-only (root would write it anyway). */
  #assertWritable(stamp: FileStamp | undefined): void {
    if (stamp === undefined || (stamp.mode & 0o222) !== 0) return;
    throw new CassetteError(
      this.path,
      "set",
      `${this.#src.display} is read-only (mode ${stamp.mode.toString(8).padStart(4, "0")}), so invocache does not rewrite it. ` +
        "Make it writable (chmod u+w) to record into it, or replay it (INVOCACHE_MODE=replay).",
      { url: this.url },
    );
  }

  #warn(message: string): void {
    if (this.#opts.onWarning !== undefined) this.#opts.onWarning(message);
    else process.emitWarning(message, { code: "INVOCACHE_CASSETTE" });
  }

  #op<T>(operation: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
    if (this.#closing !== undefined) {
      return Promise.reject(
        new StoreError(
          this.url,
          operation,
          `invocache cassette ${this.#src.display}: ${operation} failed: the store is closed. Open a new one with cassetteStore().`,
          key === undefined ? {} : { key },
        ),
      );
    }
    const op = this.#guard(operation, key, fn);
    this.#inflight.add(op);
    const forget = () => this.#inflight.delete(op);
    op.then(forget, forget);
    return op;
  }

  async #guard<T>(operation: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (cause) {
      // Our own errors (CassetteError, SecretLeakError…) already say what to do.
      if (cause instanceof InvocacheError) throw cause;
      const message = cause instanceof Error ? cause.message : String(cause);
      throw new StoreError(
        this.url,
        operation,
        `invocache cassette ${this.#src.display}: ${operation}${key === undefined ? "" : ` ${JSON.stringify(key)}`} failed: ${message}. Check that the file and its folder are readable and writable; a failing store is never treated as a miss.`,
        { cause, ...(key === undefined ? {} : { key }) },
      );
    }
  }
}

function live(item: CassetteItem | undefined, now: number): CassetteItem | undefined {
  if (item === undefined) return undefined;
  return item.expires !== undefined && now > item.expires ? undefined : item;
}

function sameItems(a: Map<string, CassetteItem>, b: Map<string, CassetteItem>): boolean {
  if (a.size !== b.size) return false;
  const ib = b.entries();
  for (const [key, item] of a) {
    const next = ib.next().value as [string, CassetteItem];
    if (next[0] !== key || next[1] !== item) return false;
  }
  return true;
}
