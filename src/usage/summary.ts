/**
 * Savings accounting: what calls spent (tokens and dollars that went
 * upstream) and what hits saved (the tokens, dollars and model time their
 * recordings cost), overall and by run, role, model and namespace. Built
 * only from the recorder's `call` events, so a recorder, a test reporter
 * and `invocache stats` count the same way.
 */
import { type Cost, costOf, PRICE_SNAPSHOT, type PriceSnapshot } from "./cost.js";
import type { Usage } from "./extract.js";

/** Tokens and dollars of a set of calls. */
export interface Spend {
  inputTokens: number;
  outputTokens: number;
  /** Dollars, for the calls whose model has a known price. */
  usd: number;
  /** Calls with usage but no known price ("price unknown"): their tokens count, their dollars do not. */
  unpriced: number;
  /** Calls whose response reported no usage in a shape invocache reads. */
  noUsage: number;
}

/** Counters of a set of calls. */
export interface Tally {
  calls: number;
  /** Served without going upstream: replayed, or shared from a concurrent identical call (single-flight follower). */
  hits: number;
  /** Looked up and not found. */
  misses: number;
  /** Calls that reached the model. */
  upstreamCalls: number;
  /** What the upstream calls cost. */
  spent: Spend;
  /** What the hits' recordings cost, not spent again; `ms` is model time not waited for. */
  saved: Spend & { ms: number };
}

/** A {@link Tally} with the same by run, role, model and namespace. */
export interface Accounts extends Tally {
  byRun: Record<string, Tally>;
  byRole: Record<string, Tally>;
  byModel: Record<string, Tally>;
  byNamespace: Record<string, Tally>;
  /** The price table dollars come from. */
  prices: Readonly<PriceSnapshot>;
}

/** One answered (or failed) call, as the recorder reports it in its `call` event. */
export interface CallSummary {
  id: string;
  occurrence: number;
  attempt: number;
  role: string;
  model: string;
  namespace: string;
  mode: string;
  /** The runs the call belongs to, innermost first. */
  runIds: readonly string[];
  /** `hit` (replayed or shared), `recorded`, `live` (went upstream, not stored), `error`. */
  outcome: "hit" | "recorded" | "live" | "error";
  /** A single-flight follower: served the answer of a concurrent identical call. */
  shared: boolean;
  /** Whether it was looked up and not found. */
  missed: boolean;
  /** Whether this call reached the model. */
  upstream: boolean;
  /** Tokens reported by the response (live) or by the recording (hit). */
  usage?: Usage;
  /** The price of `usage`, when the model has one. */
  cost?: Cost;
  /** Model time: of this upstream call, or of the recording a hit replayed (what it saved). */
  modelMs: number;
  /** Wall time of the call through the recorder. */
  elapsedMs: number;
}

function spend(): Spend {
  return { inputTokens: 0, outputTokens: 0, usd: 0, unpriced: 0, noUsage: 0 };
}

/** An empty tally. */
export function emptyTally(): Tally {
  return {
    calls: 0,
    hits: 0,
    misses: 0,
    upstreamCalls: 0,
    spent: spend(),
    saved: { ...spend(), ms: 0 },
  };
}

/** Empty accounts. */
export function emptyAccounts(): Accounts {
  return {
    ...emptyTally(),
    byRun: {},
    byRole: {},
    byModel: {},
    byNamespace: {},
    prices: PRICE_SNAPSHOT,
  };
}

function addSpend(
  s: Spend,
  usage: Usage | undefined,
  cost: Cost | undefined,
  pricedLater: boolean,
): void {
  if (usage === undefined) {
    s.noUsage++;
    return;
  }
  s.inputTokens += usage.inputTokens;
  s.outputTokens += usage.outputTokens;
  if (!pricedLater) addDollars(s, cost);
}

function addDollars(s: Spend, cost: Cost | undefined): void {
  if (cost === undefined) s.unpriced++;
  else s.usd = round(s.usd + cost.usd);
}

