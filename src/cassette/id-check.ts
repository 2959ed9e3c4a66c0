/**
 * The manifest-vs-id check of cassette entries, made the first time an entry
 * is served instead of on load.
 *
 * Every entry's id must be the identity of its stored manifest (parse.ts,
 * `entryIdMatches`): a hand edit, a bad merge or swapped id lines would
 * otherwise answer a question the entry was not recorded for. Recomputing an
 * identity is canonical JSON plus SHA-256 of the manifest, about half of a
 * cold load of a big cassette, and a replay serves a handful of its entries.
 * So the store's load marks each entry as owing the check, and the store
 * settles it before the entry leaves it: on `get`, on `list`, and for every
 * entry before a write (invocache never rewrites a cassette it cannot read).
 * The result is remembered per item (items are immutable), a failure too, so
 * a tampered entry fails every `get` with the same CassetteError, with the
 * file, line and column the load used to report; it is never served.
 *
 * Whole-file readers (`readCassette`, the CLI's verify/ls/export, the viewer)
 * parse with the check made on the spot, as before.
 */
import { readFile } from "node:fs/promises";
import type { CassetteError } from "../errors.js";
import { manifestIdentity } from "../identity/identity.js";
import type { Manifest } from "../identity/manifest-types.js";
import type { CassetteItem } from "./item.js";

/** Where an entry owing its check was read, for the error's place. */
export interface OwedCheck {
  /** Its index in the file's `entries:` list. */
  index: number;
  /** The cassette's absolute path. */
  file: string;
  /** The text it was parsed from; undefined when it came from the parsed-form cache (the file is re-read). */
  text: string | undefined;
  /**
   * The CassetteError of a mismatch at `entries[index].id` of `text` (one
   * function per load, from parse.ts, which knows how to place it).
   */
  error: (text: string | undefined, index: number, item: CassetteItem) => CassetteError;
}

/** Checks owed (a failed one keeps its error: it fails every time). */
const owed = new WeakMap<CassetteItem, OwedCheck & { failure?: CassetteError }>();

/** Mark `item` (an `entries:` item whose check was not made) as owing it. */
export function oweIdCheck(item: CassetteItem, check: OwedCheck): void {
  owed.set(item, check);
}

/** Whether `item` still owes its check, or failed it. */
export function owesIdCheck(item: CassetteItem): boolean {
  return owed.has(item);
}

/** The `entries:` index of an item that owes its check (or failed it), for the parsed-form cache. */
export function owedIdCheckIndex(item: CassetteItem): number | undefined {
  return owed.get(item)?.index;
}

/**
 * Make `item`'s check if it owes one (remembered); a mismatch throws the
 * CassetteError naming the entry's place in the file.
 */
export async function settleIdCheck(item: CassetteItem): Promise<void> {
  const check = owed.get(item);
  if (check === undefined) return;
  if (check.failure !== undefined) throw check.failure;
  const value = item.value as unknown as { id: string; manifest: Manifest };
  if (manifestIdentity(value.manifest) === value.id) {
    owed.delete(item);
    return;
  }
  const text = check.text ?? (await readFile(check.file, "utf8").catch(() => undefined));
  check.failure = check.error(text, check.index, item);
  throw check.failure;
}

/** {@link settleIdCheck} for each of `items`, in order: the first mismatch throws. */
export async function settleIdChecks(items: Iterable<CassetteItem>): Promise<void> {
  for (const item of items) if (owesIdCheck(item)) await settleIdCheck(item);
}
