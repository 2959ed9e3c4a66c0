/**
 * Mode policy: what each mode does with a call (docs/recorder.md, "Modes").
 * A call is answered by the mode of its kind (model or tool, kind-modes.ts).
 *
 * - passthrough: call upstream; neither read nor write.
 * - record: call upstream and (re)write, sharing in-process identical calls.
 * - verify: call upstream and compare with the recording; write nothing.
 * - replay: serve the recording; a miss is a `ReplayMissError`.
 * - auto: serve the recording; record a miss under the cross-process lease.
 * - once: replay or auto, decided per recorder before the call reaches here (once.ts).
 *
 * Before any of these, a tool call with side effects in auto mode on a
 * shared store runs live and unstored (tool-policy.ts).
 */
import { requestRulesFired } from "../identity/index.js";
import { asModelManifest, asToolManifest, callKindNamed } from "../identity/internal.js";
import type { Answer, CallContext, Core } from "./core.js";
import type { ReplayMissError } from "./errors.js";
import type { InvocationKind } from "./kind-modes.js";
import { recordUnderLease } from "./lease.js";
import { countMiss, lookup } from "./lookup.js";
import { appendMiss } from "./miss-log.js";
import { type MissContext, missError } from "./miss-report.js";
import { recordLive } from "./record.js";
import { bypass, type SingleFlight } from "./single-flight.js";
import { toolMissError } from "./tool-miss.js";
import { sideEffectBypass } from "./tool-policy.js";
import { verifyCall } from "./verify.js";

/**
 * Answer one call as the recorder's mode says. Not an async function: a hit
 * resolves with `replayOrRecord`'s own promise, not through another layer.
 */
export function answerByMode(core: Core, flights: SingleFlight, c: CallContext): Promise<Answer> {
  const spec = callKindNamed(c.kind);
  if (spec.sideEffects) {
    // Never replay "send the email" from a shared cache (tool-policy.ts).
    const reason = sideEffectBypass(spec.callee(c.manifest), c.mode, core.store.url, c.opts.tool);
    if (reason !== undefined) return uncached(core, c, reason);
  }
  switch (c.mode) {
    case "passthrough":
      return bypass(core, c, "passthrough mode");
    case "record":
      return record(core, flights, c);
    case "verify":
      return verifyCall(core, c);
    case "replay":
    case "auto":
    case "once": // never seen here: recorder.call settles it to replay or auto first (once.ts)
      return replayOrRecord(core, flights, c);
  }
}

/** A tool call with side effects: called live and not stored, yet it counts in the run. */
async function uncached(core: Core, c: CallContext, reason: string): Promise<Answer> {
  const answer = await bypass(core, c, reason);
  return answer.live === true ? answer : { ...answer, uncached: true };
}

async function record(core: Core, flights: SingleFlight, c: CallContext): Promise<Answer> {
  // Record mode does not read, but a cassette that cannot be loaded is
  // a fixture error to show before a paid call, not after it.
  await core.failOpen.peek(c.key);
  return flights.run(core, c, () => recordLive(core, c));
}

async function replayOrRecord(core: Core, flights: SingleFlight, c: CallContext): Promise<Answer> {
  const found = await lookup(core, c);
  if (typeof found === "object") return found;
  if (c.mode === "replay") {
    countMiss(core, c);
    // Kept for `invocache view` (bounded, never fails the call: appendMiss swallows errors).
    if (core.missLog !== undefined)
      await appendMiss(core.missLog, {
        at: new Date().toISOString(),
        id: c.id,
        occurrence: c.occurrence,
        key: c.key,
        mode: c.mode,
        store: core.store.url,
        manifest: c.manifest,
      });
    throw await missErrorOf(core, c);
  }
  return flights.run(core, c, () => {
    countMiss(core, c);
    if (found === "store-down") return bypass(core, c, "store unavailable");
    return recordUnderLease(core, c);
  });
}

/**
 * The miss error of a replayed call, by its kind: a model miss ranks the
 * recordings by what differs (miss-report.ts); a tool miss names the tool
 * and its recordings (tool-miss.ts). Both explain through identity's
 * `explainIdentity`.
 */
function missErrorOf(core: Core, c: CallContext): Promise<ReplayMissError> {
  const ctx = {
    store: core.store,
    namespace: core.namespace,
    id: c.id,
    occurrence: c.occurrence,
    mode: c.mode,
    rerecord: core.opts.rerecordHint,
    loggedTo: core.missLog,
  };
  return MISS_REPORTS[c.kind](ctx, c);
}

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
