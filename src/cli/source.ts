/**
 * Where recorded entries are read from: a store (`--store URL`, default the
 * embedded `.invocache/cache.sqlite` under the working directory) or a YAML
 * cassette (`--cassette path`). Read-only commands never create anything: a
 * SQLite file that does not exist yet is an empty source.
 */
import { existsSync } from "node:fs";
import { relative, resolve } from "node:path";
import { parseEntryKey, pruneCassette, readCassette } from "../cassette/index.js";
import { type Entry, entryPrefix, validateEntry } from "../store/envelope.js";
import { openStore } from "../store/open.js";
import type { JsonValue, Store } from "../store/types.js";
import { defaultStoreUrl, parseStoreUrl } from "../store/url.js";
import type { OptionSpec } from "./args.js";
import { UsageError } from "./errors.js";
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
  /** Size of the stored JSON, UTF-8 bytes. */
  bytes: number;
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
}

/** A store or a cassette, opened for the CLI. */
export interface EntrySource {
  readonly kind: "store" | "cassette";
  /** For messages: the redacted store URL, or `cassette://<path>`. */
  readonly url: string;
  /** False for a SQLite file or a cassette that does not exist (nothing was created). */
  readonly exists: boolean;
  /** The namespace filter, when one was given. */
  readonly namespace: string | undefined;
  /** Read every entry (of the namespace, when given). `onItem` is called per key read. */
  read(onItem?: () => void): Promise<SourceContents>;
  /** Remove entries by key; resolves to the keys removed. `onItem` is called per key. */
  remove(keys: readonly string[], onItem?: () => void): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Open the source the flags name.
 *
 * @throws UsageError for `--store` with `--cassette`, a malformed store URL
 *   or namespace.
 * @example
 * const source = openSource({ store: "sqlite://.invocache/cache.sqlite" }, io);
 * const { entries } = await source.read();
 * await source.close();
 */
export function openSource(flags: SourceFlags, io: Io): EntrySource {
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
  if (flags.cassette !== undefined) {
    if (flags.cassette === "") throw new UsageError("--cassette needs a file path");
    return new CassetteSource(resolve(io.cwd, flags.cassette), io.cwd, flags.namespace);
  }
  const url = flags.store ?? defaultStoreUrl(io.cwd);
  let location: ReturnType<typeof parseStoreUrl>;
  try {
    location = parseStoreUrl(url, io.cwd);
  } catch (error) {
    throw new UsageError(`--store: ${(error as Error).message}`);
  }
  const exists =
    location.kind !== "sqlite" || location.path === ":memory:" || existsSync(location.path);
  // openStore resolves relative sqlite paths against process.cwd(); io.cwd is the same
  // in the real command, and location.url is absolute either way.
  return new StoreSource(
    location.kind === "sqlite" ? location.url : url,
    location.url,
    exists,
    flags.namespace,
  );
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
    bytes: Buffer.byteLength(JSON.stringify(value)),
  };
}

function isRunKey(key: string): boolean {
  return /^[^:]+:run:/.test(key);
}

class StoreSource implements EntrySource {
  readonly kind = "store";
  readonly url: string;
  readonly exists: boolean;
  readonly namespace: string | undefined;
  readonly #openUrl: string;
  #store: Store | undefined;

  constructor(openUrl: string, url: string, exists: boolean, namespace: string | undefined) {
    this.#openUrl = openUrl;
    this.url = url;
    this.exists = exists;
    this.namespace = namespace;
  }

  #open(): Store {
    this.#store ??= openStore(this.#openUrl);
    return this.#store;
  }

  async read(onItem?: () => void): Promise<SourceContents> {
    const out: SourceContents = { entries: [], problems: [], runs: 0 };
    if (!this.exists) return out;
    const prefix = this.namespace === undefined ? "" : `${this.namespace}:`;
    for await (const [key, value] of this.#open().list(prefix)) {
      onItem?.();
      if (isRunKey(key)) out.runs++;
      const r = toRecord(key, value, `${this.url} ${key}`);
      if (r === undefined) continue;
      if ("entry" in r) out.entries.push(r);
      else out.problems.push(r);
    }
    return out;
  }

  async remove(keys: readonly string[], onItem?: () => void): Promise<string[]> {
    const removed: string[] = [];
    if (!this.exists) return removed;
    const store = this.#open();
    for (const key of keys) {
      if (await store.delete(key)) removed.push(key);
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
  readonly url: string;
  readonly exists: boolean;
  readonly namespace: string | undefined;
  readonly #path: string;

  constructor(path: string, cwd: string, namespace: string | undefined) {
    this.#path = path;
    const rel = relative(cwd, path);
    this.url = `cassette://${rel.startsWith("..") || rel === "" ? path : rel}`;
    this.exists = existsSync(path);
    this.namespace = namespace;
  }

  async read(onItem?: () => void): Promise<SourceContents> {
    const out: SourceContents = { entries: [], problems: [], runs: 0 };
    for (const item of await readCassette(this.#path)) {
      onItem?.();
      if (this.namespace !== undefined && !item.key.startsWith(`${this.namespace}:`)) continue;
      if (isRunKey(item.key)) out.runs++;
      const r = toRecord(item.key, item.value, `${this.url} ${item.key}`);
      if (r === undefined) continue;
      if ("entry" in r) out.entries.push(r);
      else out.problems.push(r);
    }
    return out;
  }

  async remove(keys: readonly string[], onItem?: () => void): Promise<string[]> {
    const drop = new Set(keys);
    // One locked, atomic rewrite of the file (pruneCassette re-reads it under the lock).
    const report = await pruneCassette(this.#path, (key) => !drop.has(key));
    onItem?.();
    return report.removed;
  }

  async close(): Promise<void> {}
}
