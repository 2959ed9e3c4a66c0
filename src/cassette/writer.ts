/**
 * Writing a cassette: under the file lock, re-read the file if it changed,
 * merge (keys this handle changed take its value, every other key keeps the
 * file's), keep unchanged recordings byte-identical (stability.ts), refuse
 * any secret (refuse.ts), write atomically (files.ts). Concurrent writers
 * lose nothing; concurrent calls of one handle share a write (group commit).
 * A handle opened for recording appends plain sets to the file instead
 * (append.ts) and rewrites it once when it closes (`compact`).
 */
import { CassetteError } from "../errors.js";
import { appendDurably, appendRecords } from "./append.js";
import { emitCassette, emittedChunk } from "./emit.js";
import { type CassetteFile, live, normalTail } from "./file-state.js";
import {
  type FileStamp,
  removeOrphanTemps,
  sameStamp,
  statStamp,
  writeFileAtomic,
} from "./files.js";
import { noChunks } from "./incremental.js";
import type { CassetteItem } from "./item.js";
import { LOCK_TIMEOUT_MS, withFileLock } from "./lock.js";
import { settleAllChecks } from "./owed-checks.js";
import { refuseSecrets } from "./refuse.js";
import { sameRecording } from "./stability.js";

type Batch = Map<string, CassetteItem | null>;

/**
 * A delete made only if the file's item still `matches` when the write is
 * merged against the file (under the lock's version check): `removed` says
 * whether the write that landed removed it.
 */
export interface DeleteCondition {
  readonly matches: (item: CassetteItem) => boolean;
  removed: boolean;
}

export class CassetteWriter {
  #queued: Promise<void> | undefined;
  #running: Promise<void> | undefined;
  #orphansChecked = false;
  /** Items already checked for secrets. */
  readonly #clean = new WeakSet<CassetteItem>();
  /** Items written with `refresh`: an equal re-record does not keep the old bytes. */
  readonly #refreshed = new WeakSet<CassetteItem>();
  /** Conditions of the deletes in the overlay that have one (`stageDelete`). */
  readonly #conditions = new Map<string, DeleteCondition>();
  /** Whether this handle appended records (append.ts), which its close folds into the normal form. */
  #appended = false;
  /** Set while compacting: writes rewrite the file, never append. */
  #compacting = false;

  constructor(private readonly file: CassetteFile) {}

  /** Check `item` for secrets now (the caller's `set` rejects) and queue it. */
  stage(item: CassetteItem, refresh: boolean): void {
    this.#check(item);
    if (refresh) this.#refreshed.add(item);
    this.#conditions.delete(item.key);
    this.file.overlay.set(item.key, item);
  }

  /**
   * Queue the delete of `key`; with `matches`, only if the file's item
   * still matches when the write is made (checked against the version of
   * the file the write replaces, so another process's re-record survives).
   */
  stageDelete(key: string, matches?: (item: CassetteItem) => boolean): DeleteCondition | undefined {
    this.file.overlay.set(key, null);
    if (matches === undefined) {
      this.#conditions.delete(key);
      return undefined;
    }
    const condition: DeleteCondition = { matches, removed: false };
    this.#conditions.set(key, condition);
    return condition;
  }

  /** Options of the file lock. */
  get lockOptions() {
    const { settings, src } = this.file;
    return {
      ...(settings.lockTimeoutMs === undefined ? {} : { timeoutMs: settings.lockTimeoutMs }),
      ...(settings.lockStaleMs === undefined ? {} : { staleMs: settings.lockStaleMs }),
      onCompromised: (error: Error) =>
        warn(
          this.file,
          `${src.display}: lost the cassette lock while writing (${error.message}); another process may have written at the same time`,
        ),
    };
  }

