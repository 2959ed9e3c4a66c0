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
