/**
 * The catalog: what the viewer knows about a store or a folder of cassettes,
 * read through the public API (openStore, readCassette, validateEntry).
 *
 * Scale: a store is read once into a compact summary per entry (no prompt
 * or response kept beyond a short search text), so every page is a filter
 * and a slice of an in-memory array, and a page of 100,000 entries costs
 * milliseconds. Only the entry and diff pages read full entries, by key.
 * The catalog refreshes in the background once it is older than
 * `refreshMs`, so a running viewer follows new recordings without blocking
 * a page on a full re-read.
 */
import { stat } from "node:fs/promises";
import { relative, resolve, sep } from "node:path";
import { parseEntryKey, readCassette } from "../cassette/index.js";
import { MetadataMissingError } from "../errors.js";
import type { JsonValue } from "../json/index.js";
import { cassetteFiles, locateSource, openSourceStore } from "../source/index.js";
import type { Store } from "../store/index.js";
import { type Entry, validateEntry } from "../store/index.js";
import { MetaCatalog } from "./meta-catalog.js";
import {
  type CassetteFile,
  type CatalogSnapshot,
  type EntrySummary,
  parseRun,
  type RunRecord,
  summarize,
} from "./summary.js";

export {
  type CassetteFile,
  type CatalogSnapshot,
  type EntrySummary,
  parseRun,
  type RunRecord,
  summarize,
  type ToolFields,
  toolLabel,
  toolOf,
} from "./summary.js";

/** Where the catalog reads from. */
export type CatalogLocation = { store: string } | { cassette: string };

/** Options of {@link openCatalog}. */
export interface CatalogOptions {
  /** Re-read the source in the background when the snapshot is older than this (default 3000 ms). */
  refreshMs?: number;
}

/**
 * The catalog of a store or cassette folder. Read-only: it never writes.
 *
 * @example
 * const catalog = await openCatalog({ store: "sqlite://.invocache/cache.sqlite" });
 * (await catalog.snapshot()).entries.length;
 */
export interface Catalog {
  /** For display: the redacted store URL, or the cassette path. */
  readonly url: string;
  readonly kind: "store" | "cassette";
  /** The cassette file or folder, for cassette sources. */
  readonly root: string | undefined;
  snapshot(): Promise<CatalogSnapshot>;
  /** One full entry by store key (and cassette file, for a folder), or undefined. */
  entry(key: string, file?: string): Promise<Entry | undefined>;
  close(): Promise<void>;
}

/**
 * The catalog as the viewer's own pages use it (not public: it names the
 * metadata reads, meta-catalog.ts). {@link Catalog.snapshot} there is every
 * entry and run, read from every stored value: what the pages that need
 * all of them use (the export, a store without metadata). Read on first
 * use, then refreshed in the background.
 */
export interface ViewerCatalog extends Catalog {
  /** The snapshot when one was read already (nothing is read here). */
  loaded(): CatalogSnapshot | undefined;
  /**
   * The reads from stored metadata (meta-catalog.ts) when the store answers
   * `listMeta`, else undefined: then the pages list from {@link snapshot},
   * and {@link fullReadReason} says why.
   */
  metadata(): Promise<MetaCatalog | undefined>;
  /**
   * Why a store is listed by reading every value (no stored metadata: the
   * store predates it, with the `invocache migrate-store` command that
   * fixes it, or its backend keeps none); undefined for a store with
   * metadata, an empty one, or cassettes (read whole anyway). Known once
   * {@link metadata} resolved.
   */
  readonly fullReadReason: string | undefined;
  /** What starting the viewer waits for: the metadata check, or (without metadata) the full read. */
  prepare(): Promise<void>;
}

/**
 * Open the read-only catalog of a store URL or a cassette file or folder.
 *
 * @example
 * const catalog = await openCatalog({ cassette: "cassettes" });
 * const { entries, runs } = await catalog.snapshot();
 * await catalog.close();
 */
export function openCatalog(
  location: CatalogLocation,
  options: CatalogOptions = {},
): Promise<Catalog> {
  return openViewerCatalog(location, options);
}