  /**
   * Resolve once everything in the overlay now is on disk. Calls made while a
   * write runs share the next one (group commit), so N concurrent `set`s cost
   * about two writes, not N.
   */
  flushAll(): Promise<void> {
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
   * Rewrite the file once in the normal form if this handle appended
   * records to it (append.ts): what closing a handle opened for recording
   * does, after its last write. Another process's records are folded in too.
   */
  async compact(): Promise<void> {
    await this.#running?.catch(() => {});
    if (!this.#appended) return;
    this.#compacting = true;
    try {
      const run = this.#writeBatch(new Map(), new Map());
      this.#running = run;
      await run;
      this.#appended = false;
    } finally {
      this.#compacting = false;
    }
  }

  /**
   * Write the batch of changes now in the overlay, or fail: a `set` never
   * resolves unless its value is in the file as renamed into place (or
   * appended and fdatasync'd). A batch
   * that failed is dropped from the overlay: its callers were told it
   * failed, so it must not reach the file later with someone else's write.
   */
  async #writeOverlay(): Promise<void> {
    const { overlay, usage } = this.file;
    if (overlay.size === 0) return;
    const batch: Batch = new Map(overlay);
    const conditions = new Map<string, DeleteCondition>();
    for (const [key, item] of batch) {
      const condition = item === null ? this.#conditions.get(key) : undefined;
      if (condition !== undefined) conditions.set(key, condition);
    }
    const settle = (key: string) => {
      overlay.delete(key);
      const condition = conditions.get(key);
      if (condition !== undefined && this.#conditions.get(key) === condition)
        this.#conditions.delete(key);
    };
    try {
      await this.#writeBatch(batch, conditions);
    } catch (error) {
      for (const [key, item] of batch) {
        if (overlay.get(key) !== item) continue;
        settle(key);
        if (item !== null) usage.unwritten(key);
      }
      throw error;
    }
    for (const [key, item] of batch) if (overlay.get(key) === item) settle(key);
  }

  /**
   * Optimistic, so the lock is never held across heavy work: parsing a big
   * cassette, merging, checking for secrets and rendering YAML can keep the
   * event loop busy for seconds, and a lock that cannot be refreshed goes
   * stale and is taken over by another process. So all of that happens
   * outside the lock, against the file version last read (its stamp). Under
   * the lock only: check that the file is still that version (else drop the
   * lock, re-read and try again; another writer made progress), write the
   * temp file, check the lock is still ours, rename.
   */
  async #writeBatch(batch: Batch, conditions: Map<string, DeleteCondition>): Promise<void> {
    const file = this.file;
    const started = Date.now();
    const budgetMs = 4 * (file.settings.lockTimeoutMs ?? LOCK_TIMEOUT_MS);
    for (let attempt = 1; ; attempt++) {
      // Outside the lock: the file as it is now. A file we cannot parse
      // throws here, before anything is written over it.
      const stamp = await statStamp(file.path);
      if (!sameStamp(stamp, file.stamp)) {
        const read = await file.readFile();
        file.adopt(read.items, read.stamp, undefined, read.tail);
      }
      file.usage.loaded(file.disk.keys());
      const basis = file.stamp;
      // Every item of the file, then every item kept, is checked first: a
      // cassette we could not read is never rewritten, even where this write
      // would replace or drop the bad item (owed-checks.ts).
      await settleAllChecks(file.disk.values());
      const merged = this.#merge(batch, conditions);
      await settleAllChecks(merged.values());
      const added = this.#appendable(merged, conditions);
      let write: { text: string } | { records: Buffer } | undefined;
      if (added !== undefined) {
        if (added.length > 0) {
          const records = appendRecords(added);
          const size = file.tail.validBytes + records.length;
          if (size > file.settings.maxFileBytes) throw file.tooBig("set", BigInt(size), true);
          write = { records };
        }
      } else if (!sameItems(merged, file.disk) || file.tail.appended) {
        const text = emitCassette(merged.values());
        if (text.length > file.settings.maxFileBytes) {
          // A cheap lower bound first; the exact size is the UTF-8 length.
          const bytes = Buffer.byteLength(text);
          if (bytes > file.settings.maxFileBytes) throw file.tooBig("set", BigInt(bytes), true);
        }
        write = { text };
      }
      const outcome = await this.#writeLocked(basis, write, merged);
      if (outcome !== "changed") return;
      if (attempt >= 3 && Date.now() - started > budgetMs) {
        throw new CassetteError(
          file.path,
          "set",
          `${file.src.display}: other processes rewrote the cassette ${attempt} times while this one was merging its write (${Date.now() - started} ms), so it was not made. ` +
            "Nothing of it was saved; retry, give each worker its own cassette, or split the cassette.",
          { url: file.src.url },
        );
      }
    }
  }

  /**
   * The items to append instead of rewriting the file (append.ts), or
   * undefined for a rewrite: only a handle opened for recording appends,
   * only to a file that exists, and only plain sets (a delete, a conditional
   * delete or an expired item dropped cannot be said by appending).
   */
  #appendable(
    merged: Map<string, CassetteItem>,
    conditions: Map<string, DeleteCondition>,
  ): CassetteItem[] | undefined {
    const file = this.file;
    if (!file.settings.append || this.#compacting || file.stamp === undefined) return undefined;
    if (conditions.size > 0) return undefined;
    for (const key of file.disk.keys()) if (!merged.has(key)) return undefined;
    const added: CassetteItem[] = [];
    for (const [key, item] of merged) if (file.disk.get(key) !== item) added.push(item);
    return added;
  }

  /** Under the lock: write `text` (or append `records`) if the file is still the version `basis`. */
  async #writeLocked(
    basis: FileStamp | undefined,
    write: { text: string } | { records: Buffer } | undefined,
    merged: Map<string, CassetteItem>,
  ): Promise<"changed" | "unchanged" | "written"> {
    const file = this.file;
    return withFileLock(
      file.path,
      async (lock) => {
        if (!this.#orphansChecked) {
          await removeOrphanTemps(file.path);
          this.#orphansChecked = true;
        }
        if (!sameStamp(await statStamp(file.path), basis)) return "changed" as const;
        if (write === undefined) return "unchanged" as const;
        assertWritable(file, basis);
        if ("records" in write) {
          await lock.assertHeld();
          const at = file.tail.validBytes;
          const { stamp, end } = await appendDurably(file.path, at, write.records);
          file.generation++;
          file.disk = merged;
          file.stamp = stamp;
          file.tail = { validBytes: end, appended: true };
          this.#appended = true;
          // file.known stays: it describes the first document, which is unchanged.
          return "written" as const;
        }
        const written = await writeFileAtomic(file.path, write.text, {
          beforeRename: () => lock.assertHeld(),
        });
        file.generation++;
        file.disk = merged;
        file.stamp = written;
        file.tail = normalTail(written.size);
        file.known = noChunks();
        for (const item of merged.values()) {
          const chunk = emittedChunk(item);
          if (chunk !== undefined)
            file.known[chunk.entry ? "entries" : "values"].set(chunk.text, item);
        }
        return "written" as const;
      },
      this.lockOptions,
    ).catch((error: unknown) => {
      if ((error as { code?: unknown }).code !== "ELOCKLOST") throw error;
      throw new CassetteError(
        file.path,
        "set",
        `${file.src.display}: ${(error as Error).message}, so this write was not made (another process may be writing the cassette). ` +
          "Nothing of it was saved; retry. If the cassette is big, split it or raise lockStaleMs.",
        { url: file.src.url, cause: error },
      );
    });
  }

