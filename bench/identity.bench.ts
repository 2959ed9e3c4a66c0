/**
 * Identity core: normalizePrompt throughput, invocationIdentity latency and
 * hashArtifact throughput, each beside a baseline timed in the same process.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { hashArtifact, type IdentityOptions, invocationIdentity } from "../src/identity/index.js";
import { normalizePrompt } from "../src/normalize/index.js";
import { normalizationStages } from "../src/normalize/normalize.js";
import { naiveNormalize } from "../test/reference/normalize-reference.js";
import { type Contender, type SampleOptions, sampleInterleaved } from "./support/measure.js";
import { buildPrompt, PROMPT_OPTIONS } from "./support/prompt.js";
import { createRandomFile } from "./support/random-file.js";
import { type BenchRow, compare, type RowInput, skipped } from "./support/row.js";
import type { BenchContext } from "./support/run-context.js";

const KiB = 1024;
const FAST: SampleOptions = { rounds: 21, warmup: 4, minSampleMs: 30 };
const ARTIFACT_MIB = 256;
const ARTIFACT: SampleOptions = { rounds: 7, warmup: 1, minSampleMs: 0 };

const mbPerS = (bytes: number, ns: number) => (bytes / ns) * 1e3; // 10^6 bytes per second
const describeSamples = (s: { batch: number }, o: SampleOptions) =>
  `median of ${o.rounds} interleaved samples (${s.batch} call${s.batch === 1 ? "" : "s"} each) after ${o.warmup} warmup`;

async function normalizeThroughput(ctx: BenchContext): Promise<BenchRow> {
  const prompt = buildPrompt(100 * KiB);
  const bytes = Buffer.byteLength(prompt);
  const ours = normalizePrompt(prompt, PROMPT_OPTIONS);
  if (ours !== naiveNormalize(prompt, PROMPT_OPTIONS)) {
    throw new Error("normalizePrompt and naiveNormalize disagree on the bench prompt");
  }
  ctx.log(`normalizePrompt vs naiveNormalize on ${bytes} bytes (outputs identical)`);
  const [a, b] = await sampleInterleaved(
    [
      { name: "normalizePrompt", run: () => readOnce(normalizePrompt(prompt, PROMPT_OPTIONS)) },
      { name: "naiveNormalize", run: () => readOnce(naiveNormalize(prompt, PROMPT_OPTIONS)) },
    ],
    FAST,
  );
  return compare(
    {
      suite: "identity",
      measurement: "normalizePrompt, 100 KiB prompt",
      unit: "MB/s",
      better: "higher",
      baselineName: "naiveNormalize (one regex pass per rule and root spelling), same output",
      target: 2,
      note: `${matchCount(prompt)} replacements; each output read once; ${describeSamples(a!, FAST)}`,
    },
    mbPerS(bytes, a!.medianNs),
    mbPerS(bytes, b!.medianNs),
    { invocache: a!.spread, baseline: b!.spread },
  );
}

/**
 * One contender beside node:crypto SHA-256 of the same 100 KiB bench
 * prompt's UTF-8, interleaved, as an MB/s row against the hashing-speed
 * target (0.2x unless the row names its own). Every "vs hashing" row below
 * is one of these.
 */
async function vsSha256(
  ctx: BenchContext,
  prompt: string,
  contender: Contender,
  row: { measurement: string; baselineName?: string; note?: string; target?: number },
): Promise<BenchRow> {
  const bytes = Buffer.byteLength(prompt);
  ctx.log(`${contender.name} vs node:crypto sha256 on ${bytes} bytes`);
  const [a, b] = await sampleInterleaved(
    [
      contender,
      { name: "sha256", run: () => createHash("sha256").update(prompt, "utf8").digest("hex") },
    ],
    FAST,
  );
  const samples = describeSamples(a!, FAST);
  return compare(
    {
      suite: "identity",
      measurement: row.measurement,
      unit: "MB/s",
      better: "higher",
      baselineName: row.baselineName ?? "node:crypto sha256 of the same prompt's UTF-8",
      target: row.target ?? 0.2,
      note: row.note === undefined ? samples : `${row.note}; ${samples}`,
    },
    mbPerS(bytes, a!.medianNs),
    mbPerS(bytes, b!.medianNs),
    { invocache: a!.spread, baseline: b!.spread },
  );
}

/**
 * The hashing-speed limit (issue "fastest replay"): normalizing a prompt
 * should cost a small multiple of hashing it, since the identity hashes the
 * normalized text anyway. Target: at least 0.1x node:crypto SHA-256 of the
 * same UTF-8 text (issue 32; it was 0.2x before the step-by-step analysis in
 * docs/performance.md showed that out of reach in JavaScript).
 */
