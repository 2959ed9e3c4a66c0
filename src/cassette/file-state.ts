/**
 * What one cassette handle knows of its file: the last known content
 * (`disk`, in file order), its stat stamp, this handle's unwritten changes
 * (`overlay`), and how the file is (re)read. Lazy: nothing is read until the
 * first operation. A miss re-checks the stat data and re-reads a file that
 * another process changed, so a recording made by a parallel worker is seen.
 */
import { CassetteError } from "../errors.js";
import { redactOutward } from "../secrets/index.js";
import { readAppended, tornWarning } from "./append.js";
import { type FileStamp, FileTooBigError, readWithStamp, sameStamp, statStamp } from "./files.js";
import { type KnownChunks, knownChunks, noChunks, parseIncremental } from "./incremental.js";
import type { CassetteItem } from "./item.js";
import type { CassetteSettings } from "./options.js";
import { valueChecksPass } from "./owed-checks.js";
import { type CassetteSource, oweCachedIdCheck, parseCassetteOwingChecks } from "./parse.js";
import {
  contentHash,
  PARSE_CACHE_MIN_BYTES,
  readParseCache,
  writeParseCache,
} from "./parse-cache.js";
import { UsageLog } from "./usage.js";

/** How long a store left open waits before writing a parsed-form cache (close writes it at once). */
const PARSE_CACHE_WRITE_DELAY_MS = 5_000;

/**
 * What the version of the file last read or written holds after its first
 * document (append.ts): where the next append goes, and whether there is
 * anything there (records, or a torn tail) that a rewrite folds in.
 */
export interface FileTail {
  /** Bytes up to the end of the last whole record. */
  readonly validBytes: number;
  /** Whether the file has appended records or a torn tail (not the normal form). */
  readonly appended: boolean;
}

/** The tail of a file in the normal form of `size` bytes (or none). */
export function normalTail(size: bigint | undefined): FileTail {
  return { validBytes: Number(size ?? 0n), appended: false };
}

export class CassetteFile {
  /**
   * Chunk text → item of the file version last read or written
   * (incremental.ts). After a read it is built on first need, the next
   * re-read: hashing every chunk costs a tenth of a cold load, and most
   * handles never re-read.
   */
  #known: KnownChunks | (() => KnownChunks) = noChunks();
  /** Last known content of the file, in file order. */
  disk = new Map<string, CassetteItem>();
  stamp: FileStamp | undefined;
  /** Appended records or a torn tail of the version of `stamp`. */
  tail: FileTail = normalTail(undefined);
  /** Bumped whenever `disk` is replaced; a slower read never overwrites a newer one. */
  generation = 0;
  /** This handle's changes not yet written; null is a delete. */
  readonly overlay = new Map<string, CassetteItem | null>();
  /** Each key's item as first seen in the file: re-records equal to it keep it (stability). */
  readonly origin = new Map<string, CassetteItem>();
  readonly usage: UsageLog;
  /** Background work (parse-cache writes) that close waits for. */
  readonly background = new Set<Promise<unknown>>();
  /** Parse-cache writes not started yet: started by close ({@link startDeferred}) or their timer. */
  readonly #deferred = new Set<() => void>();
  #loading: Promise<void> | undefined;

  constructor(
    readonly path: string,
    readonly src: CassetteSource,
    readonly settings: CassetteSettings,
  ) {
    this.usage = new UsageLog(settings.maxAgeMs);
  }

