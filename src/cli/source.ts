/**
 * Where recorded entries are read from: a store (`--store URL`, default the
 * embedded `.invocache/cache.sqlite` under the working directory) or YAML
 * cassettes (`--cassette path`, a file or a folder of them). Read-only
 * commands open the store read-only and never create anything: the default
 * SQLite file that does not exist yet is an empty source; a `--store` or
 * `--cassette` path that does not exist is a usage error.
 */
import { join, relative } from "node:path";
import { pruneCassette, readCassette } from "../cassette/index.js";
import type { JsonValue } from "../json/index.js";
import {
  cassetteFiles,
  locateSource,
  openSourceStore,
  SourceError,
  type SourceLocation,
} from "../source/index.js";
import type { MetaQuery, MetaStats, Store, StoredMeta } from "../store/index.js";
import {
  type Entry,
  entryPrefix,
  isSortRefused,
  parseEntryKey,
  parseRunKey,
  validateEntry,
  valueDigest,
} from "../store/index.js";
import type { OptionSpec } from "./args.js";
import { CliError, isStoreError, storeFailure, UsageError } from "./errors.js";
import type { Io } from "./io.js";

/** The options that choose a source, shared by ls, show, stats, prune, stamp, explain. */
export const SOURCE_OPTIONS = {
  store: { type: "string" },
  cassette: { type: "string" },
  namespace: { type: "string" },
} as const satisfies OptionSpec;

/** Parsed values of {@link SOURCE_OPTIONS}. */
export interface SourceFlags {
  store?: string | undefined;
  cassette?: string | undefined;
  namespace?: string | undefined;
}

/** One recorded entry and where it is kept. */
export interface EntryRecord {
  /** The store key: `<namespace>:e:<id>:<occurrence>`. */
  key: string;
  namespace: string;
  id: string;
  occurrence: number;
  entry: Entry;
  /** The stored value the entry was read from (prune digests it, see `RemoveTarget.digest`). */
  value: JsonValue;
  /** Size of the stored JSON, UTF-8 bytes. */
  bytes: number;
  /** For a folder of cassettes: the cassette file it is in (relative to the folder). */
  cassette?: string;
}

/** A key whose value is not a readable entry. */
export interface SourceProblem {
  key: string;
  message: string;
}

/** Everything read from a source. */
export interface SourceContents {
  entries: EntryRecord[];
  problems: SourceProblem[];
  /** Number of run records (`<namespace>:run:<runId>`). */
  runs: number;
  /** For a folder of cassettes: how many cassette files it holds. */
  files?: number;
}

/**
 * What {@link EntrySource.remove} needs of an entry: its key, its file in a
 * folder, and the `valueDigest` of the value read: an entry whose value
 * changed since (re-recorded by another process) is not removed.
 */
export type RemoveTarget = Pick<EntryRecord, "key" | "cassette"> & { digest: string };

/**
 * What {@link EntrySource.scan} hands over, one at a time. A visitor that
 * returns a promise is awaited before the next item is read (prune deletes
 * a batch there), so the scan never runs ahead of it.
 */
export interface SourceVisitor {
  entry(record: EntryRecord): void | Promise<void>;
  problem(problem: SourceProblem): void;
}

/** How to scan. */
export interface ScanOptions {
  /**
   * Ask for entries by recording time (then key): granted when the backend
   * sorts inside its database (SQLite, PostgreSQL), see {@link ScanTotals.ordered}.
   */
  order?: "recordedAt";
  /**
   * Called, before the first entry, when the order asked for is not granted
   * after all (the database refused to sort): the caller sorts.
   */
  onUnordered?: () => void;
}

/** The counts of a scan: run records, and cassette files for a folder. */
export type ScanTotals = Omit<SourceContents, "entries" | "problems"> & {
  /** True when the entries came by recording time (`order` was asked and granted). */
  ordered?: boolean;
};

