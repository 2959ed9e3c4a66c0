/**
 * What each normalization table changed from the one before, as far as a
 * stored entry is concerned: `invocache rekey --renormalize` decides from it
 * which entries recorded under an older table (`meta.normalization`) still
 * hold under the current one, and which would need their raw prompt.
 *
 * A stored prompt is the old table's output; the raw text is gone. So:
 *
 * - Where the newer table templates *more*, the stored text could be
 *   normalized again exactly. No table so far does (table 2 only templates
 *   less), so nothing here re-normalizes text; a table that templates more
 *   must add that step, and the test of this file fails until its version
 *   is described here.
 * - Where the newer table *keeps* what the older one templated, a stored
 *   text that holds the older table's placeholder may stand for a value the
 *   new table keeps: only the raw prompt could tell, so such an entry is
 *   listed to re-record, never guessed. An entry with none of those
 *   placeholders normalizes the same under both tables: its identity stands.
 */

import { callKind } from "../../identity/internal.js";
import { NORMALIZATION_VERSION } from "../../normalize/index.js";
import type { EntryRecord } from "../source.js";

/** What table `version` keeps that table `version - 1` templated. */
interface Narrowed {
  /** Placeholders the older table wrote for text the newer one may keep. */
  tokens: readonly string[];
  /** Whether whitespace inside fenced code (``` or ~~~) is kept now (the older table collapsed it). */
  fences: boolean;
  /** For the re-record list. */
  why: string;
}

/** Every table after the first, by version (docs/normalization.md, "Versioning"). */
export const TABLE_HISTORY: Readonly<Record<number, Narrowed>> = {
  2: {
    tokens: ["{timestamp}", "{uuid}"],
    fences: true,
    why: "table 2 keeps some datetimes, epoch millis and 32-hex values that table 1 templated, and the lines of fenced code",
  },
};

/** What `--renormalize` does with one entry. */
export type Renormalized =
  /** Recorded under the current table already. */
  | { kind: "current" }
  /** Holds under the current table: same identity, `meta.normalization` becomes `normalization`. */
  | { kind: "holds"; normalization: number }
  /** Needs its raw prompt: re-record it. */
  | { kind: "re-record"; why: string };

/** Decide for one entry. */
export function renormalize(r: EntryRecord): Renormalized {
  const from = r.entry.meta.normalization;
  if (from >= NORMALIZATION_VERSION) return { kind: "current" };
  // The texts the table wrote, by the entry's kind (identity's kind table).
  const texts = callKind(r.entry.manifest).normalizedTexts(r.entry.manifest);
  for (let v = from + 1; v <= NORMALIZATION_VERSION; v++) {
    const step = TABLE_HISTORY[v];
    if (step === undefined) {
      return {
        kind: "re-record",
        why: `no record of what table ${v} changed, so table ${from} output cannot be checked`,
      };
    }
    const token = step.tokens.find((t) => texts.some((x) => x.includes(t)));
    if (token !== undefined) return { kind: "re-record", why: `${token}: ${step.why}` };
    if (step.fences && texts.some((x) => x.includes("```") || x.includes("~~~"))) {
      return { kind: "re-record", why: `fenced code: ${step.why}` };
    }
  }
  return { kind: "holds", normalization: NORMALIZATION_VERSION };
}