/** {@link openCatalog} with what the viewer's pages use besides (not public). */
export async function openViewerCatalog(
  location: CatalogLocation,
  options: CatalogOptions = {},
): Promise<ViewerCatalog> {
  const refreshMs = options.refreshMs ?? 3000;
  // Read-only: a SQLite file that does not exist yet is an empty source,
  // not one to create; a cassette folder that does not exist yet lists none.
  const where = locateSource(location, {
    missing: "empty",
    names: { store: "store", cassette: "cassette" },
  });
  if (where.kind === "cassette") return new CassetteCatalog(where.path, refreshMs);
  if (!where.exists) return new EmptyCatalog(where.display, refreshMs);
  return new StoreCatalog(openSourceStore(where), refreshMs);
}

abstract class BaseCatalog implements ViewerCatalog {
  abstract readonly url: string;
  abstract readonly kind: "store" | "cassette";
  abstract readonly root: string | undefined;
  #current: CatalogSnapshot | undefined;
  #loading: Promise<CatalogSnapshot> | undefined;
  #lastLoadMs = 0;
  constructor(readonly refreshMs: number) {}

  fullReadReason: string | undefined = undefined;
  protected abstract load(): Promise<CatalogSnapshot>;

  loaded(): CatalogSnapshot | undefined {
    return this.#current;
  }

  async metadata(): Promise<MetaCatalog | undefined> {
    return undefined;
  }

  async prepare(): Promise<void> {
    const meta = await this.metadata();
    // With metadata nothing is read up front (the totals count in the background).
    if (meta === undefined) await this.snapshot();
    else meta.totalsNow();
  }
  abstract entry(key: string, file?: string): Promise<Entry | undefined>;
  abstract close(): Promise<void>;

  async snapshot(): Promise<CatalogSnapshot> {
    const current = this.#current;
    if (current !== undefined) {
      // A big store takes a while to read: re-read it at most a tenth of the
      // time, so a viewer left open does not keep a core busy.
      const every = Math.max(this.refreshMs, 10 * this.#lastLoadMs);
      if (Date.now() - current.readAt > every) void this.#reload().catch(() => {});
      return current;
    }
    return this.#reload();
  }

  #reload(): Promise<CatalogSnapshot> {
    if (this.#loading !== undefined) return this.#loading;
    const t0 = Date.now();
    this.#loading = this.load()
      .then((s) => {
        this.#lastLoadMs = Date.now() - t0;
        this.#current = s;
        return s;
      })
      .finally(() => {
        this.#loading = undefined;
      });
    return this.#loading;
  }
}

class StoreCatalog extends BaseCatalog {
  readonly kind = "store" as const;
  readonly root = undefined;
  readonly url: string;
  #meta: Promise<MetaCatalog | undefined> | undefined;
  constructor(
    readonly store: Store,
    refreshMs: number,
  ) {
    super(refreshMs);
    this.url = store.url;
  }

  override metadata(): Promise<MetaCatalog | undefined> {
    this.#meta ??= this.#probe();
    return this.#meta;
  }

  /** Whether the store answers from stored metadata: one row asked for, the store's own check run. */
  async #probe(): Promise<MetaCatalog | undefined> {
    const store = this.store;
    if (store.listMeta === undefined) {
      this.fullReadReason = `${this.url} keeps no stored metadata the viewer can list from, so every entry is read to list them`;
      return undefined;
    }
    try {
      for await (const _ of store.listMeta({ limit: 1 })) break;
    } catch (error) {
      if (!(error instanceof MetadataMissingError)) throw error;
      this.fullReadReason = error.message;
      return undefined;
    }
    return new MetaCatalog(store, this.refreshMs);
  }

  protected async load(): Promise<CatalogSnapshot> {
    const collect = new Collector();
    for await (const [key, value] of this.store.list("")) collect.add(key, value, undefined);
    return collect.done([]);
  }