  /**
   * The file's items with `batch` applied: expired items dropped, everything
   * checked for secrets. A conditional delete removes the file's item only
   * if it still matches (its `removed` is set for this version of the file).
   */
  #merge(batch: Batch, conditions: Map<string, DeleteCondition>): Map<string, CassetteItem> {
    const now = Date.now();
    const merged = new Map(this.file.disk);
    for (const [key, item] of batch) {
      if (item !== null) {
        merged.set(key, this.#stable(item));
        continue;
      }
      const condition = conditions.get(key);
      if (condition === undefined) {
        merged.delete(key);
        continue;
      }
      const current = live(merged.get(key), now);
      condition.removed = current !== undefined && condition.matches(current);
      if (condition.removed) merged.delete(key);
    }
    for (const [key, item] of merged) {
      if (live(item, now) === undefined) merged.delete(key);
      else this.#check(item);
    }
    return merged;
  }

  /** The file's original item when `item` records the same thing (byte-identical re-records). */
  #stable(item: CassetteItem): CassetteItem {
    const origin = this.file.origin.get(item.key);
    if (origin === undefined || origin === item || origin.expires !== item.expires) return item;
    // A recording refreshed on purpose (the recorder's onStale: "rerecord") starts its age over.
    if (this.#refreshed.has(item)) return item;
    return sameRecording(item.key, origin.value, item.value) ? origin : item;
  }

  #check(item: CassetteItem): void {
    if (this.#clean.has(item)) return;
    refuseSecrets(item, this.file.settings.scan, this.file.src.display);
    this.#clean.add(item);
  }
}

/** Refuse to rewrite a cassette whose owner made it read-only (root would write it anyway). */
function assertWritable(file: CassetteFile, stamp: FileStamp | undefined): void {
  if (stamp === undefined || (stamp.mode & 0o222) !== 0) return;
  throw new CassetteError(
    file.path,
    "set",
    `${file.src.display} is read-only (mode ${stamp.mode.toString(8).padStart(4, "0")}), so invocache does not rewrite it. ` +
      "Make it writable (chmod u+w) to record into it, or replay it (INVOCACHE_MODE=replay).",
    { url: file.src.url },
  );
}

export function warn(file: CassetteFile, raw: string): void {
  file.warn(raw); // leaves the process: redacted like the store
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
