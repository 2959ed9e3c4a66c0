/**
 * The replay-miss step (docs/recorder.md, "The call pipeline"): in `replay`
 * mode a miss is an error, never a call upstream. It is a `miss` event, a
 * line in the miss log (kept for `invocache view`), and a `ReplayMissError`
 * that explains it by the call's kind: a model miss ranks the recordings by
 * what differs (miss-report.ts); a tool miss names the tool and its
 * recordings (tool-miss.ts). Both explain through identity's
 * `explainIdentity`.
 */
import { requestRulesFired } from "../identity/index.js";
import { asModelManifest, asToolManifest } from "../identity/internal.js";
import { countMiss } from "./call-events.js";
import type { CallContext, Core } from "./core.js";
import type { ReplayMissError } from "./errors.js";
import type { InvocationKind } from "./kind-modes.js";
import { appendMiss } from "./miss-log.js";
import { type MissContext, missError } from "./miss-report.js";
import { toolMissError } from "./tool-miss.js";

/** What a replay miss reads: the store and namespace to explain it, the miss log, the rerecord hint. */
export type ReplayMissDeps = Pick<Core, "store" | "namespace" | "events" | "opts" | "missLog">;

/** Report a replay miss (event, miss log) and make its error; the pipeline throws it. */
export async function replayMiss(deps: ReplayMissDeps, c: CallContext): Promise<ReplayMissError> {
  countMiss(deps, c);
  // Kept for `invocache view` (bounded, never fails the call: appendMiss swallows errors).
  if (deps.missLog !== undefined)
    await appendMiss(deps.missLog, {
      at: new Date().toISOString(),
      id: c.id,
      occurrence: c.occurrence,
      key: c.key,
      mode: c.mode,
      store: deps.store.url,
      manifest: c.manifest,
    });
  const ctx = {
    store: deps.store,
    namespace: deps.namespace,
    id: c.id,
    occurrence: c.occurrence,
    mode: c.mode,
    rerecord: deps.opts.rerecordHint,
    loggedTo: deps.missLog,
  };
  return MISS_REPORTS[c.kind](ctx, c);
}

/** The miss error of each kind of call. */
const MISS_REPORTS: {
  readonly [K in InvocationKind]: (
    ctx: Omit<MissContext, "manifest" | "rulesFired" | "inRun">,
    c: CallContext,
  ) => Promise<ReplayMissError>;
} = {
  model: (ctx, c) =>
    missError({
      ...ctx,
      manifest: asModelManifest(c.manifest)!,
      rulesFired: requestRulesFired(c.req, c.identityOpts),
      inRun: c.scope !== undefined,
    }),
  tool: (ctx, c) => toolMissError({ ...ctx, manifest: asToolManifest(c.manifest)! }),
};
