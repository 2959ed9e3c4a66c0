/**
 * The SDK floor verdicts of `npm run bench:peers`: every tool's replayed
 * calls per second as a fraction of the real openai client answering from
 * constant bytes (child.ts, `floor`). Nothing replays faster than the SDK
 * itself; the target is at least 0.7 of it for the invocache stores.
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
  return lines.join("\n");
}
