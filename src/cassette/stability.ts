/**
 * Stable re-records: when a value written now records the same thing as the
 * one already in the file, the file keeps the old one, byte for byte.
 *
 * "The same thing" ignores what changes on every call without changing what
 * was recorded: an entry's `recordedAt`, `durationMs`, `invocacheVersion` and
 * its verdict's `at`; a run record's `endedAt`. Everything else (manifest,
 * response, occurrence, normalization version, parent, verdict and reason)
 * must be equal, compared as JSON values (key order does not matter).
 */

import type { JsonValue } from "../json/index.js";
import { jsonEqual } from "../json/index.js";
import { parseEntryKey, parseRunKey } from "../store/index.js";

/** Compatibility: `jsonEqual` lives in src/json. */
export { jsonEqual };

/**
 * Whether `next`, written under `key`, records the same as `prev`.
 *
 * @example
 * sameRecording(key, entry, { ...entry, meta: { ...entry.meta, durationMs: 99 } }) // true
 */
export function sameRecording(key: string, prev: JsonValue, next: JsonValue): boolean {
  if (parseEntryKey(key) !== undefined && isObject(prev) && isObject(next)) {
    return jsonEqual(withoutVolatileEntryFields(prev), withoutVolatileEntryFields(next));
  }
  if (parseRunKey(key) !== undefined && isObject(prev) && isObject(next)) {
    const { endedAt: _a, ...p } = prev;
    const { endedAt: _b, ...n } = next;
    return jsonEqual(p, n);
  }
  return jsonEqual(prev, next);
}

function withoutVolatileEntryFields(entry: { [key: string]: JsonValue }): JsonValue {
  const meta = entry.meta;
  if (!isObject(meta)) return entry;
  const { recordedAt: _r, durationMs: _d, invocacheVersion: _v, ...rest } = meta;
  if (isObject(rest.verdict)) {
    const { at: _at, ...verdict } = rest.verdict;
    rest.verdict = verdict;
  }
  return { ...entry, meta: rest };
}

function isObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
