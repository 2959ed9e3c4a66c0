/**
 * The parsed-form cache: YAML parses ~60x slower than JSON, so a big
 * cassette that has not changed since it was last parsed is loaded from a
 * JSON copy of its checked items instead (`.invocache/cassette-cache/` by
 * default; it is a cache, safe to delete, never committed).
 *
 * Trust: the cache answers replays, so it must never say more than the
 * YAML. It is used only when all of these hold, else the YAML is parsed:
 * - it is for this file at this version: the stat data (size, mtime, ctime,
 *   inode, device) match and the sha256 of the YAML's bytes, checked on every
 *   load, is the one recorded when the items were parsed from it;
 * - its items are the ones written: the header holds the sha256 of the item
 *   line, so a hand edit of the cache (or a torn write) is ignored;
 * - it is this user's own file, not writable by group or others (another
 *   local user who can write the folder cannot plant one), read without
 *   following a symlink.
 * It is written like the cassette: an exclusively created temp file with a
 * random name (never through a planted symlink), renamed into place.
 *
 * Layout: line 1 is a small JSON header, so a stale cache costs one short
 * parse, not a big one; line 2 the items' keys (and expiry, owed check); then
 * one line per item holding its value's JSON (`JSON.stringify` never writes a
 * raw line break). A value is parsed the first time it is read: a process
 * that replays a few calls from a big cassette parses those few, not the
 * whole file (~10 ms of a 100-entry cassette's cold start here, most of it
 * `JSON.parse` of values nobody asked for; docs/performance.md).
 */
import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { makeDirectory } from "../files/index.js";
import type { JsonValue } from "../json/index.js";
import type { FileStamp } from "./files.js";
import type { CassetteItem } from "./item.js";
import { owedIdCheckIndex } from "./owed-checks.js";

/** Files smaller than this are parsed directly: caching would cost more than it saves. */
export const PARSE_CACHE_MIN_BYTES = 64 * 1024;

/**
 * 3: a row may end with the `entries:` index of an item that owes its id
 * check (owed-checks.ts). Only items whose value check passed are written
 * (the caller makes it), so a row never owes that.
 * 4: values on lines of their own, after the rows, parsed on first read.
 */
const VERSION = 4;

interface Header {
  v: number;
  file: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
  ino: string;
  dev: string;
  /** sha256 of the YAML bytes the items were parsed from. */
  sha256: string;
  /** sha256 of everything after the header line (the rows and the values). */
  rows: string;
}

/** An item's key, its expiry, and the `entries:` index of the id check it owes. */
type Row = [string] | [string, number] | [string, number | null, number];

/**
 * An item read from the cache: its value is decoded and parsed from its own
 * line of the file's bytes the first time it is read, then kept (the same
 * object on every read, as a parsed item's is).
 */
class CachedItem implements CassetteItem {
  // Declared, not defined: an item without expiry has no `expires` key at all, as a parsed one.
  declare readonly expires?: number;
  #line: { bytes: Buffer; start: number; end: number; file: string } | undefined;
  #value: JsonValue | undefined;

  constructor(
    readonly key: string,
    line: { bytes: Buffer; start: number; end: number; file: string },
    expires: number | undefined,
  ) {
    this.#line = line;
    if (expires !== undefined) this.expires = expires;
  }

  get value(): JsonValue {
    const line = this.#line;
    if (line !== undefined) {
      try {
        this.#value = JSON.parse(line.bytes.toString("utf8", line.start, line.end)) as JsonValue;
      } catch (error) {
        // Only a consistent edit by the cache's owner (the hash was checked) gets here.
        throw new Error(
          `invocache: the parsed-form cache of ${line.file} holds a value that is not JSON for ${this.key} ` +
            `(${(error as Error).message}); delete the cache folder (it is rebuilt from the cassette)`,
        );
      }
      this.#line = undefined; // the file's bytes are let go once every value is parsed
    }
    return this.#value as JsonValue;
  }
}

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
 * cache (see the file comment). `readBytes` reads the YAML, to hash it.
 * An item cached while it still owed its id check owes it again: `owe` is
 * called with it and its `entries:` index (the cache never says more than
 * the checks made).
 */