function normalizeVsSha256(ctx: BenchContext): Promise<BenchRow> {
  const prompt = buildPrompt(100 * KiB);
  return vsSha256(
    ctx,
    prompt,
    { name: "normalizePrompt", run: () => readOnce(normalizePrompt(prompt, PROMPT_OPTIONS)) },
    {
      measurement: "normalizePrompt vs hashing, 100 KiB prompt",
      baselineName: "node:crypto sha256 of the same prompt's UTF-8 (the hashing-speed limit)",
      // Issue 32 re-set it from 0.2x (shown out of reach step by step) to 0.1x.
      target: 0.1,
    },
  );
}

/**
 * What any normalizer written in JavaScript pays at least: one read of every
 * UTF-16 code unit (`charCodeAt` and a class-table lookup, nothing built),
 * beside the same SHA-256. The rule table needs more than one such read
 * (whitespace, the secret anchors, the scan, NFC's check), so this row
 * bounds what `normalizePrompt vs hashing` can reach on this machine: with
 * a bare read at X× SHA-256, five reads' worth of work is X/5×.
 */
function characterReadVsSha256(ctx: BenchContext): Promise<BenchRow> {
  const prompt = buildPrompt(100 * KiB);
  const table = new Uint8Array(128);
  for (let c = 0; c < 128; c++) table[c] = /[0-9A-Za-z]/.test(String.fromCharCode(c)) ? 1 : 2;
  const readAll = (s: string) => {
    let acc = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      acc += c < 128 ? table[c]! : 3;
    }
    return acc;
  };
  return vsSha256(
    ctx,
    prompt,
    { name: "one read of every character", run: () => readAll(prompt) },
    {
      measurement:
        "one read of every character vs hashing, 100 KiB prompt (the floor of a JS pass)",
      note: "a charCodeAt loop with a class-table lookup, nothing built",
    },
  );
}

/**
 * What any normalizer that returns a new string pays at least: building one
 * string the size of the prompt (two halves joined, then read once so V8
 * flattens the rope into one allocation), beside the same SHA-256. The
 * bench prompt has non-ASCII characters, so it is a two-byte string of
 * ~200 KB: above V8's largest regular object (128 KB), each such string is
 * a large-object allocation of its own. The rule table builds two (the
 * whitespace rule's output, then the scan's), because the secret rule
 * between them runs its regular expressions over the first.
 */
function stringBuildVsSha256(ctx: BenchContext): Promise<BenchRow> {
  const prompt = buildPrompt(100 * KiB);
  const half = prompt.length >>> 1;
  const head = prompt.slice(0, half);
  const tail = prompt.slice(half);
  return vsSha256(
    ctx,
    prompt,
    { name: "one string the size of the prompt built", run: () => readOnce(head + tail) },
    {
      measurement:
        "one string the size of the prompt built vs hashing, 100 KiB prompt (the floor of a pass that returns new text)",
      note: `two slices joined and read once (one ~${Math.round((prompt.length * 2) / 1000)} KB two-byte string)`,
    },
  );
}

/**
 * What a normalizer compiled to WebAssembly (or any native code) would pay
 * at least to hand its answer back: one string decoded from UTF-8 bytes the
 * size of the prompt (TextDecoder, read once), beside the same SHA-256.
 * Writing the prompt into its memory (`encodeInto`) comes on top.
 */
function stringDecodeVsSha256(ctx: BenchContext): Promise<BenchRow> {
  const prompt = buildPrompt(100 * KiB);
  const utf8 = new TextEncoder().encode(prompt);
  const decoder = new TextDecoder();
  if (decoder.decode(utf8) !== prompt) throw new Error("the decoded prompt differs");
  return vsSha256(
    ctx,
    prompt,
    { name: "one string decoded from UTF-8", run: () => readOnce(decoder.decode(utf8)) },
    {
      measurement:
        "one string the size of the prompt decoded from UTF-8 vs hashing, 100 KiB prompt (the floor of a compiled normalizer's answer)",
      note: `TextDecoder over the prompt's ${utf8.length} bytes, read once`,
    },
  );
}

/**
 * Each of the table's steps alone, on the text it gets inside
 * normalizePrompt (the previous steps' output), beside the same SHA-256 of
 * the prompt. normalizePrompt's time is the sum of theirs, so a step whose
 * row reads below 0.2x already keeps normalizePrompt below its target: these
 * rows say which steps stand in the way, and by how much.
 */
