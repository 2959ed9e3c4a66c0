/**
 * The SDK floor verdicts of `npm run bench:peers`: every tool's replayed
 * calls per second as a fraction of the real openai client answering from
 * constant bytes (child.ts, `floor`). Nothing replays faster than the SDK
 * itself. The ratio is printed without a target: the former "≥ 0.7× the
 * floor" on these ~4 KiB one-shot calls was shown out of reach (a request's
 * identity alone costs about the floor's time; docs/performance.md) and
 * retired in issue 32, whose agent-loop rows (bench/agent-loop.bench.ts)
 * set the floor target that matters now. Also the whole-process cold start
 * beside nock.back's.
 */
import type { RunResult } from "./child.js";
import { type Collected, median } from "./report.js";
import type { ToolId } from "./tools.js";

/** Replayed calls/s of one run: calls 2..N over their time. */
const rate = (r: RunResult) => (r.calls - 1) / ((r.steadyMs ?? Number.NaN) / 1e3);

/** invocache's embedded stores: the cold-start target applies to them. */
const FLOOR_TARGETED: readonly ToolId[] = [
  "invocache-cassette",
  "invocache-sqlite",
  "invocache-sqlite-better",
];

/** The SDK floor's calls/s: the median of its runs. */
export function floorRate(c: Collected): number {
  return median(c.floor.map(rate));
}

/** One line per tool: calls/s and fraction of the floor (no verdict: see the header). */
export function renderFloor(c: Collected): string {
  const floor = floorRate(c);
  const lines = [
    `SDK floor (openai client, fetch answering constant bytes): ${floor.toFixed(0)} calls/s, median of ${c.floor.length} runs`,
  ];
  for (const id of c.tools) {
    const r = median(c.replay[id].map(rate));
    const fraction = r / floor;
    lines.push(
      `  ${id.padEnd(24)} ${r.toFixed(0).padStart(7)} calls/s  ${fraction.toFixed(2)}× the floor`,
    );
  }
  lines.push(...renderColdStart(c));
  return lines.join("\n");
}

/**
 * Cold start as a whole process: a fresh process that imports the tool,
 * opens a 100-entry recording and replays its first call, from spawn to exit
 * (node, the harness and the openai SDK are the same for every tool), median
 * over the processes; invocache's embedded stores against nock.back (target:
 * no slower).
 */
function renderColdStart(c: Collected): string[] {
  const nock = median(c.coldStart["nock-back"] ?? []);
  const lines = [
    `Cold start, whole process (spawn to exit, replaying the first call of a ${c.settings.coldStartCalls}-entry recording; median of ${c.coldStart["nock-back"]?.length ?? 0} processes): nock.back ${nock.toFixed(0)} ms`,
  ];
  for (const id of FLOOR_TARGETED) {
    if (c.coldStart[id] === undefined) continue; // better-sqlite3 only when a build is named
    const ms = median(c.coldStart[id]);
    lines.push(
      `  ${id.padEnd(24)} ${ms.toFixed(0).padStart(7)} ms  ${(ms / nock).toFixed(2)}× nock.back  ${ms <= nock ? "PASS" : "MISS"} (target ≤ nock.back)`,
    );
  }
  return lines;
}