/** `read` on top of `scan`: collect everything. */
async function collect(
  source: EntrySource,
  onItem: (() => void) | undefined,
): Promise<SourceContents> {
  const entries: EntryRecord[] = [];
  const problems: SourceProblem[] = [];
  const totals = await source.scan(
    {
      entry: (r) => {
        entries.push(r);
      },
      problem: (p) => problems.push(p),
    },
    onItem,
  );
  return { entries, problems, ...totals };
}

/** A store or a cassette (or a folder of cassettes), opened for the CLI. */
export interface EntrySource {
  readonly kind: "store" | "cassette";
  /** For messages: the redacted store URL, or `cassette://<path>`. */
  readonly url: string;
  /** False for the default SQLite file when it does not exist yet (nothing was created). */
  readonly exists: boolean;
  /** True for `--cassette <folder>`: entries then carry `cassette`. */
  readonly folder: boolean;
  /** The namespace filter, when one was given. */
  readonly namespace: string | undefined;
  /** Read every entry (of the namespace, when given). `onItem` is called per key read. */
  read(onItem?: () => void): Promise<SourceContents>;
  /**
   * Visit every entry and problem one at a time, keeping none of them (what
   * `read` collects): commands that fold entries (stats, prune) run in
   * memory that does not grow with the store. Resolves to the counts `read`
   * would give besides the entries.
   */
  scan(visit: SourceVisitor, onItem?: () => void, options?: ScanOptions): Promise<ScanTotals>;
  /**
   * Whether {@link EntrySource.scan} with `order: "recordedAt"` will be
   * granted: when not, a command that needs the order sorts (and so holds) its rows.
   */
  readonly sortsByRecordedAt: boolean;
  /** `scan` hands entries over in key order (see `Store.listsInKeyOrder`). */
  readonly listsInKeyOrder: boolean;
  /**
   * The stored metadata of the source's rows (`Store.listMeta`, the
   * namespace filter applied), or undefined where the source has none to
   * answer from (cassettes: they are read whole anyway). Iterating rejects
   * with MetadataMissingError on a store not migrated yet; a failing store
   * rejects with the command's CliError as `scan` does.
   */
  metaRows?(query?: MetaQuery): AsyncIterable<StoredMeta> | undefined;
  /**
   * The stored metadata of the source's rows summed by the store
   * (`Store.statsMeta`, the namespace filter applied; `usageDetail` as
   * `MetaStatsQuery.usageDetail`), or undefined where the store cannot sum
   * it (cassettes). Rejects as `metaRows` iterating does.
   */
  metaStats?(
    usageDetail?: readonly string[],
    usageDetailAbove?: number,
    onProgress?: (rows: number) => void,
  ): Promise<MetaStats> | undefined;
  /**
   * Give every stored value its metadata (`Store.migrateMeta`); resolves how
   * many it filled, or undefined when the store keeps none (memory, Redis
   * before it is supported…). Only on a source opened for writing.
   */
  migrateMeta?(onProgress?: (done: number) => void): Promise<number | undefined>;
  /**
   * Remove entries, each only if its value is still the one read (its
   * `digest`): one re-recorded since is kept. Resolves to the keys removed.
   * `onItem` is called per key or file; `before` (how many an earlier batch
   * removed) goes into the message of a failure.
   */
  remove(
    records: readonly RemoveTarget[],
    onItem?: () => void,
    options?: { before?: number },
  ): Promise<string[]>;
  close(): Promise<void>;
}

/** How a command uses the source. */
export interface SourceAccess {
  /** The command removes entries (prune): open the store read-write. Default false: read-only. */
  write?: boolean;
}

/**
 * Open the source the flags name: read-only unless `access.write`.
 *
 * @throws UsageError for `--store` with `--cassette`, a malformed store URL
 *   or namespace, or a `--store`/`--cassette` path that does not exist;
 *   CliError (exit 1) for one that cannot be read.
 * @example
 * const source = openSource({ store: "sqlite://.invocache/cache.sqlite" }, io);
 * const { entries } = await source.read();
 * await source.close();
 */
