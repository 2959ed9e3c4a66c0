/**
 * Several processes recording into one big cassette at once: a `set` that
 * resolved is in the final file, always. (The issue: two processes writing
 * into a 20-40 MB cassette lost 3-6 of 10 acknowledged recordings, because
 * the writer parsed the whole file on the event loop while holding the
 * lock, the lock went stale, another process took it, and the first still
 * renamed its out-of-date merge over the file.)
 *
 * The default run uses a ~4 MB cassette with the shortest stale threshold
 * (2 s). INVOCACHE_BIG=1 runs the heavy form: 40 MB cassettes, 2, 3 and 4
 * writers, INVOCACHE_BIG_TRIALS trials each (default 1).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CassetteItem, emitCassette, readCassette } from "../../src/cassette/index.js";
import { manifestIdentity } from "../../src/identity/index.js";
import { invocationManifest } from "../../src/index.js";
import { entryKey } from "../../src/store/index.js";
import type { JsonValue } from "../../src/store/types.js";
import { startWorker, tempDir, workerScript } from "./helpers.js";

const BIG = process.env.INVOCACHE_BIG === "1";
const TRIALS = Number(process.env.INVOCACHE_BIG_TRIALS ?? 1);
const dir = tempDir("big-cassette");
const IDENTITY = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

/**
 * A cassette of about `mb` megabytes shaped like a real one (the cassette
 * benchmark's: ~4 KB per entry, a long prompt, a response of small stream
 * events, so parsing costs what it costs on real files), written directly
 * (nobody else has the file yet).
 */
function bigCassette(path: string, mb: number): number {
  const words = "the agent should update build test module function request response cache".split(
    " ",
  );
  const items: CassetteItem[] = [];
  for (let i = 0, bytes = 0; bytes < mb * 1_000_000; i++) {
    const prompt = Array.from(
      { length: 300 },
      (_, w) => words[(i * 7 + w * 13) % words.length],
    ).join(" ");
    const manifest = invocationManifest(
      { role: "builder", model: "m", prompt: `${i} ${prompt}`, task: `T-${i % 50}` },
      IDENTITY,
    );
    const id = manifestIdentity(manifest);
    const entry = {
      v: 1,
      id,
      manifest,
      response: {
        id: `resp_${i}`,
        events: Array.from({ length: 24 }, (_, t) => ({ t, data: `chunk ${t} of ${i}` })),
      },
      meta: {
        recordedAt: "2026-01-31T12:00:00.000Z",
        durationMs: 800,
        normalization: 1,
        invocacheVersion: "0.1.0",
        occurrence: 0,
        attempt: 0,
      },
    };
    items.push({ key: entryKey("default", id, 0), value: entry as unknown as JsonValue });
    bytes += prompt.length + 1_300;
  }
  const text = emitCassette(items);
  writeFileSync(path, text);
  return text.length;
}

interface Trial {
  acknowledged: string[];
  refused: string[];
  lost: string[];
  bytes: number;
}

async function trial(
  name: string,
  mb: number,
  writers: number,
  each: number,
  staleMs: number,
): Promise<Trial> {
  const path = join(dir, `${name}.yaml`);
  const bytes = bigCassette(path, mb);
  const workers = Array.from({ length: writers }, (_, w) =>
    startWorker(workerScript("big-cassette-writer.ts"), [
      path,
      String(w),
      String(each),
      String(staleMs),
    ]),
  );
  await Promise.all(workers.map((w) => w.line((l) => l === "ready", 60_000)));
  for (const w of workers) w.child.stdin!.end("go\n");
  const exits = await Promise.all(workers.map((w) => w.exited));
  for (const [i, e] of exits.entries()) expect(e.code, `writer ${i}: ${e.stderr}`).toBe(0);
  const lines = workers.flatMap((w) => w.lines);
  const acknowledged = lines.filter((l) => l.startsWith("ok ")).map((l) => l.slice(3));
  const refused = lines.filter((l) => l.startsWith("err "));
  const keys = new Set((await readCassette(path)).map((item) => item.key));
  return { acknowledged, refused, lost: acknowledged.filter((k) => !keys.has(k)), bytes };
}

describe("processes recording into one big cassette at once", () => {
  it("a 4 MB cassette, 3 writers, the shortest stale threshold: every acknowledged set is in the final file", async () => {
    const t = await trial("small", 4, 3, 4, 2_000);
    expect(t.lost).toStrictEqual([]);
    // A refusal is allowed (it is the caller's error), silent loss is not; here nothing should need refusing.
    expect(t.refused).toStrictEqual([]);
    expect(t.acknowledged).toHaveLength(12);
  }, 120_000);

  describe.runIf(BIG)("heavy (INVOCACHE_BIG=1): 40 MB cassettes", () => {
    for (const writers of [2, 3, 4]) {
      it(`${writers} writers x 5 sets into a 40 MB cassette, default stale threshold: nothing acknowledged is lost`, async () => {
        for (let n = 0; n < TRIALS; n++) {
          const t = await trial(`big-${writers}-${n}`, 40, writers, 5, 5_000);
          console.log(
            `big cassette: ${writers} writers x 5 sets, ${(t.bytes / 1e6).toFixed(1)} MB, trial ${n + 1}/${TRIALS}: ${t.acknowledged.length} acknowledged, ${t.refused.length} refused, ${t.lost.length} lost`,
          );
          expect(t.lost).toStrictEqual([]);
        }
      }, 1_800_000);
    }
  });
});
