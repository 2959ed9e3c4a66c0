/**
 * Cassettes: loading and replaying a 10,000-entry cassette (4 KiB prompts),
 * each beside a baseline timed in the same process.
 *
 * - cold load: `cassetteStore(path)` up to its first answer (read, YAML
 *   parse, the file's structure checks; each item's value check and each
 *   entry's manifest-vs-id check are made when it is first served, so here
 *   for the probed entry only) vs the `yaml` parser alone on the same file (target
 *   ≤ 1.1×; the fast reader puts it well under) and vs `JSON.parse` of the
 *   same data as JSON, what a JSON-recording peer pays (target ≤ 2×).
 * - warm load: the same, when the file is unchanged since it was last
 *   parsed (the parsed-form cache) vs `JSON.parse` of the same data read
 *   from disk; target ≤ 3×. Measured twice: stat data trusted (a cassette not
 *   modified in the last seconds, i.e. any committed one), and "racily
 *   clean" (just written: the content hash is checked too).
 * - memory: heap held by a loaded store vs by the `JSON.parse`d data.
 * - replay lookups: `get()` hits per second on the 10,000-entry cassette vs
 *   a 100-entry one: O(1) means the same rate.
 */
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { parse } from "yaml";
import { cassetteStore, emitCassette } from "../src/cassette/index.js";
import type { CassetteItem } from "../src/cassette/item.js";
import { manifestIdentity } from "../src/identity/identity.js";
import { invocationManifest } from "../src/identity/manifest.js";
import { entryKey } from "../src/store/envelope.js";
import type { JsonValue } from "../src/store/types.js";
import { type SampleOptions, sampleInterleaved } from "./support/measure.js";
import { buildPrompt, PROMPT_OPTIONS } from "./support/prompt.js";
import { type BenchRow, compare } from "./support/row.js";
import type { BenchContext } from "./support/run-context.js";

const ENTRIES = 10_000;
const PROMPT_BYTES = 4 * 1024;
const COLD: SampleOptions = { rounds: 5, warmup: 0, minSampleMs: 0 };
/** The parser settings the cassette loader uses, so the baseline is "the parser alone". */
const YAML_OPTIONS = { version: "1.2", schema: "core", merge: false, uniqueKeys: true } as const;
const WARM: SampleOptions = { rounds: 7, warmup: 1, minSampleMs: 0 };
const LOOKUP: SampleOptions = { rounds: 15, warmup: 3, minSampleMs: 30 };

const MB = 1e6;

function buildItems(count: number): CassetteItem[] {
  const { projectPath, ...identity } = PROMPT_OPTIONS;
  const items: CassetteItem[] = [];
  for (let i = 0; i < count; i++) {
    const prompt = buildPrompt(PROMPT_BYTES, i + 1);
    const manifest = invocationManifest(
      {
        role: i % 3 === 0 ? "planner" : "builder",
        model: "gpt-5",
        prompt,
        task: `T-${i % 50}`,
        projectPath: projectPath ?? null,
      },
      identity,
    );
    const id = manifestIdentity(manifest);
    const entry = {
      v: 1,
      id,
      manifest,
      response: {
        id: `resp_${i}`,
        output: [
          { type: "message", role: "assistant", content: `Done step ${i}.\nChanged 3 files.\n` },
        ],
        usage: { input_tokens: 1024 + (i % 97), output_tokens: 64 + (i % 13) },
      },
      meta: {
        recordedAt: "2026-01-31T12:00:00.000Z",
        durationMs: 800 + (i % 400),
        normalization: 1,
        invocacheVersion: "0.1.0",
        occurrence: 0,
        attempt: 0,
      },
    };
    items.push({ key: entryKey("default", id, 0), value: entry as unknown as JsonValue });
  }
  return items;
}