export function openSource(flags: SourceFlags, io: Io, access: SourceAccess = {}): EntrySource {
  if (flags.store !== undefined && flags.cassette !== undefined) {
    throw new UsageError("pass --store or --cassette, not both");
  }
  if (flags.namespace !== undefined) {
    try {
      entryPrefix(flags.namespace);
    } catch (error) {
      throw new UsageError(`--namespace: ${(error as Error).message}`);
    }
  }
  let location: SourceLocation;
  try {
    location = locateSource({ store: flags.store, cassette: flags.cassette }, { cwd: io.cwd });
  } catch (error) {
    throw cliSourceError(error);
  }
  if (location.kind === "cassette") {
    return new CassetteSource(location.path, io.cwd, flags.namespace, location.folder);
  }
  // openStore resolves relative sqlite paths against process.cwd(); io.cwd is the same
  // in the real command, and location.url is absolute either way.
  return new StoreSource(location, location.display, flags.namespace, access.write !== true);
}

/** A source that cannot be located, as the command's error: a usage error, or exit 1 when unreadable. */
function cliSourceError(error: unknown): unknown {
  if (!(error instanceof SourceError)) return error;
  if (error.problem !== "unreadable") return new UsageError(error.message);
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  return new CliError("ERR_UNREADABLE", error.message, {
    cause: error.cause,
    data: { path: error.path, ...(code === undefined ? {} : { cause: code }) },
  });
}

/** An entry record for a key and value, or a problem. */
function toRecord(
  key: string,
  value: JsonValue,
  where: string,
): EntryRecord | SourceProblem | undefined {
  const parts = parseEntryKey(key);
  if (parts === undefined) return undefined;
  let entry: Entry;
  try {
    entry = validateEntry(value, where);
  } catch (error) {
    return { key, message: String((error as Error).message).split("\n")[0] ?? "" };
  }
  if (entry.id !== parts.id || entry.meta.occurrence !== parts.occurrence) {
    return {
      key,
      message: `${where}: the entry says id ${entry.id.slice(0, 12)} occurrence ${entry.meta.occurrence}, the key says otherwise; delete it or re-record`,
    };
  }
  return {
    key,
    namespace: parts.namespace,
    id: parts.id,
    occurrence: parts.occurrence,
    entry,
    value,
    bytes: Buffer.byteLength(JSON.stringify(value)),
  };
}

/**
 * The problem a `"problem"` row of stored metadata stands for, worded as
 * reading its value says it (the store's url before the key).
 *
 * @example
 * metaProblem("sqlite:///app/cache.sqlite", meta).message // "invocache entry at sqlite:///… ns:e:…:0 is malformed: …"
 */
export function metaProblem(url: string, m: StoredMeta): SourceProblem {
  const message = m.problem ?? m.key;
  return { key: m.key, message: message.replace(m.key, `${url} ${m.key}`) };
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split("\n")[0] ?? "";
}

function isRunKey(key: string): boolean {
  return parseRunKey(key) !== undefined;
}

class StoreSource implements EntrySource {
  readonly kind = "store";
  readonly folder = false;
  readonly url: string;
  readonly exists: boolean;
  readonly namespace: string | undefined;
  readonly #location: SourceLocation;
  readonly #readOnly: boolean;
  #store: Store | undefined;

  constructor(
    location: SourceLocation & { kind: "store" },
    url: string,
    namespace: string | undefined,
    readOnly: boolean,
  ) {
    this.#location = location;
    this.url = url;
    this.exists = location.exists;
    this.namespace = namespace;
    this.#readOnly = readOnly;
  }

