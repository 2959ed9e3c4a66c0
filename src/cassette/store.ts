/**
 * `cassetteStore(path)`: a `Store` kept in one YAML file, for record/replay
 * in tests. A storage backend like the keyv ones, under the same store shell
 * (src/store/shell.ts: argument checks, snapshots, closing, error wrapping).
 * The recorder's policy (modes, runs, occurrences, staleness, redaction)
 * applies unchanged; the cassette only decides how data reaches the disk:
 *
 * - what the handle knows of the file, and (re)reading it: file-state.ts;
 * - writing (merge under the lock, stable re-records, the last-line secret
 *   refusal, atomic rename): writer.ts, refuse.ts;
 * - which entries were used, for unused-entry reports: usage.ts;
 * - options, and which of them are the recorder's policy: options.ts.
 *
 * `write: "eager"` (default) resolves `set` once the value is on disk;
 * `"on-close"` buffers until `flush()`/`close()`, and `discard()` drops the
 * buffer (the vitest helper uses it so a failed test leaves no half recording).
 */
import { resolve } from "node:path";
import { CassetteError } from "../errors.js";
import { assertJsonValue, cloneJsonValue, type JsonValue, setMember } from "../json/index.js";
import type { GetOptions, SetOptions, Store, StorePolicy } from "../store/index.js";
import { type MetaQuery, metaFromValues, type StoredMeta } from "../store/index.js";
import {
  assertDigest,
  checkKey,
  checkLease,
  checkMetaQuery,
  checkPrefix,
  checkSet,
  StoreShell,
  valueDigest,
} from "../store/internal.js";
import { CassetteFile, live } from "./file-state.js";
import type { CassetteItem } from "./item.js";
import { acquireFileLease, releaseFileLease } from "./leases.js";
import { type CassetteOptions, type CassetteSettings, resolveCassetteOptions } from "./options.js";
import { owesChecks, settleAllChecks, settleChecks } from "./owed-checks.js";
import { MAX_VALUE_DEPTH, tooDeep } from "./parse.js";
import { cassetteSource } from "./source.js";
import type { CassetteUsage } from "./usage.js";
import { CassetteWriter } from "./writer.js";

export { type CassetteOptions, MAX_CASSETTE_BYTES } from "./options.js";
export type { CassetteUsage } from "./usage.js";

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
  return new CassetteStoreImpl(resolve(path), resolveCassetteOptions(options));
}

/**
 * {@link cassetteStore}, appending each acknowledged write to the file
 * (append.ts) until `close()`, which rewrites it once in the normal form.
 * For a long-lived recording handle (the proxy); reachable through
 * internal.ts only.
 */
export function recordingCassetteStore(path: string, options: CassetteOptions = {}): CassetteStore {
  const store = cassetteStore(path, options);
  (store as CassetteStoreImpl).appendWrites();
  return store;
}

class CassetteStoreImpl implements CassetteStore {
  readonly path: string;
  readonly url: string;
  readonly policy?: StorePolicy;
  readonly #file: CassetteFile;
  readonly #writer: CassetteWriter;
  readonly #shell: StoreShell;

