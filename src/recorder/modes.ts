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
import type { ToolManifest } from "../identity/tool-manifest.js";
import type { Answer, CallContext, Core } from "./core.js";
import { recordUnderLease } from "./lease.js";
import { countMiss, lookup } from "./lookup.js";
import { appendMiss } from "./miss-log.js";
import { missError } from "./miss-report.js";
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
  if (c.kind === "tool") {
    // Never replay "send the email" from a shared cache (tool-policy.ts).
    const name = (c.manifest as unknown as ToolManifest).name;
    const reason = sideEffectBypass(name, c.mode, core.store.url, c.opts.tool);
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
    if (c.kind === "tool") {
      // A tool miss names the tool and its nearest recordings.
      throw await toolMissError({
        store: core.store,
        namespace: core.namespace,
        id: c.id,
        occurrence: c.occurrence,
        mode: c.mode,
        manifest: c.manifest as unknown as ToolManifest,
        rerecord: core.opts.rerecordHint,
      });
    }
    throw await missError({
      store: core.store,
      namespace: core.namespace,
      id: c.id,
      occurrence: c.occurrence,
      mode: c.mode,
      manifest: c.manifest,
      rulesFired: requestRulesFired(c.req, c.identityOpts),
      rerecord: core.opts.rerecordHint,
      inRun: c.scope !== undefined,
      loggedTo: core.missLog,
    });
  }
  return flights.run(core, c, () => {
    countMiss(core, c);
    if (found === "store-down") return bypass(core, c, "store unavailable");
    return recordUnderLease(core, c);
  });
}