  #open(): Store {
    this.#store ??= openSourceStore(this.#location, { readOnly: this.#readOnly });
    return this.#store;
  }

  read(onItem?: () => void): Promise<SourceContents> {
    return collect(this, onItem);
  }

  get listsInKeyOrder(): boolean {
    return this.exists && this.#open().listsInKeyOrder === true;
  }

  get sortsByRecordedAt(): boolean {
    return !this.exists || this.#open().listByRecordedAt !== undefined;
  }

  async migrateMeta(onProgress?: (done: number) => void): Promise<number | undefined> {
    if (!this.exists) return 0;
    const store = this.#open();
    if (store.migrateMeta === undefined) return undefined;
    try {
      return await store.migrateMeta(onProgress);
    } catch (error) {
      if (!isStoreError(error)) throw error;
      throw storeFailure(error, "add the stored metadata", this.url);
    }
  }

  metaRows(query: MetaQuery = {}): AsyncIterable<StoredMeta> | undefined {
    if (!this.exists) return (async function* () {})();
    const store = this.#open();
    if (store.listMeta === undefined) return undefined;
    const prefix =
      (query.prefix ?? "") + (this.namespace === undefined ? "" : `${this.namespace}:`);
    const rows = store.listMeta({ ...query, prefix });
    const url = this.url;
    const namespace = this.namespace;
    return {
      async *[Symbol.asyncIterator]() {
        try {
          yield* rows;
        } catch (error) {
          if (!isStoreError(error)) throw error;
          const what =
            namespace === undefined
              ? "list the entries"
              : `list the entries of namespace ${JSON.stringify(namespace)}`;
          throw storeFailure(error, what, url);
        }
      },
    };
  }

  metaStats(
    usageDetail: readonly string[] = [],
    usageDetailAbove?: number,
    onProgress?: (rows: number) => void,
  ): Promise<MetaStats> | undefined {
    if (!this.exists) {
      return Promise.resolve({ groups: [], usages: [], ids: 0, runs: 0, problems: 0 });
    }
    const store = this.#open();
    if (store.statsMeta === undefined) return undefined;
    const prefix = this.namespace === undefined ? "" : `${this.namespace}:`;
    const query = {
      prefix,
      usageDetail,
      ...(usageDetailAbove === undefined ? {} : { usageDetailAbove }),
    };
    return store.statsMeta(query, onProgress).catch((error: unknown) => {
      if (!isStoreError(error)) throw error;
      const what =
        this.namespace === undefined
          ? "sum the entries"
          : `sum the entries of namespace ${JSON.stringify(this.namespace)}`;
      throw storeFailure(error, what, this.url);
    });
  }

  async scan(
    visit: SourceVisitor,
    onItem?: () => void,
    options: ScanOptions = {},
  ): Promise<ScanTotals> {
    const out: ScanTotals = { runs: 0 };
    if (!this.exists) return { ...out, ordered: options.order !== undefined };
    const prefix = this.namespace === undefined ? "" : `${this.namespace}:`;
    const store = this.#open();
    const byTime = options.order === "recordedAt" ? store.listByRecordedAt : undefined;
    out.ordered = byTime !== undefined;
    let seen = 0;
    const consume = async (rows: AsyncIterable<[string, JsonValue]>) => {
      for await (const [key, value] of rows) {
        seen++;
        onItem?.();
        if (isRunKey(key)) out.runs++;
        const r = toRecord(key, value, `${this.url} ${key}`);
        if (r === undefined) continue;
        if ("entry" in r) await visit.entry(r);
        else visit.problem(r);
      }
    };
    try {
      try {
        await consume(byTime?.(prefix) ?? store.list(prefix));
      } catch (error) {
        // The database refused to sort before the first row (PostgreSQL on a
        // hot standby, or a role without TEMPORARY): list unsorted and let
        // the caller sort, as before the store could.
        if (byTime === undefined || seen > 0 || !isSortRefused(error)) throw error;
        out.ordered = false;
        options.onUnordered?.();
        await consume(store.list(prefix));
      }
    } catch (error) {
      if (!isStoreError(error)) throw error;
      const what =
        this.namespace === undefined
          ? "list the entries"
          : `list the entries of namespace ${JSON.stringify(this.namespace)}`;
      throw storeFailure(error, what, this.url);
    }
    return out;
  }

  async remove(
    records: readonly RemoveTarget[],
    onItem?: () => void,
    options: { before?: number } = {},
  ): Promise<string[]> {
    const removed: string[] = [];
    if (!this.exists) return removed;
    const before = options.before ?? 0;
    const store = this.#open();
    const deleteIfUnchanged = store.deleteIfUnchanged?.bind(store);
    if (deleteIfUnchanged === undefined) {
      // Every store openStore opens has it; a plain delete would lose re-records.
      throw new CliError(
        "ERR_STORE",
        `${this.url} cannot delete an entry only if it is unchanged, so prune would lose entries re-recorded while it runs; nothing was removed`,
      );
    }
    for (const { key, digest } of records) {
      try {
        // Only if unchanged since the scan: a re-record meanwhile is kept.
        if (await deleteIfUnchanged(key, digest)) removed.push(key);
      } catch (error) {
        if (!isStoreError(error)) throw error;
        throw storeFailure(
          error,
          before === 0
            ? `delete ${key} (${removed.length} of ${records.length} deleted before it)`
            : `delete ${key} (${before + removed.length} deleted before it)`,
          this.url,
        );
      }
      onItem?.();
    }
    return removed;
  }

  async close(): Promise<void> {
    await this.#store?.close();
  }
}

