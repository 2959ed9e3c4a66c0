/**
 * Mode policy: what each mode does with a call (docs/recorder.md, "Modes").
 *
 * - passthrough: call upstream; neither read nor write.
 * - record: call upstream and (re)write, sharing in-process identical calls.
 * - verify: call upstream and compare with the recording; write nothing.
 * - replay: serve the recording; a miss is a `ReplayMissError`.
 * - auto: serve the recording; record a miss under the cross-process lease.
 */
import { requestRulesFired } from "../identity/index.js";
import type { Answer, CallContext, Core } from "./core.js";
import { recordUnderLease } from "./lease.js";
import { countMiss, lookup } from "./lookup.js";
import { missError } from "./miss-report.js";
import { recordLive } from "./record.js";
import { bypass, type SingleFlight } from "./single-flight.js";
import { verifyCall } from "./verify.js";

/** Answer one call as the recorder's mode says. */
export async function answerByMode(
  core: Core,
  flights: SingleFlight,
  c: CallContext,
): Promise<Answer> {
  switch (core.mode) {
    case "passthrough":
      return bypass(core, c, "passthrough mode");
    case "record":
      // Record mode does not read, but a cassette that cannot be loaded is
      // a fixture error to show before a paid call, not after it.
      await core.failOpen.peek(c.key);
      return flights.run(core, c, () => recordLive(core, c));
    case "verify":
      return verifyCall(core, c);
    case "replay":
    case "auto":
      return replayOrRecord(core, flights, c);
  }
}

async function replayOrRecord(core: Core, flights: SingleFlight, c: CallContext): Promise<Answer> {
  const found = await lookup(core, c);
  if (found.kind === "hit") return found.answer;
  if (core.mode === "replay") {
    countMiss(core, c);
    throw await missError({
      store: core.store,
      namespace: core.namespace,
      id: c.id,
      occurrence: c.occurrence,
      mode: core.mode,
      manifest: c.manifest,
      rulesFired: requestRulesFired(c.req, c.identityOpts),
      rerecord: core.opts.rerecordHint,
      inRun: c.scope !== undefined,
    });
  }
  return flights.run(core, c, () => {
    countMiss(core, c);
    if (found.kind === "store-down") return bypass(core, c, "store unavailable");
    return recordUnderLease(core, c);
  });
}
