/**
 * The SDK floor verdicts of `npm run bench:peers`: every tool's replayed
 * calls per second as a fraction of the real openai client answering from
 * constant bytes (child.ts, `floor`). Nothing replays faster than the SDK
 * itself; the target is at least 0.7 of it for the invocache stores. Also
 * the whole-process cold start beside nock.back's.
 */
import type { RunResult } from "./child.js";
import { type Collected, median } from "./report.js";
import { TOOL_IDS } from "./tools.js";

/** Replayed calls/s of one run: calls 2..N over their time. */
const rate = (r: RunResult) => (r.calls - 1) / ((r.steadyMs ?? Number.NaN) / 1e3);

/** The target fraction of the floor for invocache's own stores. */
export const FLOOR_TARGET = 0.7;

/** One line per tool: calls/s, fraction of the floor, PASS/MISS for invocache's stores. */
export function renderFloor(c: Collected, floor: readonly RunResult[]): string {
  const floorRate = median(floor.map(rate));
  const lines = [
    `SDK floor (openai client, fetch answering constant bytes): ${floorRate.toFixed(0)} calls/s, median of ${floor.length} runs`,
  ];
  for (const id of TOOL_IDS) {
    const r = median(c.replay[id].map(rate));
    const fraction = r / floorRate;
    const verdict = id.startsWith("invocache")
      ? `  ${fraction >= FLOOR_TARGET ? "PASS" : "MISS"} (target ≥ ${FLOOR_TARGET})`
      : "";
    lines.push(
      `  ${id.padEnd(20)} ${r.toFixed(0).padStart(7)} calls/s  ${fraction.toFixed(2)}× the floor${verdict}`,
    );
  }
  lines.push(...renderColdStart(c));
  return lines.join("\n");
}

/**
 * Cold start as a whole process: node start to the end of the first
 * replayed call (child.ts, `processColdMs`), median over the replay runs,
 * invocache against nock.back (target: no slower). `--quick` replays a
 * 100-entry recording, a full run the full one.
 */
function renderColdStart(c: Collected): string[] {
  const cold = (id: (typeof TOOL_IDS)[number]) =>
    median(c.replay[id].map((r) => r.processColdMs ?? Number.NaN));
  const nock = cold("nock-back");
  const lines = [
    `Cold start, whole process (node start to the first replayed call; ${c.settings.calls}-entry recording, median of ${c.replay["nock-back"].length} runs): nock.back ${nock.toFixed(0)} ms`,
  ];
  for (const id of TOOL_IDS) {
    if (id === "nock-back") continue;
    const ms = cold(id);
    const verdict = id.startsWith("invocache")
      ? `  ${ms <= nock ? "PASS" : "MISS"} (target ≤ nock.back)`
      : "";
    lines.push(
      `  ${id.padEnd(20)} ${ms.toFixed(0).padStart(7)} ms  ${(ms / nock).toFixed(2)}× nock.back${verdict}`,
    );
  }
  return lines;
}
