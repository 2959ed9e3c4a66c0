/**
 * Accounting: once a call is answered or has failed, what it spent or saved
 * goes into the savings accounts (`recorder.stats`, src/usage/summary.ts),
 * its `call` event is emitted and its span ends. It only reads what the
 * pipeline returned (the Answer) and the call's facts; it decides nothing.
 */
import { callKind } from "../identity/internal.js";
import type { CallSpan } from "../observability/index.js";
import {
  addToAccounts,
  type CallSummary,
  priceCall,
  priceTableLoaded,
  readUsage,
  settleAccounts,
  type Usage,
} from "../usage/index.js";
import type { Answer, CallContext, Core } from "./core.js";
import type { RunInfo } from "./run-scope.js";

/**
 * Account for one call: `answer` when it was answered, else the `error` it
 * failed with. `started` is `performance.now()` when it entered the recorder.
 */
export function endCall(
  core: Core,
  c: CallContext,
  started: number,
  span: CallSpan | undefined,
  answer: Answer | undefined,
  error?: unknown,
): void {
  const upstream = c.facts.upstream;
  // A response the recorder did not store (incomplete, too large, live, verify)
  // still cost what it reports.
  const usage =
    answer === undefined
      ? undefined
      : (answer.usage ?? (upstream ? liveUsage(core, c, answer) : undefined));
  const runIds = runIdsOf(c.scope);
  // The call's cost is read now only by its event and its span. Until the
  // price table is loaded, a call nobody reads the cost of is priced when the
  // accounts are read (`recorder.stats`), so no answer waits for the table
  // to load; once loaded, pricing is a memoized lookup and is done at once
  // (a call kept for later would outlive the young generation). Priced now,
  // the calls kept before it go first.
  const priceNow = span !== undefined || core.events.listening("call") || priceTableLoaded();
  if (priceNow) settleAccounts(core.stats);
  const m = c.manifest;
  const model = callKind(m).model(m);
  const cost = priceNow ? priceCall(model, usage) : undefined;
  const summary: CallSummary = {
    id: c.id,
    occurrence: c.occurrence,
    attempt: m.attempt,
    role: m.role,
    model,
    namespace: core.namespace,
    mode: core.mode,
    runIds,
    outcome:
      answer === undefined ? "error" : answer.hit ? "hit" : answer.recorded ? "recorded" : "live",
    shared: answer?.shared === true,
    missed: c.facts.missed,
    upstream,
    modelMs: answer?.durationMs ?? 0,
    elapsedMs: Math.round((performance.now() - started) * 1000) / 1000,
  };
  // Set, not spread in: no temporary object per call.
  if (usage !== undefined) summary.usage = usage;
  if (cost !== undefined) summary.cost = cost;
  addToAccounts(core.stats, summary, !priceNow);
  if (core.events.listening("call")) core.events.emit("call", summary);
  span?.end(summary, {
    verdict: answer?.verdict,
    divergence: answer?.divergence,
    bypass: answer?.bypass,
    ...(error === undefined ? {} : { error }),
  });
}

/**
 * The usage a live answer reports. Usage is metadata: a block with an
 * implausible count (non-finite, negative, fractional, above
 * USAGE_TOKEN_LIMIT) is dropped whole, with a `warning` event, and the
 * answer stays returned and recorded (the entry was built without it), so
 * the sums stay exact and a paid answer is never lost to its bookkeeping.
 */
function liveUsage(core: Core, c: CallContext, answer: Answer): Usage | undefined {
  const reading = readUsage(answer.value);
  if (reading.implausible !== undefined) {
    core.failOpen.warn(
      `invocache: the response to ${c.id.slice(0, 12)} reports ${reading.implausible}; the answer was returned${answer.recorded === true ? " and recorded" : ""} without usage, so stats count it as "no usage reported"`,
      undefined,
      c.id,
    );
  }
  return reading.usage;
}

/** A call outside every run belongs to none (one shared, frozen list). */
const NO_RUNS: readonly string[] = Object.freeze([]);

/** The runs a call belongs to, innermost first. */
function runIdsOf(scope: RunInfo | undefined): readonly string[] {
  if (scope === undefined) return NO_RUNS;
  const runIds: string[] = [];
  for (let s: RunInfo | undefined = scope; s !== undefined; s = s.parent) runIds.push(s.runId);
  return runIds;
}
