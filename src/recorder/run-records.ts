/**
 * Run records: when a run ends, its `run` event; for a run with an explicit
 * id, its trajectory (content hash, calls, how each call was answered,
 * verdicts) is stored, and on replay compared with the stored one (a
 * different trajectory is a divergence: an error in replay).
 *
 * Every run id has its own record, a replayed run included: a run id that
 * is not stored yet is stored when the run ends, in every mode that uses the
 * store. What this costs, as a guarantee: a run writes at most one key
 * (`<namespace>:run:<runId>`), once, after its function settled, never per
 * call; a run whose id is already stored with the same trajectory writes
 * nothing (the first record stays, never overwritten by a replay). So a hit
 * still writes nothing itself.
 */

import type { JsonValue } from "../store/index.js";
import { runKey } from "../store/index.js";
import { emptyTally, settleAccounts } from "../usage/index.js";
import type { Core } from "./core.js";
import { DivergenceError } from "./errors.js";
import type { RunScope } from "./run-scope.js";

export async function endRun(core: Core, scope: RunScope): Promise<void> {
  const contentHash = scope.contentHash();
  // The event's summary carries the run's dollars: price the pending calls
  // for a listener only. Nobody listening, they stay pending until the
  // accounts are read, and a run's end does not load the price table.
  if (core.events.listening("run")) {
    settleAccounts(core.stats);
    core.events.emit("run", {
      runId: scope.runId,
      contentHash,
      calls: scope.calls.length,
      explicitId: scope.explicitId,
      ...(scope.parent === undefined ? {} : { parentRunId: scope.parent.runId }),
      summary: core.stats.byRun[scope.runId] ?? emptyTally(),
    });
  }
  if (!scope.explicitId || core.mode === "passthrough" || core.mode === "verify") return;
  const key = runKey(core.namespace, scope.runId);
  if (core.mode === "replay" || core.mode === "auto") {
    const storedHash = await storedContentHash(core, key, scope.runId);
    if (typeof storedHash === "string" && storedHash !== contentHash) {
      trajectoryDiverged(core, scope.runId, storedHash, contentHash);
    }
    // Stored already: a replay keeps the recorded trajectory; auto rewrites it only when it changed.
    if (storedHash !== undefined && (core.mode === "replay" || storedHash === contentHash)) return;
  }
  const record: JsonValue = {
    v: 1,
    runId: scope.runId,
    contentHash,
    calls: scope.calls.map((c) => `${c.id}:${c.occurrence}`),
    // Per call, in order: "hit" (replayed), "recorded" (called and stored) or "live" (called, not stored).
    served: scope.calls.map((c) => c.from),
    verdicts: scope.verdicts.map((v) => `${v.id}:${v.occurrence}:${v.verdict}`),
    endedAt: new Date().toISOString(),
  };
  try {
    await core.store.set(key, record);
  } catch (error) {
    if (core.mode === "record") throw error;
    core.failOpen.storeFailed(`could not store run ${scope.runId}`, error);
  }
}

async function storedContentHash(core: Core, key: string, runId: string): Promise<unknown> {
  let stored: JsonValue | undefined;
  try {
    stored = await core.store.get(key);
  } catch (error) {
    if (core.mode === "replay") throw error;
    core.failOpen.storeFailed(`could not read run ${runId}`, error);
  }
  return (stored as { contentHash?: unknown } | undefined)?.contentHash;
}

function trajectoryDiverged(core: Core, runId: string, expected: string, actual: string): void {
  core.stats.divergences++;
  core.events.emit("divergence", { kind: "trajectory", runId, expected, actual });
  if (core.mode === "replay") {
    throw new DivergenceError(
      "trajectory",
      expected,
      actual,
      `invocache: run ${runId} took a different trajectory than when it was recorded (content hash ${actual.slice(0, 12)}, recorded ${expected.slice(0, 12)}). Re-record with INVOCACHE_MODE=record if that is intended.`,
    );
  }
}
