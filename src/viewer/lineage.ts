/**
 * Attempt lineage: which recording a retry retries. The recorder stores
 * `meta.parent`, the identity attempt n-1 would have had with the same
 * prompt; a pipeline that feeds the gate's feedback into the retry's
 * prompt (as it should) makes that identity differ from the attempt it
 * actually retried. So: the parent when it is recorded, else the latest
 * earlier recording of the same namespace, role and task at attempt n-1.
 */
import type { CatalogSnapshot, EntrySummary } from "./catalog.js";

/** The recording `e` retries, if there is one. */
export function retryOf(snap: CatalogSnapshot, e: EntrySummary): EntrySummary | undefined {
  if (e.attempt === 0) return undefined;
  if (e.parent !== undefined) {
    const direct = snap.byKey.get(`${e.namespace}:e:${e.parent}:${e.occurrence}`);
    if (direct !== undefined) return direct;
  }
  let best: EntrySummary | undefined;
  for (const p of sameStep(snap, e)) {
    if (p.attempt !== e.attempt - 1 || p.recordedAt > e.recordedAt) continue;
    if (best === undefined || p.recordedAt > best.recordedAt) best = p;
  }
  return best;
}

/** The recordings that retry `e`. */
export function retriesOf(snap: CatalogSnapshot, e: EntrySummary): EntrySummary[] {
  return sameStep(snap, e).filter((c) => c.attempt === e.attempt + 1 && retryOf(snap, c) === e);
}

// Entries of one (namespace, role, task), built once per snapshot.
const steps = new WeakMap<CatalogSnapshot, Map<string, EntrySummary[]>>();

function sameStep(snap: CatalogSnapshot, e: EntrySummary): EntrySummary[] {
  let index = steps.get(snap);
  if (index === undefined) {
    index = new Map();
    for (const x of snap.entries) {
      const k = `${x.namespace}\u0000${x.role}\u0000${x.task}`;
      const list = index.get(k);
      if (list === undefined) index.set(k, [x]);
      else list.push(x);
    }
    steps.set(snap, index);
  }
  return index.get(`${e.namespace}\u0000${e.role}\u0000${e.task}`) ?? [];
}
