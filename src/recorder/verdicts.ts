/**
 * Verdicts: a gate's "accepted"/"rejected" on the output last served for an
 * id. Attached to a fresh recording; compared with the recorded one on a hit
 * (a different verdict is a divergence: an error in replay); never attached
 * to what was answered live (passthrough, verify).
 */

import type { JsonValue } from "../store/index.js";
import { type Entry, entryKey, validateEntry } from "../store/index.js";
import type { Core } from "./core.js";
import { DivergenceError, UnknownInvocationError } from "./errors.js";
import type { RunScope, ServedCall } from "./run-scope.js";

export type Verdict = "accepted" | "rejected";

/** Check a verdict's arguments (TypeErrors naming the argument). */
export function checkVerdict(verdict: unknown, reason: unknown): void {
  if (verdict !== "accepted" && verdict !== "rejected") {
    throw new TypeError(`verdict must be "accepted" or "rejected", got ${JSON.stringify(verdict)}`);
  }
  if (reason !== undefined && typeof reason !== "string") {
    throw new TypeError("verdict reason must be a string");
  }
}

/** Record `verdict` on `served` (found in `scope`, or outside every run). */
export async function recordVerdict(
  core: Core,
  served: ServedCall,
  verdict: Verdict,
  reason: string | undefined,
  scope: RunScope | undefined,
): Promise<void> {
  const { id, occurrence } = served;
  scope?.addVerdict({ id, occurrence, verdict });
  core.events.emit("verdict", {
    id,
    occurrence,
    verdict,
    ...(reason === undefined ? {} : { reason }),
  });
  if (served.from === "live") return; // passthrough / verify: nothing recorded to attach it to
  const key = entryKey(core.namespace, id, occurrence);
  const entry = await readEntry(core, key, id);
  if (entry === undefined) return;
  if (served.from === "hit") {
    compareVerdict(core, served, entry, verdict, scope);
    return; // a replayed entry is never rewritten in auto mode
  }
  entry.meta.verdict = {
    verdict,
    at: new Date().toISOString(),
    ...(reason === undefined
      ? {}
      : { reason: core.secrets?.redactString(reason, "$.reason", []) ?? reason }),
  };
  // An Entry is JSON (validateEntry read it so): the store's parameter type is the wider JsonValue.
  await core.failOpen.write(key, entry as unknown as JsonValue, id);
}

/** The entry the verdict goes with; undefined when there is none to attach it to. */
async function readEntry(core: Core, key: string, id: string): Promise<Entry | undefined> {
  let entry: Entry | undefined;
  try {
    const raw = await core.store.get(key);
    entry = raw === undefined ? undefined : validateEntry(raw, `${core.store.url} ${key}`);
  } catch (error) {
    if (core.mode === "replay") throw error;
    core.failOpen.storeFailed(
      `could not read ${key} to attach a verdict; it was not stored`,
      error,
      id,
    );
    return undefined;
  }
  if (entry === undefined && core.mode === "replay") {
    throw new UnknownInvocationError(
      id,
      `recorder.verdict: no recording of ${id.slice(0, 12)} to compare the verdict with`,
    );
  }
  return entry; // undefined: e.g. an incomplete response that was not stored
}

/** A replayed call: the verdict must be the recorded one. */
function compareVerdict(
  core: Core,
  served: ServedCall,
  entry: Entry,
  verdict: Verdict,
  scope: RunScope | undefined,
): void {
  const { id, occurrence } = served;
  const recorded = entry.meta.verdict?.verdict;
  if (recorded === verdict) return;
  core.stats.divergences++;
  core.events.emit("divergence", {
    kind: "verdict",
    id,
    occurrence,
    ...(scope ? { runId: scope.runId } : {}),
    expected: recorded ?? null,
    actual: verdict,
  });
  if (core.mode === "replay") {
    throw new DivergenceError(
      "verdict",
      recorded ?? null,
      verdict,
      `invocache: the gate said "${verdict}" for ${id.slice(0, 12)} (attempt ${entry.manifest.attempt}, occurrence ${occurrence}) but the recording says ${recorded === undefined ? "no verdict was given" : `"${recorded}"`}: the replayed run diverged. Re-record with INVOCACHE_MODE=record if the gate changed on purpose.`,
    );
  }
}