  async entry(key: string): Promise<Entry | undefined> {
    if (parseEntryKey(key) === undefined) return undefined;
    const value = await this.store.get(key);
    return value === undefined ? undefined : validateEntry(value, `${this.url} ${key}`);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

class EmptyCatalog extends BaseCatalog {
  readonly kind = "store" as const;
  readonly root = undefined;
  constructor(
    readonly url: string,
    refreshMs: number,
  ) {
    super(refreshMs);
  }
  protected async load(): Promise<CatalogSnapshot> {
    return new Collector().done([]);
  }
  async entry(): Promise<Entry | undefined> {
    return undefined;
  }
  async close(): Promise<void> {}
}

class CassetteCatalog extends BaseCatalog {
  readonly kind = "cassette" as const;
  readonly url: string;
  #entries = new Map<string, JsonValue>();
  constructor(
    readonly root: string,
    refreshMs: number,
  ) {
    super(refreshMs);
    this.url = `cassette://${root}`;
  }

  protected async load(): Promise<CatalogSnapshot> {
    const collect = new Collector();
    const files: CassetteFile[] = [];
    const entries = new Map<string, JsonValue>();
    const info = await stat(this.root).catch(() => undefined);
    const paths =
      info === undefined ? [] : info.isDirectory() ? cassetteFiles(this.root) : [this.root];
    const base = info?.isDirectory() ? this.root : resolve(this.root, "..");
    for (const path of paths) {
      const rel = relative(base, path).split(sep).join("/");
      const st = await stat(path);
      let count = 0;
      let problem: string | undefined;
      try {
        for (const item of await readCassette(path)) {
          // The same key in two cassettes is two recordings: keep both, by file.
          if (collect.add(item.key, item.value, rel)) {
            count++;
            entries.set(`${rel}\u0000${item.key}`, item.value);
          }
        }
      } catch (error) {
        problem = (error as Error).message;
      }
      files.push({
        path: rel,
        entries: count,
        bytes: st.size,
        modifiedAt: st.mtime.toISOString(),
        problem,
      });
    }
    this.#entries = entries;
    files.sort((a, b) => a.path.localeCompare(b.path));
    return collect.done(files);
  }

  async entry(key: string, file?: string): Promise<Entry | undefined> {
    const snap = await this.snapshot();
    const summary = snap.byKey.get(key);
    const at = file ?? summary?.file;
    if (at === undefined) return undefined;
    const value = this.#entries.get(`${at}\u0000${key}`);
    return value === undefined ? undefined : validateEntry(value, `${at} ${key}`);
  }

  async close(): Promise<void> {}
}

class Collector {
  readonly entries: EntrySummary[] = [];
  readonly runs: RunRecord[] = [];
  readonly problems: Array<{ key: string; message: string }> = [];

  /** Add one stored item; true when it was an entry. */
  add(key: string, value: JsonValue, file: string | undefined): boolean {
    const parts = parseEntryKey(key);
    if (parts !== undefined) {
      try {
        const e = validateEntry(value, key, { deep: false });
        this.entries.push(summarize(key, parts.namespace, e, JSON.stringify(value).length, file));
        return true;
      } catch (error) {
        this.problems.push({ key, message: (error as Error).message });
        return false;
      }
    }
    const run = /^([^:]+):run:(.+)$/.exec(key);
    if (run !== null) {
      const r = parseRun(key, run[1]!, run[2]!, value, file);
      if (r !== undefined) this.runs.push(r);
      else this.problems.push({ key, message: `${key}: not a run record this viewer reads` });
    }
    return false;
  }

  done(cassettes: CassetteFile[]): CatalogSnapshot {
    const byRecent = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
    this.entries.sort((a, b) => byRecent(a.recordedAt, b.recordedAt) || byRecent(b.key, a.key));
    this.runs.sort((a, b) => byRecent(a.endedAt, b.endedAt));
    const byKey = new Map<string, EntrySummary>();
    for (const e of this.entries) if (!byKey.has(e.key)) byKey.set(e.key, e);
    return {
      entries: this.entries,
      byKey,
      runs: this.runs,
      cassettes,
      problems: this.problems,
      readAt: Date.now(),
    };
  }
}