/** Dollars to 1e-9 (float sums drift; a nano-dollar is below any price). */
function round(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

/** Add one call to a tally (its dollars later when `pricedLater`: see {@link addToAccounts}). */
export function addToTally(t: Tally, call: CallSummary, pricedLater = false): void {
  t.calls++;
  if (call.outcome === "hit") {
    t.hits++;
    addSpend(t.saved, call.usage, call.cost, pricedLater);
    t.saved.ms = Math.round((t.saved.ms + call.modelMs) * 1000) / 1000;
  }
  if (call.missed) t.misses++;
  if (call.upstream) {
    t.upstreamCalls++;
    if (call.outcome !== "error") addSpend(t.spent, call.usage, call.cost, pricedLater);
  }
}

/** The dollars of a call priced after it was added (`addToTally(…, true)`). */
function addCallDollars(t: Tally, call: CallSummary): void {
  if (call.usage === undefined) return;
  if (call.outcome === "hit") addDollars(t.saved, call.cost);
  if (call.upstream && call.outcome !== "error") addDollars(t.spent, call.cost);
}

function group(groups: Record<string, Tally>, name: string): Tally {
  groups[name] ??= emptyTally();
  return groups[name];
}

/** Runs kept in `byRun`: the most recent ones (a long-lived recorder makes a run id per run). */
export const MAX_RUNS_KEPT = 1000;
const runCounts = new WeakMap<Accounts, number>();

/**
 * Calls added with their usage but not yet priced, per accounts, in call
 * order. Pricing loads the price table (~480 kB of JavaScript: ~100 ms to
 * compile and run here), which a replay's first answer should not wait
 * for: the dollars are added when the accounts are next read
 * ({@link settleAccounts}), in the order the calls came, so every sum is
 * what pricing each call at once gives, to the nano-dollar.
 */
const unpriced = new WeakMap<Accounts, CallSummary[]>();
/**
 * Pending calls at most per accounts; past it every call is priced (which
 * loads the table). High enough that a replay of a few thousand calls whose
 * dollars nobody reads never loads the table: at 256, the 257th answer of a
 * replay waited for the load (~100 ms) and every later one was priced at
 * once. Low enough to bound what is kept: a pending call is its summary, a
 * few hundred bytes, so at most ~2 MB per recorder.
 */
export const MAX_UNPRICED_CALLS = 4096;

/**
 * Add one call to the accounts (overall and in each of its groups).
 * `priceLater`: the call has usage and no cost yet; it is priced by
 * {@link settleAccounts}, which every reader of the dollars calls first.
 */
export function addToAccounts(a: Accounts, call: CallSummary, priceLater = false): void {
  let later = priceLater && call.usage !== undefined && call.cost === undefined;
  if (later) {
    const pending = unpriced.get(a) ?? [];
    // A pending call's dollars go to the groups it was added to: price
    // everything now when this call will drop a run's group (or the queue is full).
    if (pending.length >= MAX_UNPRICED_CALLS || dropsARun(a, call)) {
      settleAccounts(a);
      later = false;
      const cost = priceCall(call.model, call.usage);
      if (cost !== undefined) call.cost = cost;
    } else {
      pending.push(call);
      unpriced.set(a, pending);
    }
  }
  addToTally(a, call, later);
  for (const run of call.runIds) {
    if (!(run in a.byRun)) {
      const n = (runCounts.get(a) ?? 0) + 1;
      runCounts.set(a, n);
      if (n > MAX_RUNS_KEPT) {
        for (const oldest in a.byRun) {
          delete a.byRun[oldest];
          break;
        }
        runCounts.set(a, n - 1);
      }
    }
    addToTally(group(a.byRun, run), call, later);
  }
  addToTally(group(a.byRole, call.role), call, later);
  addToTally(group(a.byModel, call.model), call, later);
  addToTally(group(a.byNamespace, call.namespace), call, later);
}

/** Would adding `call` drop the oldest run's group (more than MAX_RUNS_KEPT runs)? */
function dropsARun(a: Accounts, call: CallSummary): boolean {
  let n = runCounts.get(a) ?? 0;
  for (const run of call.runIds) if (!(run in a.byRun)) n++;
  return n > MAX_RUNS_KEPT;
}

/**
 * Price the calls {@link addToAccounts} added with `priceLater`, in the
 * order they came, and add their dollars (or `unpriced` counts) to every
 * group they were added to. Call before reading the dollars of `a`.
 */
export function settleAccounts(a: Accounts): void {
  const pending = unpriced.get(a);
  if (pending === undefined || pending.length === 0) return;
  unpriced.delete(a);
  for (const call of pending) {
    const cost = priceCall(call.model, call.usage);
    if (cost !== undefined) call.cost = cost;
    addCallDollars(a, call);
    for (const run of call.runIds) {
      const t = a.byRun[run];
      if (t !== undefined) addCallDollars(t, call);
    }
    addCallDollars(group(a.byRole, call.role), call);
    addCallDollars(group(a.byModel, call.model), call);
    addCallDollars(group(a.byNamespace, call.namespace), call);
  }
}

/** The cost of a call's usage, or undefined (no usage, or price unknown). */
export function priceCall(model: string, usage: Usage | undefined): Cost | undefined {
  return usage === undefined ? undefined : costOf(model, usage);
}

/**
 * "1.2k tokens ($0.0031)", "1.2k tokens (price unknown)", or "no usage reported".
 *
 * @example
 * formatSpend({ inputTokens: 900, outputTokens: 300, usd: 0.0031, unpriced: 0, noUsage: 0 })
 */
export function formatSpend(s: Spend): string {
  const tokens = s.inputTokens + s.outputTokens;
  if (tokens === 0 && s.noUsage > 0) return "no usage reported";
  const dollars =
    s.unpriced > 0 && s.usd === 0
      ? "price unknown"
      : `${formatUsd(s.usd)}${s.unpriced > 0 ? ` + ${s.unpriced} unpriced` : ""}`;
  return `${formatTokens(tokens)} tokens (${dollars})`;
}

/** `$0.0123`: four significant digits below a dollar, cents above. */
export function formatUsd(usd: number): string {
  if (usd === 0) return "$0";
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  return `$${Number(usd.toPrecision(3))}`;
}

/** `950`, `12.3k`, `4.5M`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${Number((n / 1000).toPrecision(3))}k`;
  return `${Number((n / 1_000_000).toPrecision(3))}M`;
}