class CassetteSource implements EntrySource {
  readonly kind = "cassette";
  readonly exists = true;
  readonly url: string;
  readonly namespace: string | undefined;
  readonly folder: boolean;
  readonly #path: string;

  constructor(path: string, cwd: string, namespace: string | undefined, folder: boolean) {
    this.#path = path;
    const rel = relative(cwd, path);
    this.url = `cassette://${rel.startsWith("..") || rel === "" ? path : rel}`;
    this.namespace = namespace;
    this.folder = folder;
  }

  /** The cassette files: the one file, or every .yaml/.yml under the folder, sorted. */
  files(): string[] {
    return this.folder ? cassetteFiles(this.#path) : [this.#path];
  }

  read(onItem?: () => void): Promise<SourceContents> {
    return collect(this, onItem);
  }

  /** A cassette is read whole anyway: its entries are sorted by the command. */
  readonly sortsByRecordedAt = false;
  readonly listsInKeyOrder = false;

  async scan(visit: SourceVisitor, onItem?: () => void): Promise<ScanTotals> {
    const files = this.files();
    const out: ScanTotals = { runs: 0, files: files.length };
    for (const file of files) {
      const cassette = this.folder ? relative(this.#path, file) : undefined;
      const where = cassette === undefined ? this.url : `${this.url}/${cassette}`;
      let items: Awaited<ReturnType<typeof readCassette>>;
      try {
        items = await readCassette(file);
      } catch (error) {
        // One bad file in a folder is reported like a bad entry; a single
        // cassette that cannot be read is the command's error.
        if (!this.folder) throw error;
        visit.problem({ key: cassette ?? file, message: firstLine(error) });
        continue;
      }
      for (const item of items) {
        onItem?.();
        if (this.namespace !== undefined && !item.key.startsWith(`${this.namespace}:`)) continue;
        if (isRunKey(item.key)) out.runs++;
        const r = toRecord(item.key, item.value, `${where} ${item.key}`);
        if (r === undefined) continue;
        if ("entry" in r) await visit.entry(cassette === undefined ? r : { ...r, cassette });
        else visit.problem(r);
      }
    }
    return out;
  }

  async remove(records: readonly RemoveTarget[], onItem?: () => void): Promise<string[]> {
    const byFile = new Map<string, Map<string, string>>();
    for (const r of records) {
      const file = r.cassette === undefined ? this.#path : join(this.#path, r.cassette);
      const digests = byFile.get(file) ?? new Map<string, string>();
      byFile.set(file, digests);
      digests.set(r.key, r.digest);
    }
    const removed: string[] = [];
    for (const [file, drop] of byFile) {
      // One locked, atomic rewrite per file (pruneCassette re-reads it under
      // the lock): an entry goes only if its value there is still the one
      // scanned, so a re-record since the scan is kept.
      const report = await pruneCassette(file, (key, value) => {
        const digest = drop.get(key);
        return digest === undefined || valueDigest(value) !== digest;
      });
      removed.push(...report.removed);
      onItem?.();
    }
    return removed;
  }

  async close(): Promise<void> {}
}

export { cassetteFiles };
