/**
 * Tokens, dollars and model time of recorded entries, for the viewer's
 * pages: what each recording cost when it was made, and so what every
 * replay of it saves. Counted the way `invocache stats` counts (the usage
 * stored with the entry, else read from its response; dollars from the
 * same price table, src/usage), never a made-up figure: usage without a
 * known price is "price unknown".
 */

import { callKindNamed } from "../identity/internal.js";
import { costOf, emptyTally, type Spend, type Usage } from "../usage/index.js";
import type { EntrySummary, RunRecord } from "./summary.js";

/** What a set of recordings cost, with their model time. */
export type Recorded = Spend & { ms: number; entries: number };

/** A run's accounts: what its recorded calls spent, what its replayed calls saved. */
export interface RunSpend {
  spent: Recorded;
  saved: Recorded;
}

function recorded(): Recorded {
  return { ...emptyTally().spent, ms: 0, entries: 0 };
}

/**
 * The cost of `entries`. Tokens are summed per priced model first and each
 * sum priced once: one table lookup per model, not per entry, so a page over
 * a large store stays cheap (prices are per token, so the sum is the same).
 *
 * @example
 * spendOf(snap.entries) // { inputTokens, outputTokens, usd, unpriced, noUsage, ms, entries }
 */
export function spendOf(entries: Iterable<EntrySummary>): Recorded {
  const tally = new SpendTally();
  for (const e of entries) tally.add(e);
  return tally.done();
}

/**
 * {@link spendOf} one entry at a time: what a pass over a store's stored
 * metadata sums without holding the entries (src/viewer/meta-catalog.ts).
 */
export class SpendTally {
  readonly #out = recorded();
  readonly #groups = new Map<string, { model: string; usage: Usage; calls: number }>();

  add(e: Pick<EntrySummary, "durationMs" | "usage" | "kind" | "model">): void {
    this.addMany(1, e.durationMs, e);
  }

  /**
   * `entries` entries of one model and kind at once, whose model time sums
   * to `ms` and whose usage, when they have one, sums to `e.usage` (a group
   * of `Store.statsMeta`'s sums): what {@link add} of each would count.
   */
  addMany(entries: number, ms: number, e: Pick<EntrySummary, "usage" | "kind" | "model">): void {
    const out = this.#out;
    out.entries += entries;
    out.ms += ms;
    const u = e.usage;
    if (u === undefined) {
      if (callKindNamed(e.kind).priced) out.noUsage += entries;
      return;
    }
    out.inputTokens += u.inputTokens;
    out.outputTokens += u.outputTokens;
    const key = `${e.model}\u0000${u.model ?? ""}\u0000${u.shape}`;
    const g = this.#groups.get(key);
    if (g === undefined) this.#groups.set(key, { model: e.model, usage: { ...u }, calls: entries });
    else {
      g.calls += entries;
      g.usage.inputTokens += u.inputTokens;
      g.usage.outputTokens += u.outputTokens;
      if (u.cacheReadTokens !== undefined)
        g.usage.cacheReadTokens = (g.usage.cacheReadTokens ?? 0) + u.cacheReadTokens;
      if (u.cacheWriteTokens !== undefined)
        g.usage.cacheWriteTokens = (g.usage.cacheWriteTokens ?? 0) + u.cacheWriteTokens;
    }
  }

  /** The sums so far, priced. */
  done(): Recorded {
    const out = { ...this.#out };
    for (const g of this.#groups.values()) {
      const cost = costOf(g.model, g.usage);
      if (cost === undefined) out.unpriced += g.calls;
      else out.usd += cost.usd;
    }
    return out;
  }
}

/**
 * A run's calls split by how they were served: the recorded ones cost what
 * their recordings cost (spent), the replayed ones saved it. Calls whose
 * entry is not in this source count in neither.
 */
export function runSpend(
  run: RunRecord,
  entryOf: (call: RunRecord["calls"][number]) => EntrySummary | undefined,
): RunSpend {
  const spent: EntrySummary[] = [];
  const saved: EntrySummary[] = [];
  for (const c of run.calls) {
    const e = entryOf(c);
    if (e === undefined) continue;
    if (c.served === "hit") saved.push(e);
    else if (c.served === "recorded") spent.push(e);
  }
  return { spent: spendOf(spent), saved: spendOf(saved) };
}
