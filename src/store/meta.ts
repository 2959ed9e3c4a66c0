/**
 * Stored metadata: the few fields of a value that listing, stats, pruning
 * and the viewer need (kind, namespace, role, model, recorded time, size…),
 * computed once when the value is written and kept beside it by the backend
 * (columns on SQLite and PostgreSQL, a hash on Redis), written in the same
 * statement or script as the value so the two never disagree. Reading them
 * costs a few hundred bytes a row instead of parsing every stored value.
 *
 * Pure: what a value's metadata is depends on its key and value only.
 */

import { asToolManifest } from "../identity/internal.js";
import type { JsonValue } from "../json/index.js";
import { parseEntryKey, parseRunKey, validateEntry } from "./envelope.js";
import type { MetaQuery, StoredMeta } from "./meta-types.js";

export type { MetaQuery, StoredMeta };

/** The metadata layout version: a stored row written under another is treated as missing. */
export const META_VERSION = 1;

/**
 * The metadata of `value` stored under `key`; `expires` is the ttl's end, if any.
 *
 * @example
 * storedMetaOf("default:run:r1", { runId: "r1" }).kind // "run"
 */
export function storedMetaOf(
  key: string,
  value: JsonValue,
  expires?: number,
  bytes = Buffer.byteLength(JSON.stringify(value)),
): StoredMeta {
  const base: StoredMeta = { key, kind: "other", bytes };
  if (expires !== undefined) base.expires = expires;
  const parts = parseEntryKey(key);
  if (parts === undefined) {
    if (parseRunKey(key) !== undefined) base.kind = "run";
    return base;
  }
  let entry: ReturnType<typeof validateEntry>;
  try {
    // Shallow: a store's values are JSON by contract (validateEntry's own note).
    entry = validateEntry(value, key, { deep: false });
  } catch (error) {
    return { ...base, kind: "problem", problem: firstLine(error) };
  }
  if (entry.id !== parts.id || entry.meta.occurrence !== parts.occurrence) {
    return {
      ...base,
      kind: "problem",
      problem: `${key}: the entry says id ${entry.id.slice(0, 12)} occurrence ${entry.meta.occurrence}, the key says otherwise; delete it or re-record`,
    };
  }
  // cast: read the manifest's members by name (an interface has no index signature); the entry was validated above.
  const manifest = entry.manifest as unknown as Record<string, unknown>;
  const meta: StoredMeta = {
    ...base,
    kind: "entry",
    namespace: parts.namespace,
    id: parts.id,
    occurrence: parts.occurrence,
    role: String(manifest.role ?? ""),
    task: String(manifest.task ?? ""),
    attempt: entry.manifest.attempt,
    recordedAt: entry.meta.recordedAt,
    durationMs: entry.meta.durationMs,
  };
  // The kind, through identity's kind table: a tool call names its tool, a model call its model.
  const toolCall = asToolManifest(entry.manifest);
  if (toolCall !== undefined) {
    const tool: NonNullable<StoredMeta["tool"]> = {
      name: String(toolCall.name),
      version: Number((toolCall as { version?: unknown }).version ?? 1),
    };
    if (typeof toolCall.server === "string" && toolCall.server !== "")
      tool.server = toolCall.server;
    meta.tool = tool;
  } else meta.model = String(manifest.model);
  if (entry.meta.verdict !== undefined) meta.verdict = entry.meta.verdict.verdict;
  // The usage the recorder stored with the entry (it has since usage was
  // kept): the store does not read provider response shapes (that is
  // src/usage, above it). A hand-written entry without it counts no tokens here.
  const usage = entry.meta.usage;
  if (usage !== undefined) meta.usage = usage;
  return meta;
}

/** Whether a row is live at `now` (its ttl, if any, has not passed: keyv's rule). */
export function metaIsLive(meta: StoredMeta, now = Date.now()): boolean {
  return meta.expires === undefined || now <= meta.expires;
}

