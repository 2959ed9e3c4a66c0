/**
 * What a cassette holds, in memory and in the file.
 *
 * In memory a cassette is an ordered list of store items (key, JSON value,
 * optional expiry), exactly what the `Store` contract deals in. In the file,
 * items whose key and value form a valid entry envelope are written to the
 * `entries:` section in a reader-friendly shape (no `v`, no derived fields,
 * fixed field order); every other item (run records, anything a caller
 * stores) goes to `values:` as `{ key, value }`. Both shapes convert back to
 * the exact item, so the file choice never changes what `get` returns.
 */

import type { ManifestField } from "../identity/index.js";
import type { JsonValue } from "../json/index.js";
import {
  ENTRY_VERSION,
  type Entry,
  isEntryKey,
  parseEntryKey,
  validateEntry,
} from "../store/index.js";

/** One stored key. Immutable once created: caches hang off its identity. */
export interface CassetteItem {
  readonly key: string;
  readonly value: JsonValue;
  /** Epoch milliseconds after which the item is gone (from `set(…, { ttlMs })`). */
  readonly expires?: number;
}

/**
 * The namespace written implicitly: entries in it carry no `namespace:` field.
 *
 * @example
 * parseEntryKey(`${DEFAULT_NAMESPACE}:e:${id}:0`)?.namespace // "default"
 */
export const DEFAULT_NAMESPACE = "default";

// The key layout lives in store/envelope.ts; re-exported for compatibility.
export { isEntryKey, parseEntryKey };

/**
 * An item of the `entries:` section. Field order here is the file's order.
 * `meta` leaves out `occurrence` (the item's own field) and `attempt`
 * (always `manifest.attempt`): one truth per fact, so a hand edit cannot
 * make them disagree.
 */
export interface FileEntry {
  id: string;
  occurrence: number;
  namespace?: string;
  manifest: { [key: string]: JsonValue };
  response: JsonValue;
  meta: { [key: string]: JsonValue };
  expires?: string;
}

/** An item of the `values:` section. */
export interface FileValue {
  key: string;
  value: JsonValue;
  expires?: string;
}

// Reading order: who and what first, the long prompt last.
const MANIFEST_ORDER: readonly ManifestField[] = [
  "role",
  "model",
  "attempt",
  "params",
  "inputs",
  "task",
  "prompt",
];
const META_ORDER = [
  "recordedAt",
  "durationMs",
  "usage",
  "normalization",
  "invocacheVersion",
  "parent",
  "verdict",
];
const VERDICT_ORDER = ["verdict", "reason", "at"];

/**
 * The `entries:` form of an item, or undefined when it is not a valid v1
 * entry stored under its own key (it then goes to `values:` unchanged).
 */
export function toFileEntry(item: CassetteItem): FileEntry | undefined {
  const parts = parseEntryKey(item.key);
  if (parts === undefined) return undefined;
  let entry: Entry;
  try {
    entry = validateEntry(item.value, item.key);
  } catch {
    return undefined;
  }
  if (entry.id !== parts.id || entry.meta.occurrence !== parts.occurrence) return undefined;
  const { occurrence: _o, attempt: _a, ...meta } = entry.meta;
  // cast: EntryMeta and Manifest are interfaces (no index signature) of JSON data, validated with the entry: ordered() takes them as JSON objects.
  const metaOut = ordered(meta as unknown as { [key: string]: JsonValue }, META_ORDER);
  if (entry.meta.verdict !== undefined) {
    metaOut.verdict = ordered(
      entry.meta.verdict as unknown as { [key: string]: JsonValue },
      VERDICT_ORDER,
    );
  }
  const out: FileEntry = {
    id: entry.id,
    occurrence: parts.occurrence,
    ...(parts.namespace === DEFAULT_NAMESPACE ? {} : { namespace: parts.namespace }),
    // cast: Manifest is an interface (no index signature) of JSON data, validated with the entry.
    manifest: ordered(entry.manifest as unknown as { [key: string]: JsonValue }, MANIFEST_ORDER),
    response: entry.response,
    meta: metaOut,
  };
  if (item.expires !== undefined) out.expires = new Date(item.expires).toISOString();
  return out;
}

/** The `values:` form of an item. */
export function toFileValue(item: CassetteItem): FileValue {
  return {
    key: item.key,
    value: item.value,
    ...(item.expires === undefined ? {} : { expires: new Date(item.expires).toISOString() }),
  };
}

/**
 * The store item of a checked `entries:` item: the envelope with `v` and the
 * derived meta fields put back.
 */
export function fromFileEntry(e: FileEntry, expires: number | undefined): CassetteItem {
  const manifest = e.manifest;
  const value = {
    v: ENTRY_VERSION,
    id: e.id,
    manifest,
    response: e.response,
    meta: { ...e.meta, occurrence: e.occurrence, attempt: manifest.attempt as number },
  } as JsonValue;
  return {
    key: `${e.namespace ?? DEFAULT_NAMESPACE}:e:${e.id}:${e.occurrence}`,
    value,
    ...(expires === undefined ? {} : { expires }),
  };
}

/** `obj` with the listed keys first, in that order, then the rest in their own order. */
function ordered(
  obj: { [key: string]: JsonValue },
  order: readonly string[],
): { [key: string]: JsonValue } {
  const entries: Array<[string, JsonValue]> = [];
  for (const key of order) if (Object.hasOwn(obj, key)) entries.push([key, obj[key]!]);
  for (const key of Object.keys(obj)) if (!order.includes(key)) entries.push([key, obj[key]!]);
  return Object.fromEntries(entries);
}
