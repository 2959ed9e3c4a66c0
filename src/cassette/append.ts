/**
 * Append-only recording: the records a cassette opened for recording adds
 * to the end of its file instead of rewriting the whole file for each
 * acknowledged write (a rewrite costs the size of the file, so recording N
 * calls one by one cost O(N²) bytes written and rendered).
 *
 * A record is an integrity line, then a one-item cassette in the normal
 * form (emit.ts), so the file stays a YAML stream of documents:
 *
 *     --- # invocache-append <payload bytes> <sha256 of the payload, hex>
 *     invocache: 1
 *     entries:
 *       - key: …
 *
 * Records are applied in file order over the items of the first document
 * (a key recorded again takes its later value, at its first place). The
 * writer appends under the cassette lock and fdatasyncs before a write is
 * acknowledged; closing the handle (or any rewriting writer, or a
 * maintenance command) rewrites the file once in the normal form.
 *
 * A torn tail (a crash mid-append: a partial integrity line, fewer payload
 * bytes than announced, a digest that does not match) is cut off by the
 * reader and reported (never silently): only bytes of a write that was not
 * acknowledged are in it. The next append truncates the file to its last
 * whole record first.
 */
import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { redactOutward } from "../secrets/index.js";
import { emitCassette } from "./emit.js";
import { type FileStamp, statStamp } from "./files.js";
import type { CassetteItem } from "./item.js";
import { type CassetteSource, parseCassette } from "./parse.js";
import { decodeCassette } from "./source.js";

const MARK = "--- # invocache-append ";
const MARK_BYTES = Buffer.from(MARK);
const NEWLINE_MARK = Buffer.from(`\n${MARK}`);
const LINE = /^--- # invocache-append (\d{1,12}) ([0-9a-f]{64})$/;

/** A cassette file's bytes split into its first document and its appended records. */
export interface AppendedFile {
  /** The first document: the normal form as last rewritten. */
  readonly head: Buffer;
  /** The payload of each whole record, in file order. */
  readonly records: readonly Buffer[];
  /** Bytes up to the end of the last whole record: where the next append goes. */
  readonly validBytes: number;
  /** Why the bytes after `validBytes` were cut off; undefined when there were none. */
  readonly torn: string | undefined;
}

/** Split `bytes` (a whole cassette file) at its appended records. */
export function splitAppended(bytes: Buffer): AppendedFile {
  let start = bytes.indexOf(NEWLINE_MARK);
  if (start === -1) {
    // A crash inside the first record's integrity line leaves a piece of it
    // after the last newline (the normal form always ends with one).
    const lastLine = bytes.lastIndexOf(0x0a) + 1;
    const rest = bytes.subarray(lastLine);
    if (rest.length > 0 && MARK_BYTES.subarray(0, rest.length).equals(rest)) {
      return {
        head: bytes.subarray(0, lastLine),
        records: [],
        validBytes: lastLine,
        torn: "a partial integrity line",
      };
    }
    return { head: bytes, records: [], validBytes: bytes.length, torn: undefined };
  }
  start += 1;
  const head = bytes.subarray(0, start);
  const records: Buffer[] = [];
  let pos = start;
  let torn: string | undefined;
  while (pos < bytes.length) {
    const eol = bytes.indexOf(0x0a, pos);
    const line = eol === -1 ? undefined : LINE.exec(bytes.toString("latin1", pos, eol));
    if (line === undefined || line === null) {
      torn = eol === -1 ? "a partial integrity line" : "a malformed integrity line";
      break;
    }
    const size = Number(line[1]);
    const end = eol + 1 + size;
    if (end > bytes.length) {
      torn = `a record of ${size} bytes with ${bytes.length - eol - 1} of them written`;
      break;
    }
    const payload = bytes.subarray(eol + 1, end);
    if (sha256(payload) !== line[2]) {
      torn = "a record whose bytes do not match its digest";
      break;
    }
    records.push(payload);
    pos = end;
  }
  return { head, records, validBytes: pos, torn };
}

