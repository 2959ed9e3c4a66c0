/**
 * `npm run bench:peers -- --servers-only --server-calls 3` end to end, in a
 * child process, two alternated rounds: the floor, invocache proxy replay on
 * SQLite and on a cassette (every answer compared), in-process createFetch on
 * the same store, and aimock record/replay. Only that it runs, checks every
 * answer in every round and prints the table with the rounds' ranges is
 * asserted; timings are not (three calls on a shared machine say nothing).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type NodeRun, runNode } from "../helpers/run-node.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function runServers(): Promise<NodeRun> {
  return runNode(
    [
      "--import",
      "tsx",
      "bench/peers/run.ts",
      "--servers-only",
      "--server-calls",
      "3",
      "--server-rounds",
      "2",
      "--server-record-rounds",
      "2",
      "--server-passes",
      "1",
    ],
    root,
    // Explicit modes in the bench must win over whatever the environment says.
    { ...process.env, INVOCACHE_MODE: "passthrough" },
  );
}

describe("bench:peers --servers-only", () => {
  it("runs every server with every answer checked and prints the table", async () => {
    const { code, stdout, stderr } = await runServers();
    expect(stderr).not.toContain("FAILED");
    expect(code, stderr).toBe(0);
    for (const row of [
      "constant server (floor)",
      "invocache proxy replay (SQLite, first pass)",
      "invocache proxy replay (SQLite, warm)",
      "invocache proxy replay (cassette, first pass)",
      "invocache proxy replay (cassette, warm)",
      "in-process createFetch replay (SQLite)",
      "aimock replay (first pass)",
      "aimock replay (warm)",
    ]) {
      expect(stdout).toMatch(
        // calls/s, × floor, CPU µs/call, × floor (CPU), answers checked (3 calls, 2 rounds;
        // the floor runs beside every server),
        // mismatches, then the per-round ratios' ranges
        new RegExp(
          `\\| ${row.replace(/[()]/g, "\\$&")} \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| ${row.startsWith("constant") ? "\\d+" : "6"} \\| 0 \\| [\\d.]+–[\\d.]+ \\| [\\d.]+–[\\d.]+ \\|`,
        ),
      );
    }
    expect(stdout).toMatch(/2 replay rounds .* 2 recording rounds; load average [\d.]+ → [\d.]+/);
    expect(stdout).toMatch(
      /invocache proxy \(SQLite\): [\d.]+× \(by CPU time: [\d.]+×\); rounds [\d.]+–[\d.]+×/,
    );
    expect(stdout).toMatch(/- aimock: [\d.]+×/);
    expect(stdout).toMatch(
      /Proxy cost over in-process createFetch \(SQLite replay\): -?[\d.]+ µs per call/,
    );
  }, 120_000);
});
