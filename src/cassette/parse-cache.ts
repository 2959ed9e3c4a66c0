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
 * Layout: line 1 is a small JSON header, line 2 the items, so a stale cache
 * costs one short parse, not a big one.
 */
import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { makeDirectory } from "../files/index.js";
import type { JsonValue } from "../json/value.js";
import type { FileStamp } from "./files.js";
import type { CassetteItem } from "./item.js";
import { owedIdCheckIndex } from "./owed-checks.js";

/** Files smaller than this are parsed directly: caching would cost more than it saves. */
export const PARSE_CACHE_MIN_BYTES = 64 * 1024;

/**
 * 3: a row may end with the `entries:` index of an item that owes its id
 * check (owed-checks.ts). Only items whose value check passed are written
 * (the caller makes it), so a row never owes that.
 */
const VERSION = 3;

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
  /** sha256 of the item line (line 2). */
  rows: string;
}

type Row =
  | [string, JsonValue]
  | [string, JsonValue, number]
  | [string, JsonValue, number | null, number];

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
  let text: string;
  try {
    const handle = await open(parseCachePath(dir, file), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const st = await handle.stat();
      const uid = process.getuid?.();
      if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) {
        return undefined; // not ours alone: never trusted
      }
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
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
  const line = text.slice(newline + 1);
  if (createHash("sha256").update(line).digest("hex") !== header.rows) return undefined;
  const bytes = await readBytes();
  if (bytes === undefined || contentHash(bytes) !== header.sha256) return undefined;
  let rows: Row[];
  try {
    rows = JSON.parse(line) as Row[];
  } catch {
    return undefined;
  }
  if (!Array.isArray(rows)) return undefined;
  return rows.map((r) => {
    const expires = r[2] ?? undefined;
    const item: CassetteItem =
      expires === undefined ? { key: r[0], value: r[1] } : { key: r[0], value: r[1], expires };
    if (r.length === 4) owe(item, r[3]);
    return item;
  });
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
    if (owed !== undefined) return [i.key, i.value, i.expires ?? null, owed];
    return i.expires === undefined ? [i.key, i.value] : [i.key, i.value, i.expires];
  });
  const line = JSON.stringify(rows);
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