  get known(): KnownChunks {
    if (typeof this.#known === "function") this.#known = this.#known();
    return this.#known;
  }

  set known(chunks: KnownChunks) {
    this.#known = chunks;
  }

  /** The item under `key` as this handle sees it: its own change, else the file's. */
  lookup(key: string): CassetteItem | undefined {
    const changed = this.overlay.get(key);
    if (changed !== undefined) return changed ?? undefined;
    return this.disk.get(key);
  }

  /** Every live item in file order, then this handle's new keys. */
  view(now: number): CassetteItem[] {
    const out: CassetteItem[] = [];
    for (const key of this.disk.keys()) {
      const item = live(this.lookup(key), now);
      if (item !== undefined) out.push(item);
    }
    for (const [key, item] of this.overlay) {
      if (this.disk.has(key) || item === null) continue;
      if (live(item, now) !== undefined) out.push(item);
    }
    return out;
  }

  ensureLoaded(): Promise<void> {
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
    const generation = this.generation;
    const { cacheDir, maxFileBytes } = this.settings;
    if (cacheDir !== false) {
      const stamp = await statStamp(this.path);
      if (stamp !== undefined && stamp.size > BigInt(maxFileBytes)) {
        throw this.tooBig("load", stamp.size, false);
      }
      if (stamp !== undefined && stamp.size >= PARSE_CACHE_MIN_BYTES) {
        const cached = await readParseCache(
          cacheDir,
          this.path,
          stamp,
          async () => {
            const read = await readWithStamp(this.path);
            return read !== undefined && sameStamp(read.stamp, stamp) ? read.bytes : undefined;
          },
          (item, index) => oweCachedIdCheck(item, index, this.src),
        );
        if (cached !== undefined) {
          // Only a file in the normal form is cached (see readFile).
          this.adopt(cached, stamp, generation, normalTail(stamp.size));
          this.usage.loaded(cached.map((i) => i.key));
          return;
        }
      }
    }
    const { items, stamp, tail } = await this.readFile();
    this.adopt(items, stamp, generation, tail);
    this.usage.loaded(items.map((i) => i.key));
  }

  /** Re-read the file if its stat data changed since we last saw it; true when it did. */
  async refresh(): Promise<boolean> {
    const generation = this.generation;
    const stamp = await statStamp(this.path);
    if (sameStamp(stamp, this.stamp)) return false;
    const read = await this.readFile();
    this.adopt(read.items, read.stamp, generation, read.tail);
    return true;
  }

  /** Read and check the file (absent: no items). Starts a parse-cache write for big files. */
  async readFile(): Promise<{
    items: CassetteItem[];
    stamp: FileStamp | undefined;
    tail: FileTail;
  }> {
    let read: Awaited<ReturnType<typeof readWithStamp>>;
    try {
      read = await readWithStamp(this.path, this.settings.maxFileBytes);
    } catch (error) {
      if (error instanceof FileTooBigError) throw this.tooBig("load", error.size, false);
      throw error;
    }
    if (read === undefined) return { items: [], stamp: undefined, tail: normalTail(undefined) };
    // Another writer's version of a file we know: parse only the items that changed.
    // Else the whole file, each item's value and id checks left to its first use (owed-checks.ts).
    // Records appended after the first document (append.ts) are applied over it.
    const { headText, headItems, items, file } = readAppended(
      read.bytes,
      this.src,
      (text) =>
        parseIncremental(text, this.known, this.src) ?? parseCassetteOwingChecks(text, this.src),
    );
    this.#known = () => knownChunks(headText, headItems);
    if (file.torn !== undefined) {
      this.warn(tornWarning(this.src.display, file, read.bytes.length));
    }
    const tail: FileTail = {
      validBytes: file.validBytes,
      appended: file.records.length > 0 || file.torn !== undefined,
    };
    const cacheDir = this.settings.cacheDir;
    if (cacheDir !== false && !tail.appended && read.bytes.length >= PARSE_CACHE_MIN_BYTES) {
      // Only checked values are cached (JSON would turn a NaN into a null that passes).
      this.#deferWrite(async () => {
        if (!valueChecksPass(items)) return;
        await writeParseCache(cacheDir, this.path, read.stamp, contentHash(read.bytes), items);
      });
    }
    return { items, stamp: read.stamp, tail };
  }

  /** A warning about this file, redacted (it leaves the process), to `onWarning` or the process. */
  warn(raw: string): void {
    const message = redactOutward(raw);
    if (this.settings.onWarning !== undefined) this.settings.onWarning(message);
    else process.emitWarning(message, { code: "INVOCACHE_CASSETTE" });
  }

  /**
   * Run `write` at close, or after {@link PARSE_CACHE_WRITE_DELAY_MS} for a
   * store left open. Hashing and serializing a big file is synchronous work
   * (~165 ms for the 5.8 MB peers cassette here): started one event-loop
   * turn after the load, as it was, it ran before the first call had its
   * answer. The timer never keeps the process alive; a process that ends
   * without closing the store leaves the cache unwritten (a cache only).
   */
  #deferWrite(write: () => Promise<void>): void {
    let timer: NodeJS.Timeout | undefined;
    const start = () => {
      if (!this.#deferred.delete(start)) return;
      clearTimeout(timer);
      const task = write();
      this.background.add(task);
      void task.finally(() => this.background.delete(task));
    };
    this.#deferred.add(start);
    timer = setTimeout(start, PARSE_CACHE_WRITE_DELAY_MS);
    timer.unref();
  }

  /** Start every deferred parse-cache write now (close and discard, before they wait for `background`). */
  startDeferred(): void {
    for (const start of [...this.#deferred]) start();
  }

  /**
   * Take `items` as the file's content. `generation` is the value seen when
   * the read started: a read that another adoption overtook is dropped, so a
   * slow read never replaces newer content. Undefined forces (under the lock).
   */
  adopt(
    items: readonly CassetteItem[],
    stamp: FileStamp | undefined,
    generation: number | undefined,
    tail: FileTail,
  ): void {
    if (generation !== undefined && generation !== this.generation) return;
    this.generation++;
    this.disk = new Map(items.map((i) => [i.key, i]));
    this.stamp = stamp;
    this.tail = tail;
    for (const item of items) if (!this.origin.has(item.key)) this.origin.set(item.key, item);
  }

  tooBig(operation: string, size: bigint, writing: boolean): CassetteError {
    const what = writing
      ? `this write would make the cassette ${size} bytes`
      : `the cassette is ${size} bytes`;
    return new CassetteError(
      this.path,
      operation,
      `${this.src.display}: ${what}, over the limit of ${this.settings.maxFileBytes} bytes (maxFileBytes). ` +
        "A cassette is held in memory whole, and parsing takes several times its size: split it into several cassettes " +
        '(withCassette({ name }) per group of tests), or record into a SQLite store (store: "sqlite://…"). ' +
        "Raise maxFileBytes only if the process has the memory.",
      { url: this.src.url },
    );
  }
}

/** `item` unless its ttl has passed. */
export function live(item: CassetteItem | undefined, now: number): CassetteItem | undefined {
  if (item === undefined) return undefined;
  return item.expires !== undefined && now > item.expires ? undefined : item;
}
