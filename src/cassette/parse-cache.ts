/**
 * The parsed-form cache: YAML parses ~60x slower than JSON, so a big
 * cassette that has not changed since it was last parsed is loaded from a
 * JSON copy of its checked items instead (`.invocache/cassette-cache/` by
 * default; it is a cache, safe to delete, never committed).
 *
 * Validity, git's index recipe: the cache records the cassette's stat data
 * (size, mtime, ctime, inode, device) and the sha256 of its bytes. Matching
 * stat data is trusted, except when the file was modified within
 * {@link RACY_NS} before the cache was written ("racily clean": an edit in the
 * same timestamp tick would keep the stat data); then the content hash
 * decides. A cache that is missing, torn or for another version is ignored.
 *
 * Layout: line 1 is a small JSON header, line 2 the items, so a stale cache
 * costs one short parse, not a big one.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { JsonValue } from "../json/value.js";
import type { FileStamp } from "./files.js";
import type { CassetteItem } from "./item.js";

/** Cached files modified this close to caching are checked by content hash. */
export const RACY_NS = 3_000_000_000n;

/** Files smaller than this are parsed directly: caching would cost more than it saves. */
export const PARSE_CACHE_MIN_BYTES = 64 * 1024;

const VERSION = 1;

interface Header {
  v: number;
  file: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
  ino: string;
  dev: string;
  sha256: string;
  cachedAtNs: string;
}

type Row = [string, JsonValue] | [string, JsonValue, number];

/** Where the cache of `file` lives inside `dir`. */
export function parseCachePath(dir: string, file: string): string {
  return join(dir, `${createHash("sha256").update(file).digest("hex").slice(0, 32)}.json`);
}

/** sha256 of a cassette's bytes, hex. */
export function contentHash(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The cached items of `file` at `stamp`, or undefined when there is no valid
 * cache. `readBytes` is called only for a racily-clean cache, to hash the file.
 */
export async function readParseCache(
  dir: string,
  file: string,
  stamp: FileStamp,
  readBytes: () => Promise<Buffer | undefined>,
): Promise<CassetteItem[] | undefined> {
  let text: string;
  try {
    text = await readFile(parseCachePath(dir, file), "utf8");
  } catch {
    return undefined;
  }
  const newline = text.indexOf("\n");
  if (newline < 0) return undefined;
  let header: Header;
  try {
    header = JSON.parse(text.slice(0, newline)) as Header;
  } catch {
    return undefined;
  }
  if (
    header.v !== VERSION ||
    header.file !== file ||
    header.size !== String(stamp.size) ||
    header.mtimeNs !== String(stamp.mtimeNs) ||
    header.ctimeNs !== String(stamp.ctimeNs) ||
    header.ino !== String(stamp.ino) ||
    header.dev !== String(stamp.dev)
  ) {
    return undefined;
  }
  // Modified shortly before it was read: an edit in the same tick would keep the stat data.
  // biome-ignore lint/complexity/useMathMinMax: Math.max does not take bigints
  const changedAt = stamp.mtimeNs > stamp.ctimeNs ? stamp.mtimeNs : stamp.ctimeNs;
  if (BigInt(header.cachedAtNs) - changedAt < RACY_NS) {
    const bytes = await readBytes();
    if (bytes === undefined || contentHash(bytes) !== header.sha256) return undefined;
  }
  let rows: Row[];
  try {
    rows = JSON.parse(text.slice(newline + 1)) as Row[];
  } catch {
    return undefined; // torn or edited: parse the YAML instead
  }
  if (!Array.isArray(rows)) return undefined;
  return rows.map((r) =>
    r.length === 3 ? { key: r[0], value: r[1], expires: r[2] } : { key: r[0], value: r[1] },
  );
}

/**
 * Cache the checked `items` of `file` as read at `stamp` with content hash
 * `sha256`; `readAtNs` is the wall-clock time (ns) the bytes were read, the
 * start of the racy window. Best effort: a failure only costs the next load
 * a YAML parse.
 */
export async function writeParseCache(
  dir: string,
  file: string,
  stamp: FileStamp,
  sha256: string,
  items: readonly CassetteItem[],
  readAtNs: bigint,
): Promise<void> {
  const header: Header = {
    v: VERSION,
    file,
    size: String(stamp.size),
    mtimeNs: String(stamp.mtimeNs),
    ctimeNs: String(stamp.ctimeNs),
    ino: String(stamp.ino),
    dev: String(stamp.dev),
    sha256,
    cachedAtNs: String(readAtNs),
  };
  const rows: Row[] = items.map((i) =>
    i.expires === undefined ? [i.key, i.value] : [i.key, i.value, i.expires],
  );
  const path = parseCachePath(dir, file);
  const temp = `${path}.${process.pid}.tmp`;
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(temp, `${JSON.stringify(header)}\n${JSON.stringify(rows)}`);
    await rename(temp, path);
  } catch {
    // A read-only checkout, a full disk: the cache is an optimisation only.
  }
}
