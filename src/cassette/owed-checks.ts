/**
 * The per-item checks of a cassette that are made the first time the store
 * serves an item instead of on load: its value's check (an entry's envelope,
 * `validateEntry`; a `values:` item's JSON) and an entry's manifest-vs-id
 * check.
 *
 * Every entry's id must be the identity of its stored manifest (parse.ts,
 * `entryIdMatches`): a hand edit, a bad merge or swapped id lines would
 * otherwise answer a question the entry was not recorded for; and every
 * stored value must be what the store contract promises (a v1 envelope for
 * an entry, JSON for anything else). Recomputing an identity (canonical JSON
 * plus SHA-256) and walking every value were most of the checking cost of a
 * cold load of a big cassette, and a replay serves a handful of its entries.
 * So the store's load marks each item as owing its checks, and the store
 * settles them before the item leaves it: on `get`, on `list`, and for every
 * item of the file before a write (invocache never rewrites a cassette it
 * cannot read). The value check comes first, as on a whole-file load. The
 * result is remembered per item (items are immutable), a failure too, so a
 * bad item fails every `get` with the same CassetteError, with the file,
 * line and column the load used to report; it is never served.
 *
 * The parsed-form cache stores only items whose value check passed (JSON
 * cannot hold a NaN: a bad value would come back as a good one), marking
 * those that still owe their id check.
 *
 * Whole-file readers (`readCassette`, the CLI's ls/stats/export, the viewer)
 * parse with every check made on the spot, as before.
 */
import { readFile } from "node:fs/promises";
import type { CassetteError } from "../errors.js";
import type { Manifest } from "../identity/index.js";
import { manifestIdentity } from "../identity/index.js";
import type { JsonValue } from "../json/index.js";
import { jsonEqual } from "../json/index.js";
import { isVouched } from "../store/internal.js";
import type { CassetteItem } from "./item.js";

/** Which check failed. */
export type CheckKind = "value" | "id";

/** How a load's owed checks are made and placed (one per load, from parse.ts). */
export interface CheckRules {
  /** Whether the value of `item` (at `section`) passes its check; builds no message. */
  valueOk(item: CassetteItem, section: "entries" | "values"): boolean;
  /**
   * The error of the failed `kind` check of `item` at `section[index]` of
   * `text` (the CassetteError the whole-file load gives); without the text
   * (it could not be re-read), the file only.
   */
  error(
    text: string | undefined,
    section: "entries" | "values",
    index: number,
    item: CassetteItem,
    kind: CheckKind,
  ): unknown;
}

/** Where an item owing checks was read, and which it still owes. */
export interface OwedCheck {
  /** Its section and its index there. */
  section: "entries" | "values";
  index: number;
  /** The cassette's absolute path. */
  file: string;
  /** The text it was parsed from; undefined when it came from the parsed-form cache (the file is re-read). */
  text: string | undefined;
  /** Its value's check is still owed. */
  value: boolean;
  /** Its id check is still owed (entries only). */
  id: boolean;
  rules: CheckRules;
}

/** Checks owed (a failed one keeps its error: it fails every time). */
const owed = new WeakMap<CassetteItem, OwedCheck & { failure?: unknown }>();

/** Mark `item` as owing the checks `check` names. */
export function oweChecks(item: CassetteItem, check: OwedCheck): void {
  owed.set(item, check);
}

/**
 * Point the check `item` still owes (if any) at its place in a newer text of
 * the same file: another writer may have moved it (incremental.ts reuses an
 * item whose chunk it has seen). A failure already built named the old
 * place: it is dropped, and the next serve builds it again from here.
 */
export function relocateOwedCheck(
  item: CassetteItem,
  section: "entries" | "values",
  index: number,
  text: string,
): void {
  const check = owed.get(item);
  if (check === undefined) return;
  if (check.section === section && check.index === index && check.text === text) return;
  check.section = section;
  check.index = index;
  check.text = text;
  delete check.failure;
}

/** Whether `item` still owes a check, or failed one. */
export function owesChecks(item: CassetteItem): boolean {
  return owed.has(item);
}

/**
 * The `entries:` index of an item that owes its id check (or failed it) and
 * nothing else, for the parsed-form cache; undefined when it owes nothing.
 */
export function owedIdCheckIndex(item: CassetteItem): number | undefined {
  const check = owed.get(item);
  return check?.id === true ? check.index : undefined;
}

/**
 * Make the value check of each of `items` that owes one (remembered when it
 * passes). False at the first that fails: its error is built when it is
 * served. For the parsed-form cache, which must not hold unchecked values.
 */
export function valueChecksPass(items: Iterable<CassetteItem>): boolean {
  for (const item of items) {
    const check = owed.get(item);
    if (check === undefined || !check.value) continue; // a failed id check is cached, still owed
    if (check.failure !== undefined || !check.rules.valueOk(item, check.section)) return false;
    check.value = false;
    if (!check.id) owed.delete(item);
  }
  return true;
}

/**
 * Make `item`'s owed checks (remembered): the value's first, then the id's.
 * A failure throws the CassetteError naming the item's place in the file.
 */
export async function settleChecks(
  item: CassetteItem,
  expect?: { id: string; manifest: JsonValue },
): Promise<void> {
  const check = owed.get(item);
  if (check === undefined) return;
  if (check.failure !== undefined) throw check.failure;
  if (check.value) {
    if (!check.rules.valueOk(item, check.section)) return fail(check, item, "value");
    check.value = false;
  }
  if (check.id) {
    // cast: the value check (run first, above) proved the item's value is an entry: it has an id and a manifest.
    const value = item.value as unknown as { id: string; manifest: Manifest };
    // The caller's manifest, which hashes to its id, equal to the stored one
    // under the same id: the check holds for this get. Remembered only when
    // the recorder vouches for the hint (its own hash of that manifest,
    // src/store/vouched.ts); anyone else's hint is their word (Store.get,
    // GetOptions), so every get of theirs compares again.
    if (
      expect !== undefined &&
      value.id === expect.id &&
      jsonEqual(value.manifest as unknown as JsonValue, expect.manifest)
    ) {
      if (!isVouched(expect)) return;
    } else if (manifestIdentity(value.manifest) !== value.id) return fail(check, item, "id");
    check.id = false;
  }
  owed.delete(item);
}

/** {@link settleChecks} for each of `items`, in order: the first failure throws. */
export async function settleAllChecks(items: Iterable<CassetteItem>): Promise<void> {
  for (const item of items) if (owesChecks(item)) await settleChecks(item);
}

async function fail(
  check: OwedCheck & { failure?: unknown },
  item: CassetteItem,
  kind: CheckKind,
): Promise<never> {
  const text = check.text ?? (await readFile(check.file, "utf8").catch(() => undefined));
  check.failure = check.rules.error(text, check.section, check.index, item, kind);
  throw check.failure as CassetteError;
}
