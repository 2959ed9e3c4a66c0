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
import { asModelManifest, asToolManifest, type CallKind, kindOf } from "../identity/internal.js";
import type { JsonValue } from "../json/index.js";
import { cassetteFiles, locateSource, openSourceStore } from "../source/index.js";
import type { Store } from "../store/index.js";
import { type Entry, validateEntry } from "../store/index.js";
import { extractUsage, type Usage } from "../usage/index.js";

/** One entry as the list views need it. */
export interface EntrySummary {
  key: string;
  namespace: string;
  id: string;
  occurrence: number;
  /** A model call, or a tool call (docs/tools.md): identity's kind table names it. */
  kind: CallKind;
  /** For a tool call: the tool, `server/name` (or `name` for a plain function tool). */
  tool: string | undefined;
  role: string;
  /** The model, or "" (a tool call has none). */
  model: string;
  task: string;
  attempt: number;
  parent: string | undefined;
  verdict: "accepted" | "rejected" | undefined;
  reason: string | undefined;
  recordedAt: string;
  durationMs: number;
  /** Tokens the recorded call reported (stored with it, else read from its response), as `invocache stats` reads them. */
  usage: Usage | undefined;
  /** Size of the stored JSON, UTF-8 bytes. */
  bytes: number;
  /** The cassette file holding it (relative to the folder), for cassette sources. */
  file: string | undefined;
  /** Lowercased start of task and prompt, for text search. */
  text: string;
}

/** A stored run record (`<namespace>:run:<runId>`), as the recorder writes it. */
export interface RunRecord {
  key: string;
  namespace: string;
  runId: string;
  contentHash: string;
  /**
   * `id:occurrence` per call, in order, and how it was answered: `"hit"`,
   * `"recorded"`, `"live"`; undefined in records written before invocache
   * stored it.
   */
  calls: Array<{ id: string; occurrence: number; served: string | undefined }>;
  verdicts: Array<{ id: string; occurrence: number; verdict: string }>;
  endedAt: string;
  file: string | undefined;
}

/** A cassette file of a folder source. */
export interface CassetteFile {
  /** Relative to the folder, with `/`. */
  path: string;
  entries: number;
  bytes: number;
  modifiedAt: string;
  problem: string | undefined;
}

/** Where the catalog reads from. */
export type CatalogLocation = { store: string } | { cassette: string };

/** A snapshot of the catalog. */
export interface CatalogSnapshot {
  /** Newest first. */
  entries: EntrySummary[];
  byKey: Map<string, EntrySummary>;
  /** Newest first. */
  runs: RunRecord[];
  cassettes: CassetteFile[];
  problems: Array<{ key: string; message: string }>;
  readAt: number;
}

/** Options of {@link openCatalog}. */
export interface CatalogOptions {
  /** Re-read the source in the background when the snapshot is older than this (default 3000 ms). */
  refreshMs?: number;
}

const SEARCH_TEXT = 600;

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
 * Open the read-only catalog of a store URL or a cassette file or folder.
 *
 * @example
 * const catalog = await openCatalog({ cassette: "cassettes" });
 * const { entries, runs } = await catalog.snapshot();
 * await catalog.close();
 */
export async function openCatalog(
  location: CatalogLocation,
  options: CatalogOptions = {},
): Promise<Catalog> {
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

abstract class BaseCatalog implements Catalog {
  abstract readonly url: string;
  abstract readonly kind: "store" | "cassette";
  abstract readonly root: string | undefined;
  #current: CatalogSnapshot | undefined;
  #loading: Promise<CatalogSnapshot> | undefined;
  #lastLoadMs = 0;
  constructor(readonly refreshMs: number) {}

  protected abstract load(): Promise<CatalogSnapshot>;
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
  constructor(
    readonly store: Store,
    refreshMs: number,
  ) {
    super(refreshMs);
    this.url = store.url;
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

function summarize(
  key: string,
  namespace: string,
  e: Entry,
  length: number,
  file: string | undefined,
): EntrySummary {
  const { manifest: m, meta } = e;
  const tool = toolOf(m);
  const model = asModelManifest(m);
  return {
    key,
    namespace,
    id: e.id,
    occurrence: meta.occurrence,
    kind: kindOf(m),
    tool: tool === undefined ? undefined : toolLabel(tool),
    role: m.role,
    model: model?.model ?? "",
    task: m.task,
    attempt: m.attempt,
    parent: meta.parent,
    verdict: meta.verdict?.verdict,
    reason: meta.verdict?.reason,
    recordedAt: meta.recordedAt,
    durationMs: meta.durationMs,
    usage: tool === undefined ? (meta.usage ?? extractUsage(e.response)) : undefined,
    bytes: length,
    file,
    text: `${m.task} ${tool === undefined ? (model?.prompt ?? "").slice(0, SEARCH_TEXT) : `${toolLabel(tool)} ${JSON.stringify(tool.args).slice(0, SEARCH_TEXT)}`}`.toLowerCase(),
  };
}

/** The fields of a tool manifest (src/identity/tool-manifest.ts) the viewer shows. */
export interface ToolFields {
  name: string;
  server: string;
  method: string;
  args: JsonValue;
  /** Recorded under recipe tool v1: readable, never served for a new call. */
  v1?: boolean | undefined;
}

/** A tool call's manifest fields, or undefined for a model call's manifest. */
export function toolOf(manifest: Entry["manifest"]): ToolFields | undefined {
  const m = asToolManifest(manifest);
  if (m === undefined) return undefined;
  return {
    name: m.name,
    server: m.server,
    method: m.method,
    args: m.args,
    v1: !("version" in m),
  };
}

/** `server/name`, or `name` for a plain function tool. */
export function toolLabel(t: ToolFields): string {
  const label = t.server === "" ? t.name : `${t.server}/${t.name}`;
  // Recipe tool v1 entries are shown, never served for a v2 call: they need a re-record.
  return t.v1 === true ? `${label} (tool v1, re-record)` : label;
}

function parseRun(
  key: string,
  namespace: string,
  runId: string,
  value: JsonValue,
  file: string | undefined,
): RunRecord | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const { contentHash, calls, verdicts, endedAt, served } = value;
  if (typeof contentHash !== "string" || !Array.isArray(calls)) return undefined;
  const split = (s: JsonValue) => (typeof s === "string" ? s.split(":") : []);
  const how = Array.isArray(served) ? served : [];
  return {
    key,
    namespace,
    runId,
    contentHash,
    calls: calls.map(split).map(([id, occ], i) => {
      const from = how[i];
      return {
        id: id ?? "",
        occurrence: Number(occ ?? 0),
        served: typeof from === "string" ? from : undefined,
      };
    }),
    verdicts: (Array.isArray(verdicts) ? verdicts : []).map(split).map(([id, occ, verdict]) => ({
      id: id ?? "",
      occurrence: Number(occ ?? 0),
      verdict: verdict ?? "",
    })),
    endedAt: typeof endedAt === "string" ? endedAt : "",
    file,
  };
}