export async function readParseCache(
  dir: string,
  file: string,
  stamp: FileStamp,
  readBytes: () => Promise<Buffer | undefined>,
  owe: (item: CassetteItem, index: number) => void,
): Promise<CassetteItem[] | undefined> {
  let bytes: Buffer;
  try {
    const handle = await open(parseCachePath(dir, file), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const st = await handle.stat();
      const uid = process.getuid?.();
      if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) {
        return undefined; // not ours alone: never trusted
      }
      // Bytes, not text: the hash is checked on the bytes, and only a cache
      // that passes is decoded (at once, not chunk by chunk as readFile("utf8") does).
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
  // A UTF-8 byte 0x0a is always a line break (never inside a multi-byte character).
  const newline = bytes.indexOf(0x0a);
  if (newline < 0) return undefined;
  let header: Header;
  try {
    header = JSON.parse(bytes.toString("utf8", 0, newline)) as Header;
  } catch {
    return undefined;
  }
  if (
    header === null ||
    typeof header !== "object" ||
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
  // The writer hashed the body's text, whose UTF-8 is these bytes (JSON.stringify writes no lone surrogate).
  if (contentHash(bytes.subarray(newline + 1)) !== header.rows) return undefined;
  const yaml = await readBytes();
  if (yaml === undefined || contentHash(yaml) !== header.sha256) return undefined;
  const rowsEnd = bytes.indexOf(0x0a, newline + 1);
  if (rowsEnd < 0) return undefined;
  let rows: Row[];
  try {
    rows = JSON.parse(bytes.toString("utf8", newline + 1, rowsEnd)) as Row[];
  } catch {
    return undefined;
  }
  if (!Array.isArray(rows)) return undefined;
  // Each value's line, found with native searches on the bytes; its
  // decoding and parse wait for its first read.
  // n rows, n value lines: n - 1 line breaks after the rows' line.
  const items: CassetteItem[] = [];
  let at = rowsEnd + 1;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const next = bytes.indexOf(0x0a, at);
    const last = i === rows.length - 1;
    if (last ? next >= 0 : next < 0) return undefined; // not one value line per row
    const end = last ? bytes.length : next;
    const item = new CachedItem(r[0], { bytes, start: at, end, file }, r[1] ?? undefined);
    if (r.length === 3) owe(item, r[2]);
    items.push(item);
    at = end + 1;
  }
  if (rows.length === 0 && bytes.length !== rowsEnd + 1) return undefined;
  return items;
}

/**
 * Cache the checked `items` of `file` as read at `stamp` with content hash
 * `sha256`. Best effort: a failure only costs the next load a YAML parse.
 */
export async function writeParseCache(
  dir: string,
  file: string,
  stamp: FileStamp,
  sha256: string,
  items: readonly CassetteItem[],
): Promise<void> {
  const rows: Row[] = items.map((i) => {
    const owed = owedIdCheckIndex(i);
    if (owed !== undefined) return [i.key, i.expires ?? null, owed];
    return i.expires === undefined ? [i.key] : [i.key, i.expires];
  });
  const values = items.map((i) => JSON.stringify(i.value));
  const line = `${JSON.stringify(rows)}\n${values.join("\n")}`;
  const header: Header = {
    v: VERSION,
    file,
    size: String(stamp.size),
    mtimeNs: String(stamp.mtimeNs),
    ctimeNs: String(stamp.ctimeNs),
    ino: String(stamp.ino),
    dev: String(stamp.dev),
    sha256,
    rows: createHash("sha256").update(line).digest("hex"),
  };
  const path = parseCachePath(dir, file);
  const temp = `${path}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  try {
    await makeDirectory(dir);
    const handle = await open(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      await handle.writeFile(`${JSON.stringify(header)}\n${line}`);
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch {
    // A read-only checkout, a full disk: the cache is an optimisation only.
    await unlink(temp).catch(() => {});
  }
}