async function stagesVsSha256(ctx: BenchContext): Promise<BenchRow[]> {
  const prompt = buildPrompt(100 * KiB);
  const rows: BenchRow[] = [];
  let input = prompt;
  for (const [name, step] of Object.entries(normalizationStages(PROMPT_OPTIONS))) {
    const text = input;
    rows.push(
      await vsSha256(
        ctx,
        prompt,
        { name: `the ${name} step alone`, run: () => readOnce(step(text)) },
        {
          measurement: `normalizePrompt's ${name} step alone vs hashing, 100 KiB prompt (a share of normalizePrompt's time)`,
          note: "on the text the step gets inside normalizePrompt, output read once",
        },
      ),
    );
    input = step(text);
  }
  if (input !== normalizePrompt(prompt, PROMPT_OPTIONS)) {
    throw new Error("the steps composed differ from normalizePrompt on the bench prompt");
  }
  return rows;
}

/**
 * Read a result once, as any consumer does: V8 may return text built by
 * concatenation as a rope and flatten it only on first read, which would
 * otherwise fall outside the timing on one side only.
 */
const readOnce = (s: string) => s.isWellFormed();

/** How many replacements the rules make on the prompt (its "density"). */
function matchCount(prompt: string): number {
  const n = normalizePrompt(prompt, PROMPT_OPTIONS);
  return (n.match(/\{(?:project|home|tmp|cache|uuid|timestamp)\}/g) ?? []).length;
}

async function identityLatency(ctx: BenchContext, kib: number): Promise<BenchRow> {
  const prompt = buildPrompt(kib * KiB, kib);
  const { projectPath, ...rest } = PROMPT_OPTIONS;
  const opts: IdentityOptions = rest;
  const req = { role: "builder", model: "gpt-5", prompt, projectPath: projectPath ?? null };
  ctx.log(`invocationIdentity vs normalize+sha256 on a ${kib} KiB prompt`);
  const [a, b] = await sampleInterleaved(
    [
      { name: "invocationIdentity", run: () => invocationIdentity(req, opts) },
      {
        name: "normalize+sha256",
        run: () =>
          createHash("sha256")
            .update(normalizePrompt(prompt, PROMPT_OPTIONS), "utf8")
            .digest("hex"),
      },
    ],
    FAST,
  );
  return compare(
    {
      suite: "identity",
      measurement: `invocationIdentity, ${kib} KiB prompt`,
      unit: "µs/call",
      better: "lower",
      baselineName: "normalizePrompt of the same prompt + node:crypto sha256 of its UTF-8",
      target: 1.3,
      note: describeSamples(a!, FAST),
    },
    a!.medianNs / 1e3,
    b!.medianNs / 1e3,
    { invocache: a!.spread, baseline: b!.spread },
  );
}

async function artifactThroughput(ctx: BenchContext): Promise<BenchRow> {
  const row: RowInput = {
    suite: "identity",
    measurement: `hashArtifact, ${ARTIFACT_MIB} MiB file`,
    unit: "MB/s",
    better: "higher",
    baselineName: "`openssl dgst -sha256` of the same file (spawnSync, process start included)",
    target: 0.9,
  };
  const probe = spawnSync("openssl", ["version"], { encoding: "utf8" });
  if (probe.error !== undefined || probe.status !== 0) {
    const why = `openssl not runnable (${probe.error?.message ?? `exit ${probe.status}`})`;
    ctx.log(`skipping hashArtifact: ${why}`);
    return skipped(row, why);
  }
  ctx.log(`writing a ${ARTIFACT_MIB} MiB pseudo-random file`);
  const file = createRandomFile(ARTIFACT_MIB);
  try {
    const expected = await hashArtifact(file.path);
    const openssl = (): string => {
      const r = spawnSync("openssl", ["dgst", "-sha256", "-r", file.path], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`openssl dgst failed: ${r.stderr}`);
      return `sha256:${r.stdout.slice(0, 64)}`;
    };
    if (openssl() !== expected) throw new Error("hashArtifact and openssl disagree on the file");
    ctx.log(`hashArtifact vs openssl dgst on ${file.bytes} bytes (digests identical)`);
    const contenders: Contender[] = [
      { name: "hashArtifact", run: () => hashArtifact(file.path) },
      { name: "openssl", run: openssl },
    ];
    const [a, b] = await sampleInterleaved(contenders, ARTIFACT);
    return compare(
      { ...row, note: describeSamples(a!, ARTIFACT) },
      mbPerS(file.bytes, a!.medianNs),
      mbPerS(file.bytes, b!.medianNs),
      { invocache: a!.spread, baseline: b!.spread },
    );
  } finally {
    file.remove();
  }
}

export default async function identityBench(ctx: BenchContext): Promise<BenchRow[]> {
  const rows = [
    await normalizeThroughput(ctx),
    await normalizeVsSha256(ctx),
    await characterReadVsSha256(ctx),
    await stringBuildVsSha256(ctx),
    await stringDecodeVsSha256(ctx),
    ...(await stagesVsSha256(ctx)),
  ];
  for (const kib of [1, 8, 100]) rows.push(await identityLatency(ctx, kib));
  rows.push(await artifactThroughput(ctx));
  return rows;
}
