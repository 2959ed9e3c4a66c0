/**
 * Loading a big cassette keeps peak memory a small multiple of the file
 * (issue: 100 MB of YAML took 3.6 GB of RSS and 200 MB ran the process out
 * of memory; over MAX_CASSETTE_BYTES a cassette is refused, see
 * trust.test.ts). Each load runs in a fresh process that prints its RSS just
 * before the load and its peak RSS (`process.resourceUsage().maxRSS`) after:
 * a memory bound, not a timing. The default run loads 8 MiB;
 * INVOCACHE_BIG=1 adds 32 MiB and 60 MiB (just under the limit).
 */
import { spawnSync } from "node:child_process";
import { statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { emitCassette } from "../../src/cassette/emit.js";
import { MAX_CASSETTE_BYTES } from "../../src/cassette/store.js";
import { makeEntry, tempDir } from "./helpers.js";

const BIG = process.env.INVOCACHE_BIG === "1";
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dir = tempDir("cassette-memory");
const MiB = 1024 * 1024;
/**
 * What a load may add to the RSS: 6× the file size, plus 32 MiB that any
 * load of a few MiB costs (compiled code, the heap's young generation).
 * Documented in docs/reliability.md.
 */
const FACTOR = 6;
const FIXED = 32 * MiB;

/**
 * A cassette of about `mib` MiB shaped like a real one: a long prompt and a
 * streamed answer of OpenAI-like chunks per entry. The entries share one
 * manifest and differ by occurrence (each is checked against its id on load
 * all the same), so building the file costs no YAML writing per entry.
 */
function bigCassette(mib: number): { path: string; key: string; size: number } {
  const words = "the agent should update build test module function request response cache".split(
    " ",
  );
  const prompt = Array.from({ length: 500 }, (_, w) => words[(w * 13) % words.length]).join(" ");
  const events = Array.from({ length: 24 }, (_, t) => ({
    t,
    data: {
      json: {
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta: { content: `word ${t} ` }, finish_reason: null }],
      },
    },
  }));
  const { key, entry } = makeEntry(prompt, { kind: "stream", head: { status: 200 }, events });
  const one = emitCassette([{ key, value: entry as never }]);
  const chunk = one.slice(one.indexOf("  - id:"));
  const parts = ["invocache: 1\nentries:\n"];
  let bytes = parts[0]!.length;
  let n = 0;
  while (bytes + chunk.length < mib * MiB) {
    const c = chunk.replace("\n    occurrence: 0\n", `\n    occurrence: ${n}\n`);
    parts.push(c);
    bytes += c.length;
    n++;
  }
  const path = join(dir, `${mib}.yaml`);
  writeFileSync(path, parts.join(""));
  return { path, key: key.replace(/:0$/, `:${n - 1}`), size: statSync(path).size };
}

function peakGrowth(mib: number): { size: number; growth: number; bound: number } {
  const { path, key, size } = bigCassette(mib);
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", join(ROOT, "test/cassette/workers/load-peak.ts"), path, key],
    { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 20 },
  );
  expect(run.status, run.stderr).toBe(0);
  const out = JSON.parse(run.stdout) as { found: boolean; before: number; peak: number };
  expect(out.found).toBe(true);
  const growth = out.peak - out.before;
  console.log(
    `cassette load: ${(size / MiB).toFixed(1)} MiB file, RSS ${(out.before / MiB).toFixed(0)} MiB before, peak ${(out.peak / MiB).toFixed(0)} MiB: growth ${(growth / MiB).toFixed(0)} MiB, ${(growth / size).toFixed(2)}x the file`,
  );
  return { size, growth, bound: FACTOR * size + FIXED };
}

describe("memory of a cassette load", () => {
  it("an 8 MiB cassette: peak RSS growth ≤ 6x the file size + 32 MiB", () => {
    const { growth, bound } = peakGrowth(8);
    expect(growth).toBeLessThanOrEqual(bound);
  }, 120_000);

  describe.runIf(BIG)("heavy (INVOCACHE_BIG=1)", () => {
    for (const mib of [32, 60]) {
      it(`a ${mib} MiB cassette: peak RSS growth ≤ 6x the file size + 32 MiB`, () => {
        expect(mib * MiB).toBeLessThan(MAX_CASSETTE_BYTES);
        const { growth, bound } = peakGrowth(mib);
        expect(growth).toBeLessThanOrEqual(bound);
      }, 900_000);
    }
  });
});