/** `items` with the appended `records`' items applied in order (a key again: its later value, first place). */
export function applyAppended(
  items: readonly CassetteItem[],
  records: readonly CassetteItem[],
): CassetteItem[] {
  const map = new Map(items.map((i) => [i.key, i]));
  for (const item of records) map.set(item.key, item);
  return [...map.values()];
}

/** The bytes of one record per item. */
export function appendRecords(items: Iterable<CassetteItem>): Buffer {
  const parts: Buffer[] = [];
  for (const item of items) {
    const payload = Buffer.from(emitCassette([item]));
    parts.push(Buffer.from(`${MARK}${payload.length} ${sha256(payload)}\n`), payload);
  }
  return Buffer.concat(parts);
}

/**
 * Write `data` at byte `at` of the existing file `path` (cutting off
 * whatever follows: a torn tail), then fdatasync, so the records are on
 * disk when this resolves. A first document not ending in a newline (a
 * hand-edited file) gets one first, so the record starts a line. The caller
 * holds the cassette lock and has checked the file is the version it read.
 * Resolves to the file's new stamp and where the records end.
 */
export async function appendDurably(
  path: string,
  at: number,
  data: Buffer,
): Promise<{ stamp: FileStamp; end: number }> {
  const handle = await open(path, "r+");
  let end = at;
  try {
    const { size } = await handle.stat();
    if (size > at) await handle.truncate(at);
    let bytes = data;
    if (at > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, at - 1);
      if (last[0] !== 0x0a) bytes = Buffer.concat([Buffer.from("\n"), data]);
    }
    let written = 0;
    while (written < bytes.length) {
      const { bytesWritten } = await handle.write(
        bytes,
        written,
        bytes.length - written,
        at + written,
      );
      written += bytesWritten;
    }
    end = at + bytes.length;
    await handle.datasync();
  } finally {
    await handle.close();
  }
  const stamp = await statStamp(path);
  if (stamp === undefined) throw new Error(`${path} disappeared while being appended to`);
  return { stamp, end };
}

/** A cassette file's bytes read: the first document's text and items, and every item with the records applied. */
export interface ReadAppended {
  readonly headText: string;
  readonly headItems: CassetteItem[];
  readonly items: CassetteItem[];
  readonly file: AppendedFile;
}

/**
 * Read a cassette file's `bytes`: the first document with `parseHead`
 * (default: every check now), each record's one-item document with every
 * check now (records are few: a handle's recordings since the last rewrite).
 * A record whose digest matches but does not parse was not torn: it throws,
 * and the file is never rewritten over it.
 */
export function readAppended(
  bytes: Buffer,
  src: CassetteSource,
  parseHead: (text: string) => CassetteItem[] = (text) => parseCassette(text, src),
): ReadAppended {
  const file = splitAppended(bytes);
  const headText = decodeCassette(file.head, src);
  const headItems = parseHead(headText);
  if (file.records.length === 0) return { headText, headItems, items: headItems, file };
  const added = file.records.flatMap((r) => parseCassette(decodeCassette(r, src), src));
  return { headText, headItems, items: applyAppended(headItems, added), file };
}

/**
 * Every checked item of a cassette file's `bytes`, records applied: what
 * the whole-file commands (maintenance.ts, rewrite.ts) read. A torn tail is
 * cut off with a process warning; their rewrite then drops it from the file.
 */
export function parseCassetteFile(bytes: Buffer, src: CassetteSource): CassetteItem[] {
  const read = readAppended(bytes, src);
  if (read.file.torn !== undefined) {
    process.emitWarning(redactOutward(tornWarning(src.display, read.file, bytes.length)), {
      code: "INVOCACHE_CASSETTE",
    });
  }
  return read.items;
}

/** The warning for a torn tail cut off (it names the file and what was cut). */
export function tornWarning(display: string, file: AppendedFile, size: number): string {
  return `${display}: cut off a torn tail of ${size - file.validBytes} bytes after the last whole appended recording (${file.torn}), left by a writer that stopped mid-append; that write was never acknowledged, and every acknowledged recording is kept. The next write removes it from the file.`;
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}
