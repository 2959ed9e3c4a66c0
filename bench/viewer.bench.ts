/**
 * The viewer on a SQLite store of 100,000 entries (1 KiB prompts, 1,000
 * stored runs of 5 steps): the latency of each page over real HTTP on
 * loopback, beside the same page on a 1,000-entry store. The store keeps
 * stored metadata, so the viewer starts without reading it (its start-up
 * time is in the note): the overview's page is one metadata query in
 * recording-time order (the last page read from the oldest end), an entry
 * or diff page one or two store reads, a run page its run record and its
 * entries. 100× the data should cost far less than 100× the time: target
 * ≤ 10×, and every page well under a second (the note has the ms). A text
 * search is the exception: it scans the metadata newest first until a page
 * is full (here, every row), linear by nature, so its target is ≤ 100×.
 *
 * INVOCACHE_BENCH_VIEWER_ENTRIES=N changes the size (a quick check).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { manifestIdentity } from "../src/identity/identity.js";
import { invocationManifest } from "../src/identity/manifest.js";
import { entryKey, runKey } from "../src/store/envelope.js";
import { openStore } from "../src/store/open.js";
import { startViewer } from "../src/viewer/index.js";
import { type SampleOptions, sampleInterleaved } from "./support/measure.js";
import { type BenchRow, compare } from "./support/row.js";
import type { BenchContext } from "./support/run-context.js";

const BIG = Number(process.env.INVOCACHE_BENCH_VIEWER_ENTRIES ?? 100_000);
const SMALL = 1_000;
const OPTS: SampleOptions = { rounds: 7, warmup: 1, minSampleMs: 0 };
const ROLES = ["planner", "builder", "reviewer"];

async function fill(url: string, count: number): Promise<{ keys: string[]; run: string }> {
  const store = openStore(url);
  const keys: string[] = [];
  const filler = "lorem ipsum dolor sit amet ".repeat(40);
  let batch: Promise<void>[] = [];
  let calls: string[] = [];
  for (let i = 0; i < count; i++) {
    const manifest = invocationManifest({
      role: ROLES[i % 3]!,
      model: i % 2 === 0 ? "gpt-5" : "claude-4",
      prompt: `Step ${i} of task T-${Math.floor(i / 5)}: ${filler}`,
      task: `T-${Math.floor(i / 5)}`,
      attempt: i % 5 === 3 ? 1 : 0,
    });
    const id = manifestIdentity(manifest);
    const key = entryKey("bench", id, 0);
    keys.push(key);
    calls.push(`${id}:0`);
    const entry = {
      v: 1,
      id,
      manifest,
      response: { text: `answer ${i} ${filler.slice(0, 200)}` },
      meta: {
        recordedAt: new Date(1_767_225_600_000 + i * 1000).toISOString(),
        durationMs: 100 + (i % 300),
        normalization: 1,
        invocacheVersion: "0.1.0",
        occurrence: 0,
        attempt: manifest.attempt,
      },
    };
    batch.push(store.set(key, entry as never));
    if (calls.length === 5) {
      const runId = `run-${i}`;
      batch.push(
        store.set(runKey("bench", runId), {
          v: 1,
          runId,
          contentHash: "0".repeat(64),
          calls,
          verdicts: [],
          endedAt: new Date(1_767_225_600_000 + i * 1000).toISOString(),
        }),
      );
      calls = [];
    }
    if (batch.length >= 500) {
      await Promise.all(batch);
      batch = [];
    }
  }
  await Promise.all(batch);
  await store.close();
  return { keys, run: `run-${count - 1}` };
}

async function serve(url: string) {
  const t0 = performance.now();
  const viewer = await startViewer({ store: url }, { refreshMs: Number.POSITIVE_INFINITY });
  const loadMs = performance.now() - t0;
  const first = await fetch(viewer.url, { redirect: "manual" });
  const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0]!;
  const base = `http://127.0.0.1:${viewer.port}`;
  const page = async (path: string) => {
    const r = await fetch(`${base}${path}`, { headers: { cookie } });
    if (r.status !== 200) throw new Error(`${path}: HTTP ${r.status}`);
    await r.text();
  };
  return { viewer, loadMs, page };
}

export default async function viewerBench(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "invocache-bench-viewer-"));
  try {
    const bigUrl = `sqlite://${join(dir, "big.sqlite")}`;
    const smallUrl = `sqlite://${join(dir, "small.sqlite")}`;
    ctx.log(`writing ${BIG.toLocaleString("en")} entries`);
    const big = await fill(bigUrl, BIG);
    const small = await fill(smallUrl, SMALL);
    const b = await serve(bigUrl);
    const s = await serve(smallUrl);
    ctx.log(`viewer started in ${Math.round(b.loadMs)} ms (${BIG} entries)`);
    const pages = (keys: string[], run: string) => {
      const a = keys[keys.length - 2]!;
      const z = keys[keys.length - 1]!;
      return [
        ["overview, newest 50", "/"],
        ["overview, last page", `/?offset=${Math.max(0, keys.length - 50)}`],
        ["overview, text search", "/?q=step+12"],
        ["overview, id prefix", `/?q=${a.split(":")[2]!.slice(0, 8)}`],
        ["run (5 steps)", `/run/bench/${run}`],
        ["entry", `/entry/${encodeURIComponent(z)}`],
        ["diff of two entries", `/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(z)}`],
      ] as const;
    };
    const rows: BenchRow[] = [];
    const bp = pages(big.keys, big.run);
    const sp = pages(small.keys, small.run);
    try {
      for (let i = 0; i < bp.length; i++) {
        const [name, path] = bp[i]!;
        const [mine, theirs] = await sampleInterleaved(
          [
            { name: "big", run: () => b.page(path) },
            { name: "small", run: () => s.page(sp[i]![1]) },
          ],
          OPTS,
        );
        const ms = mine!.medianNs / 1e6;
        rows.push(
          compare(
            {
              suite: "viewer",
              measurement: `page: ${name}, ${BIG.toLocaleString("en")} entries`,
              unit: "ms/page",
              better: "lower",
              baselineName: `same page, ${SMALL.toLocaleString("en")} entries`,
              target: name === "overview, text search" ? 100 : 10,
              note: `${ms.toFixed(1)} ms over HTTP; viewer started in ${Math.round(b.loadMs)} ms`,
            },
            ms,
            theirs!.medianNs / 1e6,
            { invocache: mine!.spread, baseline: theirs!.spread },
          ),
        );
      }
    } finally {
      await b.viewer.close();
      await s.viewer.close();
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
