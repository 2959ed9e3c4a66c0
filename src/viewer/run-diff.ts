/**
 * Where two runs diverge: the one comparison behind `invocache diff` and the
 * viewer's "compare runs". Two runs asked the same questions in the same
 * order when their calls have the same identities and occurrences, step by
 * step. Otherwise the first step that differs is named, with why (the
 * field-by-field explanation `invocache explain` gives, from the two
 * recorded manifests), and every step is listed side by side with how it was
 * served, its attempt and its verdict.
 */

import { kindOf } from "../identity/internal.js";
import type { Entry } from "../store/index.js";
import { manifestDiffs } from "./views/diff.js";

/** A run record as both readers hold it. */
export interface RunTrajectory {
  namespace: string;
  runId: string;
  contentHash: string;
  /** Per call, in order; `served` is undefined in records written before invocache stored it. */
  calls: ReadonlyArray<{ id: string; occurrence: number; served?: string | undefined }>;
  verdicts: ReadonlyArray<{ id: string; occurrence: number; verdict: string }>;
}

/** One side of a step. */
export interface StepSide {
  id: string;
  occurrence: number;
  /** `<namespace>:e:<id>:<occurrence>`. */
  key: string;
  /** "model" or "tool"; null when the entry is not in the source (pruned). */
  kind: "model" | "tool" | null;
  role: string | null;
  attempt: number | null;
  /** "hit", "recorded", "live"; null in an older run record. */
  served: string | null;
  /** "accepted", "rejected"; null when none was given. */
  verdict: string | null;
}

/** One differing manifest field at the first differing step. */
export interface StepWhy {
  field: string;
  summary: string;
  /** A word diff of prompt or task (`[-removed-]{+added+}`). */
  diff?: string;
}

/** The comparison of two runs: the `--json` of `invocache diff` (docs/cli.md). */
export interface RunDiff {
  a: { namespace: string; runId: string; contentHash: string; steps: number };
  b: { namespace: string; runId: string; contentHash: string; steps: number };
  /** True when both runs made the same calls (identity and occurrence) in the same order. */
  same: boolean;
  /** The first differing step, 1-based; null when the runs are the same. */
  divergedAt: number | null;
  /**
   * Why that step differs: the manifest fields, as `invocache explain` names
   * them; empty when one run has no step there or an entry is gone (see `note`).
   */
  why: StepWhy[];
  /** Set when the fields cannot be compared: one run ended earlier, or an entry is not in the source. */
  note: string | null;
  /** Every step, side by side; `same` per step. A side is null past the end of its run. */
  steps: Array<{ step: number; same: boolean; a: StepSide | null; b: StepSide | null }>;
}

/**
 * Compare run `a` with run `b`. `entryOf` reads an entry by key (undefined
 * when it is not there); it is asked once per step of each run.
 *
 * @example
 * const d = await diffRuns(runA, runB, (key) => catalog.entry(key));
 * d.divergedAt; // 1
 * d.why[0]?.field; // "prompt"
 */
export async function diffRuns(
  a: RunTrajectory,
  b: RunTrajectory,
  entryOf: (key: string) => Promise<Entry | undefined>,
): Promise<RunDiff> {
  const [sa, sb] = await Promise.all([sides(a, entryOf), sides(b, entryOf)]);
  const n = Math.max(sa.length, sb.length);
  const steps: RunDiff["steps"] = [];
  let divergedAt: number | null = null;
  for (let i = 0; i < n; i++) {
    const x = sa[i]?.side ?? null;
    const y = sb[i]?.side ?? null;
    const same = x !== null && y !== null && x.id === y.id && x.occurrence === y.occurrence;
    if (!same && divergedAt === null) divergedAt = i + 1;
    steps.push({ step: i + 1, same, a: x, b: y });
  }
  let why: StepWhy[] = [];
  let note: string | null = null;
  if (divergedAt !== null) {
    const x = sa[divergedAt - 1];
    const y = sb[divergedAt - 1];
    if (x === undefined || y === undefined) {
      const ended = x === undefined ? a : b;
      note = `run ${ended.runId} has no step ${divergedAt}: it made ${x === undefined ? sa.length : sb.length} calls`;
    } else if (x.entry === undefined || y.entry === undefined) {
      const gone = x.entry === undefined ? x.side.key : y.side.key;
      note = `${gone} is not in the source (pruned?): its manifest cannot be compared`;
    } else {
      why = manifestDiffs(x.entry.manifest, y.entry.manifest).map((d) => ({
        field: d.field,
        summary: d.summary,
        ...(d.diff === undefined ? {} : { diff: d.diff }),
      }));
      // Same manifest, other identity or occurrence: the occurrence (a repeat in the run) differs.
      if (why.length === 0) {
        why = [
          {
            field: "occurrence",
            summary: `occurrence: ${x.side.occurrence} → ${y.side.occurrence}`,
          },
        ];
      }
    }
  }
  const head = (r: RunTrajectory, s: unknown[]) => ({
    namespace: r.namespace,
    runId: r.runId,
    contentHash: r.contentHash,
    steps: s.length,
  });
  return {
    a: head(a, sa),
    b: head(b, sb),
    same: divergedAt === null,
    divergedAt,
    why,
    note,
    steps,
  };
}

async function sides(
  run: RunTrajectory,
  entryOf: (key: string) => Promise<Entry | undefined>,
): Promise<Array<{ side: StepSide; entry: Entry | undefined }>> {
  // The last verdict given on a call is its verdict.
  const verdicts = new Map(run.verdicts.map((v) => [`${v.id}:${v.occurrence}`, v.verdict]));
  return Promise.all(
    run.calls.map(async (c) => {
      const key = `${run.namespace}:e:${c.id}:${c.occurrence}`;
      const entry = await entryOf(key);
      const m = entry?.manifest as (Entry["manifest"] & { kind?: string }) | undefined;
      const side: StepSide = {
        id: c.id,
        occurrence: c.occurrence,
        key,
        kind: m === undefined ? null : kindOf(m),
        role: m?.role ?? null,
        attempt: m?.attempt ?? null,
        served: c.served ?? null,
        verdict: verdicts.get(`${c.id}:${c.occurrence}`) ?? entry?.meta.verdict?.verdict ?? null,
      };
      return { side, entry };
    }),
  );
}