/** A forced full GC, for heap measurements (`--expose-gc` at run time). */
function gcFunction(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

function heapAfter(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function loadStore(path: string, key: string, parseCache: string | false): Promise<unknown> {
  const store = cassetteStore(path, { parseCache });
  const value = await store.get(key);
  if (value === undefined) throw new Error("bench cassette lost an entry");
  await store.discard(); // no flush, no background work counted in the next sample
  return value;
}

export default async function cassetteBench(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "invocache-bench-cassette-"));
  try {
    ctx.log(`building a ${ENTRIES}-entry cassette with ${PROMPT_BYTES / 1024} KiB prompts`);
    const items = buildItems(ENTRIES);
    const path = join(dir, "big.yaml");
    writeFileSync(path, emitCassette(items));
    const bytes = readFileSync(path).length;
    const committed = new Date(Date.now() - 3_600_000); // as if checked out an hour ago
    utimesSync(path, committed, committed);
    const jsonPath = join(dir, "same-data.json");
    writeFileSync(jsonPath, JSON.stringify(parse(readFileSync(path, "utf8"))));
    const jsonBytes = readFileSync(jsonPath).length;
    const probe = items[ENTRIES - 1]!.key;
    const size = `${(bytes / MB).toFixed(1)} MB YAML (${(jsonBytes / MB).toFixed(1)} MB as JSON)`;
    const rows: BenchRow[] = [];

    ctx.log(`cold load vs yaml.parse on ${size}`);
    const [cold, yamlOnly, jsonOnly] = await sampleInterleaved(
      [
        { name: "cassetteStore cold", run: () => loadStore(path, probe, false) },
        { name: "yaml.parse", run: () => parse(readFileSync(path, "utf8"), YAML_OPTIONS) },
        { name: "JSON.parse", run: () => JSON.parse(readFileSync(jsonPath, "utf8")) },
      ],
      COLD,
    );
    rows.push(
      compare(
        {
          suite: "cassette",
          measurement: `cold load, ${ENTRIES} entries (${size})`,
          unit: "ms/load",
          better: "lower",
          baselineName:
            "readFileSync + yaml.parse of the same file, same parser settings (core schema)",
          target: 1.1,
          note: `includes reading, parsing, the file's structure checks, indexing, the value and id checks of the entry served (the others are checked when first served); median of ${COLD.rounds} interleaved loads`,
        },
        cold!.medianNs / 1e6,
        yamlOnly!.medianNs / 1e6,
        { invocache: cold!.spread, baseline: yamlOnly!.spread },
      ),
    );
    // What a JSON-recording tool (Polly.js, nock.back) pays to load the same data.
    rows.push(
      compare(
        {
          suite: "cassette",
          measurement: `cold load vs JSON, ${ENTRIES} entries (${size})`,
          unit: "ms/load",
          better: "lower",
          baselineName:
            "readFileSync + JSON.parse of the same data as JSON (what a JSON recording costs)",
          target: 2,
          note: `the fast reader (src/cassette/fast-parse.ts) plus every check (an entry's value and id checks when it is first served); median of ${COLD.rounds} interleaved loads`,
        },
        cold!.medianNs / 1e6,
        jsonOnly!.medianNs / 1e6,
        { invocache: cold!.spread, baseline: jsonOnly!.spread },
      ),
    );

    const cache = join(dir, "parse-cache");
    ctx.log("writing the parsed-form cache (one cold load)");
    const writer = cassetteStore(path, { parseCache: cache });
    await writer.get(probe);
    await writer.close(); // waits for the background cache write
    ctx.log("warm load vs JSON.parse of the same data");
    const [warm, json] = await sampleInterleaved(
      [
        { name: "cassetteStore warm", run: () => loadStore(path, probe, cache) },
        { name: "JSON.parse", run: () => JSON.parse(readFileSync(jsonPath, "utf8")) },
      ],
      WARM,
    );
    rows.push(
      compare(
        {
          suite: "cassette",
          measurement: `warm load (unchanged file, parsed-form cache), ${ENTRIES} entries`,
          unit: "ms/load",
          better: "lower",
          baselineName: "readFileSync + JSON.parse of the same data as JSON",
          target: 3,
          note: `stat data trusted (file not modified in the last 3 s); median of ${WARM.rounds}`,
        },
        warm!.medianNs / 1e6,
        json!.medianNs / 1e6,
        { invocache: warm!.spread, baseline: json!.spread },
      ),
    );

    // Racily clean: the file changed within the racy window, so the cache is
    // only trusted after hashing the file's bytes.
    const now = new Date();
    utimesSync(path, now, now);
    const racyWriter = cassetteStore(path, { parseCache: cache });
    await racyWriter.get(probe);
    await racyWriter.close();
    const [racy, json2] = await sampleInterleaved(
      [
        { name: "cassetteStore warm, hashed", run: () => loadStore(path, probe, cache) },
        { name: "JSON.parse", run: () => JSON.parse(readFileSync(jsonPath, "utf8")) },
      ],
      WARM,
    );
    rows.push(
      compare(
        {
          suite: "cassette",
          measurement: `warm load, racily clean (content hash checked), ${ENTRIES} entries`,
          unit: "ms/load",
          better: "lower",
          baselineName: "readFileSync + JSON.parse of the same data as JSON",
          target: 3,
          note: `the cassette was modified < 3 s before it was cached: its sha256 is checked on load; median of ${WARM.rounds}`,
        },
        racy!.medianNs / 1e6,
        json2!.medianNs / 1e6,
        { invocache: racy!.spread, baseline: json2!.spread },
      ),
    );
    utimesSync(path, committed, committed);

    ctx.log("memory held by a loaded cassette vs the JSON.parse'd data");
    const gc = gcFunction();
    const base = heapAfter(gc);
    const held = cassetteStore(path, { parseCache: false });
    await held.get(probe);
    const storeHeap = heapAfter(gc) - base;
    await held.discard();
    const base2 = heapAfter(gc);
    const data = JSON.parse(readFileSync(jsonPath, "utf8")) as unknown;
    const jsonHeap = heapAfter(gc) - base2;
    void data;
    rows.push(
      compare(
        {
          suite: "cassette",
          measurement: `heap held by a loaded ${ENTRIES}-entry cassette`,
          unit: "MB",
          better: "lower",
          baselineName: "the same data held as a JSON.parse result",
          target: 1.5,
          note: "heapUsed after full GCs, one measurement each",
        },
        storeHeap / MB,
        jsonHeap / MB,
      ),
    );

    ctx.log("replay lookups: 10,000-entry vs 100-entry cassette");
    const smallPath = join(dir, "small.yaml");
    writeFileSync(smallPath, emitCassette(items.slice(0, 100)));
    const big = cassetteStore(path, { parseCache: cache });
    const small = cassetteStore(smallPath, { parseCache: false });
    await big.get(probe);
    await small.get(items[0]!.key);
    const bigKeys = items.filter((_, i) => i % 97 === 0).map((i) => i.key);
    const smallKeys = items.slice(0, 100).map((i) => i.key);
    let a = 0;
    let b = 0;
    const [bigRate, smallRate] = await sampleInterleaved(
      [
        { name: "get, 10,000 entries", run: () => big.get(bigKeys[a++ % bigKeys.length]!) },
        { name: "get, 100 entries", run: () => small.get(smallKeys[b++ % smallKeys.length]!) },
      ],
      LOOKUP,
    );
    await big.discard();
    await small.discard();
    rows.push(
      compare(
        {
          suite: "cassette",
          measurement: `replay lookup (get hit), ${ENTRIES}-entry cassette`,
          unit: "lookups/s",
          better: "higher",
          baselineName: "the same lookups on a 100-entry cassette (O(1): equal rates)",
          target: 0.8,
          note: "each hit returns a fresh copy of a ~4.5 KB entry (cloneJsonValue)",
        },
        1e9 / bigRate!.medianNs,
        1e9 / smallRate!.medianNs,
        { invocache: bigRate!.spread, baseline: smallRate!.spread },
      ),
    );
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
