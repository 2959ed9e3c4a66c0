/**
 * Re-reading a cassette that another process rewrote, in time proportional
 * to what changed. Writers emit the canonical form (emit.ts): a header, then
 * each item as its own chunk of lines starting with `  - ` and continuing
 * with lines indented by four spaces (or empty). A chunk whose exact text was
 * parsed or written before is the same item again; only new chunks are
 * parsed. A cassette of 40 MB that gained one entry is re-read in
 * milliseconds instead of seconds, which is what keeps concurrent writers of
 * a big cassette from starving each other (see store.ts, writing).
 *
 * Anything else (a hand-formatted file, comments, a chunk that fails on its
 * own) returns undefined, and the caller parses the whole file, which also
 * gives the exact line and column of an error.
 */
import type { CassetteItem } from "./item.js";
import { relocateOwedCheck } from "./owed-checks.js";
import { type CassetteSource, parseCassette } from "./parse.js";

/**
 * Chunk text → item, per section, of the file version last read or written.
 * Keyed by slices of the file's text, which share its memory (a key made by
 * prefixing the section would be a copy of the whole file).
 */
export interface KnownChunks {
  readonly entries: Map<string, CassetteItem>;
  readonly values: Map<string, CassetteItem>;
}

/** No chunk known (nothing read yet). */
export function noChunks(): KnownChunks {
  return { entries: new Map(), values: new Map() };
}

/** The item chunks of a canonical cassette text, or undefined when it is not in canonical form. */
export function splitCanonical(text: string): { entries: string[]; values: string[] } | undefined {
  const header = "invocache: 1\n";
  if (!text.startsWith(header)) return undefined;
  let pos = header.length;
  const entries: string[] = [];
  const values: string[] = [];
  if (text.startsWith("entries: []\n", pos)) {
    pos += "entries: []\n".length;
  } else if (text.startsWith("entries:\n", pos)) {
    pos = readChunks(text, pos + "entries:\n".length, entries);
    if (pos < 0 || entries.length === 0) return undefined;
  } else {
    return undefined;
  }
  if (pos === text.length) return { entries, values };
  if (!text.startsWith("values:\n", pos)) return undefined;
  pos = readChunks(text, pos + "values:\n".length, values);
  if (pos !== text.length || values.length === 0) return undefined;
  return { entries, values };
}

function readChunks(text: string, start: number, out: string[]): number {
  let pos = start;
  while (text.startsWith("  - ", pos)) {
    let end = pos;
    for (;;) {
      const nl = text.indexOf("\n", end);
      if (nl < 0) return -1;
      end = nl + 1;
      if (end < text.length && (text.startsWith("    ", end) || text[end] === "\n")) continue;
      break;
    }
    out.push(text.slice(pos, end));
    pos = end;
  }
  return pos;
}

/**
 * The items of `text`, reusing `known` (see {@link knownChunks}) for chunks
 * seen before and parsing only the others; undefined when the text is not in
 * canonical form or any part of it needs the whole-file parse. New chunks
 * are few (that is the point), so their checks are all made here, value
 * and id checks included; reused items keep whatever checks they still owe
 * (owed-checks.ts).
 */
export function parseIncremental(
  text: string,
  known: KnownChunks,
  src: CassetteSource,
): CassetteItem[] | undefined {
  // Nothing known (a first load): every chunk is fresh, and parsing them as
  // a rebuilt document would only copy the whole text twice more.
  if (known.entries.size + known.values.size === 0) return undefined;
  const split = splitCanonical(text);
  if (split === undefined) return undefined;
  const items: CassetteItem[] = [];
  for (const [section, chunks] of [
    ["entries", split.entries],
    ["values", split.values],
  ] as const) {
    const seen = known[section];
    const fresh = chunks.filter((c) => !seen.has(c));
    let parsed: CassetteItem[] = [];
    if (fresh.length > 0) {
      const doc =
        section === "entries"
          ? `invocache: 1\nentries:\n${fresh.join("")}`
          : `invocache: 1\nentries: []\nvalues:\n${fresh.join("")}`;
      try {
        parsed = parseCassette(doc, src);
      } catch {
        return undefined;
      }
      if (parsed.length !== fresh.length) return undefined;
    }
    let next = 0;
    for (let index = 0; index < chunks.length; index++) {
      const known = seen.get(chunks[index]!);
      if (known === undefined) {
        items.push(parsed[next++]!);
        continue;
      }
      // The same item, maybe at another place: a check it still owes must
      // name its line and index in this text, not in the one it was read from.
      relocateOwedCheck(known, section, index, text);
      items.push(known);
    }
  }
  const keys = new Set(items.map((i) => i.key));
  if (keys.size !== items.length) return undefined; // a repeated key: the whole parse reports where
  return items;
}

/**
 * The chunk map of a text and its items as parsed in file order, for the
 * next {@link parseIncremental}; empty when the text is not canonical.
 */
export function knownChunks(text: string, items: readonly CassetteItem[]): KnownChunks {
  const split = splitCanonical(text);
  const known = noChunks();
  if (split === undefined || split.entries.length + split.values.length !== items.length) {
    return known;
  }
  for (const [i, c] of split.entries.entries()) known.entries.set(c, items[i]!);
  for (const [i, c] of split.values.entries()) {
    known.values.set(c, items[split.entries.length + i]!);
  }
  return known;
}
