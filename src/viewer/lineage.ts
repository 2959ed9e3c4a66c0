/**
 * Attempt lineage: which recording a retry retries. The recorder stores
 * `meta.parent`: the identity of the attempt n-1 the run actually served
 * for the same kind, role and task (src/recorder/entry.ts), so the link is
 * followed as stored.
 *
 * Recordings made before the recorder linked what it served stored the
 * identity attempt n-1 would have had with the same prompt; a pipeline that
 * feeds the gate's feedback into the retry's prompt never called that one.
 * For those old recordings only (their parent is not recorded), the viewer
 * falls back to a heuristic: the latest earlier recording of the same
 * namespace, kind, role and task at attempt n-1, and says it guessed.
 */
import type { CatalogSnapshot, EntrySummary } from "./catalog.js";
import { entriesWithId } from "./snapshot-index.js";

/** A retry's parent, and whether it was guessed (an old recording) rather than linked. */
export interface Lineage {
  parent: EntrySummary;
  inferred: boolean;
}

/** The recording `e` retries, and how it was found; undefined for attempt 0 or when none is recorded. */
export function lineageOf(snap: CatalogSnapshot, e: EntrySummary): Lineage | undefined {
  if (e.attempt === 0) return undefined;
  if (e.parent !== undefined) {
    const linked = linkedParent(snap, e, e.parent);
    if (linked !== undefined) return { parent: linked, inferred: false };
  }
  let best: EntrySummary | undefined;
  for (const p of sameStep(snap, e)) {
    if (p.attempt !== e.attempt - 1 || p.recordedAt > e.recordedAt) continue;
    if (best === undefined || p.recordedAt > best.recordedAt) best = p;
  }
  return best === undefined ? undefined : { parent: best, inferred: true };
}

/** The recording `e` retries, if there is one. */
export function retryOf(snap: CatalogSnapshot, e: EntrySummary): EntrySummary | undefined {
  return lineageOf(snap, e)?.parent;
}

/** The recordings that retry `e`. */
export function retriesOf(snap: CatalogSnapshot, e: EntrySummary): EntrySummary[] {
  return sameStep(snap, e).filter((c) => c.attempt === e.attempt + 1 && retryOf(snap, c) === e);
}

/**
 * The recording of identity `parent` in `e`'s namespace (and cassette file):
 * the same occurrence when there is one, else the latest recorded before `e`.
 */
function linkedParent(
  snap: CatalogSnapshot,
  e: EntrySummary,
  parent: string,
): EntrySummary | undefined {
  const same = entriesWithId(snap, parent).filter(
    (p) => p.namespace === e.namespace && p.file === e.file && p.attempt === e.attempt - 1,
  );
  const exact = same.find((p) => p.occurrence === e.occurrence);
  if (exact !== undefined) return exact;
  let best: EntrySummary | undefined;
  for (const p of same) {
    if (p.recordedAt > e.recordedAt) continue;
    if (best === undefined || p.recordedAt > best.recordedAt) best = p;
  }
  return best;
}

// Entries of one (namespace, kind, tool, role, task), built once per snapshot.
const steps = new WeakMap<CatalogSnapshot, Map<string, EntrySummary[]>>();

const stepKey = (x: EntrySummary) =>
  `${x.namespace}\u0000${x.kind}\u0000${x.tool ?? ""}\u0000${x.role}\u0000${x.task}`;

function sameStep(snap: CatalogSnapshot, e: EntrySummary): EntrySummary[] {
  let index = steps.get(snap);
  if (index === undefined) {
    index = new Map();
    for (const x of snap.entries) {
      const k = stepKey(x);
      const list = index.get(k);
      if (list === undefined) index.set(k, [x]);
      else list.push(x);
    }
    steps.set(snap, index);
  }
  return index.get(stepKey(e)) ?? [];
}