/** The stored text of `meta` (the key is the row's own, not repeated). */
export function encodeMeta(meta: StoredMeta): string {
  const { key: _key, ...rest } = meta;
  return JSON.stringify({ mv: META_VERSION, ...rest });
}

/** `meta` read back from its stored text under `key`; undefined when written under another layout. */
export function decodeMeta(key: string, text: string): StoredMeta | undefined {
  const parsed = JSON.parse(text) as Record<string, unknown>;
  if (parsed.mv !== META_VERSION) return undefined;
  const { mv: _mv, ...rest } = parsed;
  return { key, ...(rest as Omit<StoredMeta, "key">) };
}

/**
 * Whether `meta` passes `query`'s filters (not its order or paging).
 *
 * @example
 * metaMatches(meta, { prefix: "default:", recordedBefore: "2026-01-01" })
 */
export function metaMatches(meta: StoredMeta, query: MetaQuery): boolean {
  if (query.prefix !== undefined && !meta.key.startsWith(query.prefix)) return false;
  const entriesOnly = query.entriesOnly === true || query.recordedBefore !== undefined;
  if (entriesOnly && meta.kind !== "entry") return false;
  // The time orders hold entries, and problems first (no recording time: "").
  const timed = query.order !== undefined && query.order !== "key";
  if (timed && meta.kind !== "entry" && meta.kind !== "problem") return false;
  if (query.recordedBefore !== undefined && !(meta.recordedAt! < query.recordedBefore))
    return false;
  return true;
}

/** Compare two rows in `order` (binary key order, recordedAt then key). */
export function compareMeta(
  a: { key: string; recordedAt?: string },
  b: { key: string; recordedAt?: string },
  order: MetaQuery["order"] = "key",
): number {
  const bin = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  // Binary (UTF-16 code unit) order agrees with the SQL stores' byte order for the keys we write.
  const c =
    order === "key"
      ? bin(a.key, b.key)
      : bin(a.recordedAt ?? "", b.recordedAt ?? "") || bin(a.key, b.key);
  return order === "recordedAtDesc" ? -c : c;
}

/**
 * `listMeta` for a store that keeps no metadata: computed from `list`
 * (memory, cassette), sorted in memory. Right for stores that hold
 * everything in memory anyway; never used for the database backends.
 *
 * @example
 * for await (const m of metaFromValues(store.list(""), { order: "recordedAtDesc", limit: 50 })) …
 */
export async function* metaFromValues(
  rows: AsyncIterable<[string, JsonValue]>,
  query: MetaQuery,
): AsyncIterable<StoredMeta> {
  const out: StoredMeta[] = [];
  for await (const [key, value] of rows) {
    const meta = storedMetaOf(key, value);
    if (!metaMatches(meta, query)) continue;
    if (query.after !== undefined && compareMeta(meta, query.after, query.order) <= 0) continue;
    out.push(meta);
  }
  out.sort((a, b) => compareMeta(a, b, query.order));
  yield* query.limit === undefined ? out : out.slice(0, query.limit);
}

/**
 * Check a `MetaQuery` (every store, before it reaches the backend).
 *
 * @throws TypeError / RangeError naming the field.
 */
export function checkMetaQuery(query: MetaQuery): void {
  if (typeof query !== "object" || query === null) throw new TypeError("query must be an object");
  if (query.prefix !== undefined && typeof query.prefix !== "string")
    throw new TypeError("query.prefix must be a string");
  if (query.order !== undefined && !["key", "recordedAt", "recordedAtDesc"].includes(query.order))
    throw new TypeError(`query.order must be "key", "recordedAt" or "recordedAtDesc"`);
  if (query.recordedBefore !== undefined && typeof query.recordedBefore !== "string")
    throw new TypeError("query.recordedBefore must be an ISO time string");
  if (query.limit !== undefined && (!Number.isSafeInteger(query.limit) || query.limit < 1))
    throw new RangeError("query.limit must be an integer >= 1");
  if (query.after !== undefined && typeof query.after?.key !== "string")
    throw new TypeError("query.after.key must be a string");
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split("\n")[0] ?? "";
}