  constructor(path: string, settings: CassetteSettings) {
    const src = cassetteSource(path);
    this.path = path;
    this.url = src.url;
    if (settings.policy !== undefined) this.policy = settings.policy;
    this.#file = new CassetteFile(path, src, settings);
    this.#writer = new CassetteWriter(this.#file);
    this.#shell = new StoreShell({
      url: src.url,
      subject: `cassette ${src.display}`,
      fix: "Check that the file and its folder are readable and writable; a failing store is never treated as a miss.",
      reopen: "Open a new one with cassetteStore().",
    });
  }

  /** See {@link recordingCassetteStore}. */
  appendWrites(): void {
    this.#file.settings.append = true;
  }

  // ---- Store -----------------------------------------------------------------

  async get(key: string, options?: GetOptions): Promise<JsonValue | undefined> {
    checkKey(key);
    return this.#shell.run("get", key, async () => {
      const item = await this.#find(key);
      if (item === undefined) return undefined;
      // An item's value, and an entry's id, are checked before it is first served (owed-checks.ts).
      if (owesChecks(item)) await settleChecks(item, options?.expect);
      this.#file.usage.read(item, Date.now());
      return cloneJsonValue(item.value);
    });
  }

  /**
   * See `Store.getHit`: `get` without copying the manifest. The owed checks
   * are the same as `get`'s: an entry's id check still runs (by comparison
   * with `expect` when given) before it is first served.
   */
  async getHit(key: string, options?: GetOptions): Promise<JsonValue | undefined> {
    checkKey(key);
    return this.#shell.run("get", key, async () => {
      const item = await this.#find(key);
      if (item === undefined) return undefined;
      if (owesChecks(item)) await settleChecks(item, options?.expect);
      this.#file.usage.read(item, Date.now());
      return copyWithoutManifest(item.value);
    });
  }

  async set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    const { snapshot, ttlMs, refresh } = checkSet(key, value, options, roundTrip);
    if (tooDeep(snapshot)) {
      throw new CassetteError(
        this.path,
        "set",
        `${this.#file.src.display}: the value for ${JSON.stringify(key)} nests deeper than ${MAX_VALUE_DEPTH} levels, more than a cassette holds. Flatten it, or record into a SQLite store.`,
        { url: this.url, key },
      );
    }
    return this.#shell.run("set", key, async () => {
      const item: CassetteItem = {
        key,
        value: snapshot,
        ...(ttlMs === undefined ? {} : { expires: Date.now() + ttlMs }),
      };
      this.#writer.stage(item, refresh);
      this.#file.usage.written(key);
      if (this.#file.settings.eager) await this.#writer.flushAll();
    });
  }

  async delete(key: string): Promise<boolean> {
    checkKey(key);
    return this.#shell.run("delete", key, async () => {
      const existed = (await this.#find(key)) !== undefined;
      this.#writer.stageDelete(key);
      this.#file.usage.unwritten(key);
      if (this.#file.settings.eager) await this.#writer.flushAll();
      return existed;
    });
  }

  async deleteIfUnchanged(key: string, digest: string): Promise<boolean> {
    checkKey(key);
    assertDigest(digest, "digest");
    return this.#shell.run("delete", key, async () => {
      const current = await this.#find(key);
      if (current === undefined || valueDigest(current.value) !== digest) return false;
      // This handle's own unwritten value is ours to drop; the file's item is
      // dropped only if it still matches when the write is merged, under the lock.
      const own = this.#file.overlay.get(key) !== undefined;
      const condition = this.#writer.stageDelete(
        key,
        own ? undefined : (item) => valueDigest(item.value) === digest,
      );
      this.#file.usage.unwritten(key);
      // write: "on-close" answers for this handle's view; the condition is checked again at the write.
      if (!this.#file.settings.eager) return true;
      await this.#writer.flushAll();
      return condition === undefined || condition.removed;
    });
  }

  /** See `Store.listMeta`: a cassette is held in memory, so its metadata is computed from its items. */
  listMeta(query: MetaQuery = {}): AsyncIterable<StoredMeta> {
    checkMetaQuery(query);
    return metaFromValues(this.list(query.prefix ?? ""), query);
  }

  list(prefix: string): AsyncIterable<[string, JsonValue]> {
    const file = this.#file;
    const shell = this.#shell;
    return {
      async *[Symbol.asyncIterator]() {
        checkPrefix(prefix);
        const items = await shell.run("list", prefix, async () => {
          await file.ensureLoaded();
          await file.refresh();
          const listed = file.view(Date.now()).filter((i) => i.key.startsWith(prefix));
          await settleAllChecks(listed);
          return listed;
        });
        for (const item of items)
          yield [item.key, cloneJsonValue(item.value)] as [string, JsonValue];
      },
    };
  }

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    checkLease(key, owner, ttlMs);
    return this.#shell.run("acquireLease", key, () =>
      acquireFileLease(this.path, key, owner, ttlMs, this.#writer.lockOptions),
    );
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    checkLease(key, owner);
    return this.#shell.run("releaseLease", key, () =>
      releaseFileLease(this.path, key, owner, this.#writer.lockOptions),
    );
  }

  close(): Promise<void> {
    return this.#shell.closeOnce(async () => {
      try {
        await this.#shell.guard("close", undefined, async () => {
          await this.#writer.flushAll();
          await this.#writer.compact();
        });
      } finally {
        this.#file.startDeferred();
        await Promise.allSettled(this.#file.background);
      }
    });
  }

  // ---- CassetteStore ---------------------------------------------------------

  flush(): Promise<void> {
    return this.#shell.run("flush", undefined, () => this.#writer.flushAll());
  }

  discard(): Promise<void> {
    const overlay = this.#file.overlay;
    if (!this.#shell.closed) overlay.clear();
    return this.#shell.closeOnce(async () => {
      await this.#shell.settled();
      overlay.clear();
      this.#file.startDeferred();
      await Promise.allSettled(this.#file.background);
    }, false);
  }

  usage(): Promise<CassetteUsage> {
    return this.#shell.run("usage", undefined, async () => {
      await this.#file.ensureLoaded();
      const now = Date.now();
      return this.#file.usage.report((k) => live(this.#file.lookup(k), now) !== undefined);
    });
  }

  /** The live item under `key`, re-reading the file once when another process may have written it. */
  async #find(key: string): Promise<CassetteItem | undefined> {
    await this.#file.ensureLoaded();
    const item = live(this.#file.lookup(key), Date.now());
    if (item !== undefined || !(await this.#file.refresh())) return item;
    return live(this.#file.lookup(key), Date.now());
  }
}

/**
 * The cassette's write snapshot: checked, then a JSON round trip, exactly
 * what the contract promises back after a re-read (-0 becomes 0).
 */
function roundTrip(value: JsonValue): JsonValue {
  assertJsonValue(value, "value");
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

/** A fresh copy of `value` without its `manifest` member (an object's), the rest cloned. */
function copyWithoutManifest(value: JsonValue): JsonValue {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return cloneJsonValue(value);
  }
  const copy: Record<string, JsonValue> = {};
  for (const name of Object.keys(value)) {
    if (name !== "manifest") setMember(copy, name, cloneJsonValue(value[name]!));
  }
  return copy;
}
