/**
 * Lookups the entry page needs, built once per catalog snapshot so a page
 * of a 100,000-entry store does not scan every entry and run: entries by
 * identity, and the runs that served each `namespace:id:occurrence`.
 */
import type { CatalogSnapshot, EntrySummary, RunRecord } from "./catalog.js";

interface SnapshotIndex {
  byId: Map<string, EntrySummary[]>;
  runsByCall: Map<string, RunRecord[]>;
}

const cache = new WeakMap<CatalogSnapshot, SnapshotIndex>();

function build(snap: CatalogSnapshot): SnapshotIndex {
  const byId = new Map<string, EntrySummary[]>();
  for (const e of snap.entries) {
    const list = byId.get(e.id);
    if (list === undefined) byId.set(e.id, [e]);
    else list.push(e);
  }
  const runsByCall = new Map<string, RunRecord[]>();
  for (const r of snap.runs) {
    for (const c of r.calls) {
      const k = `${r.namespace}:${c.id}:${c.occurrence}`;
      const list = runsByCall.get(k);
      if (list === undefined) runsByCall.set(k, [r]);
      else if (!list.includes(r)) list.push(r);
    }
  }
  return { byId, runsByCall };
}

function index(snap: CatalogSnapshot): SnapshotIndex {
  let i = cache.get(snap);
  if (i === undefined) {
    i = build(snap);
    cache.set(snap, i);
  }
  return i;
}

/** Every recording of identity `id` (all namespaces and occurrences). */
export function entriesWithId(snap: CatalogSnapshot, id: string): EntrySummary[] {
  return index(snap).byId.get(id) ?? [];
}

/** The stored runs that served occurrence `occurrence` of `id` in `namespace`. */
export function runsServing(
  snap: CatalogSnapshot,
  namespace: string,
  id: string,
  occurrence: number,
): RunRecord[] {
  return index(snap).runsByCall.get(`${namespace}:${id}:${occurrence}`) ?? [];
}

/**
 * Search structures, built once per snapshot: ids sorted for a binary
 * search by prefix, and every entry's search text in one string (with the
 * offset where each starts), so a text search is a run of `indexOf` over
 * contiguous memory instead of a walk over 100,000 objects.
 */
interface SearchIndex {
  sortedIds: string[];
  /** Entry index of each sortedIds element. */
  sortedAt: Int32Array;
  hay: string;
  starts: Int32Array;
}

const searchCache = new WeakMap<CatalogSnapshot, SearchIndex>();

function searchIndex(snap: CatalogSnapshot): SearchIndex {
  const cached = searchCache.get(snap);
  if (cached !== undefined) return cached;
  const n = snap.entries.length;
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => {
    const x = snap.entries[a]!.id;
    const y = snap.entries[b]!.id;
    return x < y ? -1 : x > y ? 1 : a - b;
  });
  const starts = new Int32Array(n);
  let at = 0;
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = snap.entries[i]!.text.replaceAll("\u0000", " ");
    starts[i] = at;
    parts.push(t);
    at += t.length + 1;
  }
  const out = {
    sortedIds: order.map((i) => snap.entries[i]!.id),
    sortedAt: Int32Array.from(order),
    hay: parts.join("\u0000"),
    starts,
  };
  searchCache.set(snap, out);
  return out;
}

/** Indexes (into `snap.entries`, ascending: newest first) of entries whose id starts with `prefix`. */
export function idPrefixMatches(snap: CatalogSnapshot, prefix: string): number[] {
  const { sortedIds, sortedAt } = searchIndex(snap);
  let lo = 0;
  let hi = sortedIds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sortedIds[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  const out: number[] = [];
  for (let i = lo; i < sortedIds.length && sortedIds[i]!.startsWith(prefix); i++)
    out.push(sortedAt[i]!);
  return out.sort((a, b) => a - b);
}

/** Indexes (ascending) of entries whose search text contains `needle` (lowercase). */
export function textMatches(snap: CatalogSnapshot, needle: string): number[] {
  const { hay, starts } = searchIndex(snap);
  const out: number[] = [];
  if (needle === "" || needle.includes("\u0000")) return out;
  let pos = 0;
  for (;;) {
    const at = hay.indexOf(needle, pos);
    if (at < 0) break;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    out.push(lo);
    pos = lo + 1 < starts.length ? starts[lo + 1]! : hay.length;
  }
  return out;
}
