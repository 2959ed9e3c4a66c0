/**
 * Turns the runs of bench/peers/run.ts into per-tool medians, the side-by-side
 * table (ratios to invocache with a cassette = 1.00×), the target verdicts,
 * the miss/repeat comparison, and the "Peers" section of docs/performance.md.
 */
import type { Machine } from "../support/machine.js";
import type { LeakResult, ProbeResult, RepeatOutcome, RunResult } from "./child.js";
import { renderFloor } from "./floor.js";
import { TOOLS, type ToolId } from "./tools.js";
import { MISS_TEMPERATURE, TEMPERATURE } from "./workload.js";

export interface Settings {
  calls: number;
  /** Calls in the recording the miss/repeat probes run on. */
  probeCalls: number;
  recordRounds: number;
  replayRounds: number;
  coldStartCalls: number;
  coldStartRounds: number;
  quick: boolean;
  /**
   * How each child ran: "dist" = plain node, the harness bundled once per run
   * (bench/peers/harness.ts), invocache from its compiled package; "sources"
   * = child.ts under tsx with invocache's sources (`--sources`).
   */
  harness?: "dist" | "sources";
}

export interface Collected {
  settings: Settings;
  machine: Machine;
  seconds: number;
  /** The tools this run compared (the shared stores only when their server could start). */
  tools: ToolId[];
  /** Tools left out, with the reason. */
  leftOut: string[];
  direct: RunResult[];
  record: Record<ToolId, RunResult[]>;
  replay: Record<ToolId, RunResult[]>;
  /** Runs of the SDK floor (child.ts, `floor`). */
  floor: RunResult[];
  /**
   * Cold start as a whole process: the wall time (spawn to exit) of a fresh
   * process importing the tool and replaying the first call of a
   * `coldStartCalls`-entry recording, ms, one per round.
   */
  coldStart: Partial<Record<ToolId, number[]>>;
  /** invocache + cassette replayed again right after each of its replays, its parsed-form cache warm. */
  warmCassette: RunResult[];
  probes: Partial<Record<ToolId, ProbeResult>>;
  leak?: LeakResult;
  /** Correctness failures (answers, upstream calls, crashes): the run fails when any. */
  failures: string[];
}

export interface ToolSummary {
  id: ToolId;
  label: string;
  recordMs: number;
  /** Median over rounds of record time / direct time of the same round. */
  recordOverhead: number;
  replayPerSec: number;
  /** Lowest and highest replay calls/s over the rounds. */
  replayRange: [number, number];
  /** CPU per replayed call (every thread of the process), µs: steadier than calls/s on a shared machine. */
  replayCpuUs: number;
  recordRange: [number, number];
  coldMs: number;
  bytes: number;
  cacheBytes: number;
  rssMiB: number;
  recordRssMiB: number;
  missNamesField: boolean;
  missMessage: string;
  /** ms to throw the miss, on the probe recording. */
  missMs: number;
  repeat: string;
  repeatInRun?: string;
}

export interface Target {
  name: string;
  pass: boolean;
  detail: string;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The innermost message of an error chain: what the tool itself said (the SDK wraps it). */
export function innermost(chain: readonly string[]): string {
  return chain[chain.length - 1] ?? "";
}

/**
 * Does a miss message name the changed field as a difference: the field, then
 * the recorded value, then the requested one, close together
 * (`temperature: 0.2 → 0.7`)? Echoing the request (`"temperature":0.7` in a
 * dumped body) is not naming the difference.
 */
export function namesDifferingField(message: string): boolean {
  const v = (x: number) => String(x).replace(".", "\\.");
  return new RegExp(
    `temperature[^\\n]{0,40}?(?<![\\d.])${v(TEMPERATURE)}(?![\\d])[^\\n]{0,20}?(?<![\\d.])${v(MISS_TEMPERATURE)}(?![\\d])`,
  ).test(message);
}

function describeRepeat(r: RepeatOutcome): string {
  switch (r.kind) {
    case "same-answer":
      return "replays the same answer again";
    case "different-answer":
      return "answers with a different recording";
    case "error":
      return `error: ${keyLine(innermost(r.chain))}`;
    case "first-call-failed":
      return `the first call already failed: ${firstLine(innermost(r.chain))}`;
  }
}

/** The line of an error that says what happened: invocache's "already consumed" line, else the first. */
function keyLine(message: string, max = 140): string {
  const consumed = message.split("\n").find((l) => /already consumed/.test(l));
  if (consumed === undefined) return firstLine(message, max);
  const name = /^\w+Error/.exec(message)?.[0];
  return firstLine(`${name === undefined ? "" : `${name}: `}${consumed.trim()}`, max);
}

function firstLine(s: string, max = 140): string {
  const line = s.split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function summarize(c: Collected): ToolSummary[] {
  const directMs = median(c.direct.map((r) => r.totalMs));
  return c.tools.map((id) => {
    const rec = c.record[id];
    const rep = c.replay[id];
    const probe = c.probes[id];
    const missMessage = probe === undefined ? "" : innermost(probe.miss);
    const recordMs = median(rec.map((r) => r.totalMs));
    // Paired by round (each round ran the direct baseline beside every tool), so drift in the machine cancels.
    const paired = rec.length === c.direct.length;
    const overheads = paired
      ? rec.map((r, i) => r.totalMs / c.direct[i]!.totalMs)
      : [recordMs / directMs];
    const rates = rep.map((r) => (r.calls - 1) / ((r.steadyMs ?? Number.NaN) / 1e3));
    return {
      id,
      label: TOOLS[id].label,
      recordMs,
      recordOverhead: median(overheads),
      replayPerSec: median(rates),
      replayRange: [Math.min(...rates), Math.max(...rates)],
      replayCpuUs: median(rep.map((r) => (r.steadyCpuUs ?? Number.NaN) / (r.calls - 1))),
      recordRange: [Math.min(...overheads), Math.max(...overheads)],
      coldMs: median(rep.map((r) => r.coldMs ?? Number.NaN)),
      bytes: median(rec.map((r) => r.recordingBytes ?? Number.NaN)),
      cacheBytes: Math.max(0, ...rep.map((r) => r.cacheBytes ?? 0)),
      rssMiB: median(rep.map((r) => r.maxRssKiB / 1024)),
      recordRssMiB: median(rec.map((r) => r.maxRssKiB / 1024)),
      missNamesField: namesDifferingField(missMessage),
      missMs: probe?.missMs ?? Number.NaN,
      missMessage:
        probe === undefined
          ? "(not probed)"
          : probe.missAnswered
            ? "(answered: no error)"
            : missMessage,
      repeat: probe === undefined ? "(not probed)" : describeRepeat(probe.repeat),
      ...(probe?.repeatInRun === undefined
        ? {}
        : { repeatInRun: describeRepeat(probe.repeatInRun) }),
    };
  });
}

/**
 * How much faster than the best peer each embedded store must replay
 * (issue "fastest replay"): the cassette 1.5×, SQLite 1.3×. The shared
 * stores (Redis, Postgres) are reported beside them without a target.
 */
export const REPLAY_TARGETS: Partial<Record<ToolId, number>> = {
  "invocache-cassette": 1.5,
  "invocache-sqlite": 1.3,
  // The opt-in driver, when a build is named: the same target, for the engine question.
  "invocache-sqlite-better": 1.3,
};

export function targets(c: Collected, tools: readonly ToolSummary[]): Target[] {
  const ours = tools.filter((t) => t.id.startsWith("invocache"));
  const peers = tools.filter((t) => !t.id.startsWith("invocache"));
  const fastest = peers.reduce((a, b) => (b.replayPerSec > a.replayPerSec ? b : a));
  const smallest = peers.reduce((a, b) => (b.bytes < a.bytes ? b : a));
  const out: Target[] = [];
  for (const t of ours) {
    const factor = REPLAY_TARGETS[t.id];
    if (factor === undefined) continue;
    out.push({
      name: `replay throughput: ${t.label} ≥ ${factor}× best peer (${fastest.label})`,
      pass: t.replayPerSec >= factor * fastest.replayPerSec,
      detail: `${fmt(t.replayPerSec)} vs ${fmt(fastest.replayPerSec)} calls/s (${ratio(t.replayPerSec, fastest.replayPerSec)})`,
    });
  }
  // The same factor by CPU per replayed call (issue 32): calls/s alone moves
  // with whatever else the machine runs; CPU per call is steadier, so a
  // lead must show in both to count. Lower is better here.
  const leanest = peers.reduce((a, b) => (b.replayCpuUs < a.replayCpuUs ? b : a));
  for (const t of ours) {
    const factor = REPLAY_TARGETS[t.id];
    if (factor === undefined || !Number.isFinite(t.replayCpuUs)) continue;
    out.push({
      name: `replay CPU per call: ${t.label} ≤ 1/${factor} of best peer (${leanest.label})`,
      pass: t.replayCpuUs * factor <= leanest.replayCpuUs,
      detail: `${fmt(t.replayCpuUs)} vs ${fmt(leanest.replayCpuUs)} µs/call (${ratio(leanest.replayCpuUs, t.replayCpuUs)} leaner)`,
    });
  }
  // Recording overhead (× a direct call) no worse than the best peer's (issue 32).
  const lightest = peers.reduce((a, b) => (b.recordOverhead < a.recordOverhead ? b : a));
  for (const t of ours) {
    if (REPLAY_TARGETS[t.id] === undefined) continue;
    out.push({
      name: `recording overhead: ${t.label} ≤ best peer (${lightest.label})`,
      pass: t.recordOverhead <= lightest.recordOverhead,
      detail: `${t.recordOverhead.toFixed(2)}× vs ${lightest.recordOverhead.toFixed(2)}× direct`,
    });
  }
  // The SDK floor: its ratio is printed by renderFloor, without a target (floor.ts).
  for (const t of ours) {
    // A shared store's recording lives on its server: not compared.
    if (!Number.isFinite(t.bytes)) continue;
    out.push({
      name: `recording size: ${t.label} ≤ best peer (${smallest.label})`,
      pass: t.bytes <= smallest.bytes,
      detail: `${bytes(t.bytes)} vs ${bytes(smallest.bytes)} (${ratio(t.bytes, smallest.bytes)})`,
    });
  }
  // Cold start as a whole process, on the issue's 100-entry recording.
  const nockCold = median(c.coldStart["nock-back"] ?? []);
  for (const id of ["invocache-cassette", "invocache-sqlite", "invocache-sqlite-better"] as const) {
    const ms = median(c.coldStart[id] ?? []);
    if (!Number.isFinite(ms) || !Number.isFinite(nockCold)) continue;
    out.push({
      name: `cold start, whole process (${c.settings.coldStartCalls}-entry recording): ${TOOLS[id].label} ≤ nock.back`,
      pass: ms <= nockCold,
      detail: `${fmt(ms)} vs ${fmt(nockCold)} ms (${ratio(ms, nockCold)}), median of ${c.coldStart[id]?.length} processes`,
    });
  }
  // A fresh checkout (no parsed-form cache) opens its cassette within 2× Polly's cold load.
  const cassette = tools.find((t) => t.id === "invocache-cassette");
  const polly = tools.find((t) => t.id === "polly");
  if (cassette !== undefined && polly !== undefined) {
    out.push({
      name: `cold load: ${cassette.label} (no parsed-form cache) ≤ 2× ${polly.label}`,
      pass: cassette.coldMs <= 2 * polly.coldMs,
      detail: `${fmt(cassette.coldMs)} vs ${fmt(polly.coldMs)} ms (${ratio(cassette.coldMs, polly.coldMs)})`,
    });
  }
  const naming = tools.filter((t) => t.missNamesField).map((t) => t.label);
  out.push({
    name: "only invocache's miss message names the differing field",
    pass: ours.every((t) => t.missNamesField) && peers.every((t) => !t.missNamesField),
    detail: `names it: ${naming.length === 0 ? "none" : naming.join(", ")}`,
  });
  return out;
}

export function fmt(v: number): string {
  if (!Number.isFinite(v)) return "–";
  if (v >= 100) return Math.round(v).toLocaleString("en-US");
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

export function bytes(n: number): string {
  if (!Number.isFinite(n)) return "–";
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} kB`;
  return `${n} B`;
}

function ratio(v: number, base: number): string {
  return Number.isFinite(v / base) ? `${(v / base).toFixed(2)}×` : "–";
}

function align(rows: readonly (readonly string[])[], numericFrom: number): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((s, c) => (c >= numericFrom ? s.padStart(widths[c]!) : s.padEnd(widths[c]!))).join(" | ")} |`;
  const rule = `| ${widths.map((w, c) => (c >= numericFrom ? `${"-".repeat(w - 1)}:` : "-".repeat(w))).join(" | ")} |`;
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join("\n");
}

/** The side-by-side table: each cell is the median and its ratio to invocache + cassette. */
export function renderTable(tools: readonly ToolSummary[]): string {
  const base = tools.find((t) => t.id === "invocache-cassette")!;
  const cell = (v: string, r: number, b: number) => `${v} (${ratio(r, b)})`;
  const rows: string[][] = [
    [
      "tool",
      "record, × direct",
      "replay, calls/s",
      "replay CPU, µs/call",
      "cold load, ms",
      "recording on disk",
      "peak RSS replay, MiB",
    ],
    ...tools.map((t) => [
      t.label,
      cell(`${t.recordOverhead.toFixed(2)}×`, t.recordOverhead, base.recordOverhead),
      cell(fmt(t.replayPerSec), t.replayPerSec, base.replayPerSec),
      cell(fmt(t.replayCpuUs), t.replayCpuUs, base.replayCpuUs),
      cell(fmt(t.coldMs), t.coldMs, base.coldMs),
      cell(bytes(t.bytes), t.bytes, base.bytes),
      cell(fmt(t.rssMiB), t.rssMiB, base.rssMiB),
    ]),
  ];
  return align(rows, 1);
}

export function renderBehaviour(tools: readonly ToolSummary[]): string {
  const rows: string[][] = [
    [
      "tool",
      "miss names the field",
      "miss, ms",
      "miss: what it throws (first line)",
      "same request twice",
    ],
    ...tools.map((t) => [
      t.label,
      t.missNamesField ? "yes" : "no",
      fmt(t.missMs),
      firstLine(t.missMessage, 110),
      t.repeatInRun === undefined
        ? t.repeat
        : `${t.repeat}; inside recorder.run(): ${t.repeatInRun}`,
    ]),
  ];
  return align(rows, 99);
}

export function renderTargets(ts: readonly Target[]): string {
  return ts.map((t) => `${t.pass ? "PASS" : "MISS"}  ${t.name}: ${t.detail}`).join("\n");
}

/** Notes a reader needs: baseline numbers, run shape, the leak check. */
export function renderNotes(c: Collected, tools: readonly ToolSummary[]): string[] {
  const s = c.settings;
  const directMs = median(c.direct.map((r) => r.totalMs));
  const notes = [
    `${s.calls} calls per run (${s.calls / 10} streamed), ~4 KiB prompts, sequential, real openai SDK (maxRetries 0) against a loopback fake provider; medians of ${s.recordRounds} record and ${s.replayRounds} replay rounds, tools interleaved (order rotated each round), each run in a fresh child process.`,
    `direct (no tool): ${fmt(directMs)} ms for ${s.calls} calls (${fmt(s.calls / (directMs / 1e3))} calls/s), peak RSS ${fmt(median(c.direct.map((r) => r.maxRssKiB / 1024)))} MiB: the floor every RSS above includes (node, the harness, openai).`,
    s.harness === "sources"
      ? "every child ran child.ts under `node --import tsx` with invocache's TypeScript sources (`--sources`): each ES module import made a round trip to tsx's loader thread, a cost invocache's ESM files paid inside the timed cold load and CommonJS nock mostly did not."
      : "every child, for every tool, is plain `node` (no tsx) running the same harness, bundled once per run with esbuild (packages imported from node_modules as they ship; invocache from its compiled package dist/, built first when older than src/), as a user's process runs each tool.",
    "record: open, every call live, close (persisting the recording); × direct = median over the rounds of the record time / the direct time of the same round.",
    "replay: calls/s over calls 2..N; CPU = user + system time of the whole process (GC and thread-pool work included) over those calls, per call, which other jobs on the machine disturb less than wall time; cold load = opening the tool and its first replayed call (every tool has loaded its recording by then); provider stopped (a port tripwire counted zero connections).",
    `spread over the rounds (lowest–highest): replay calls/s ${tools.map((t) => `${t.label} ${fmt(t.replayRange[0])}–${fmt(t.replayRange[1])}`).join(", ")}; record × direct ${tools.map((t) => `${t.label} ${t.recordRange[0].toFixed(2)}–${t.recordRange[1].toFixed(2)}`).join(", ")}.`,
  ];
  const cassette = tools.find((t) => t.id === "invocache-cassette")!;
  const warm = c.warmCassette;
  notes.push(
    "invocache + cassette: cold load measured as on a fresh checkout (its parsed-form cache removed before each round)" +
      (warm.length > 0
        ? `; with the cache warm (a second run on the same checkout, ${warm.length} runs) ${fmt(median(warm.map((r) => r.coldMs ?? Number.NaN)))} ms cold, ${fmt(median(warm.map((r) => (r.calls - 1) / ((r.steadyMs ?? Number.NaN) / 1e3))))} calls/s, peak RSS ${fmt(median(warm.map((r) => r.maxRssKiB / 1024)))} MiB`
        : "") +
      `. The cache (.invocache/cassette-cache/, ${bytes(cassette.cacheBytes)}, never committed) is not counted in "recording on disk".`,
  );
  notes.push(
    `peak RSS while recording, MiB: ${tools.map((t) => `${t.label} ${fmt(t.recordRssMiB)}`).join(", ")}.`,
  );
  if (c.leak !== undefined) {
    const bad = c.leak.checks.filter((x) => !x.ok);
    notes.push(
      bad.length === 0
        ? `leak check: all ${c.tools.length} tools recorded and replayed one after the other in one process, then invocache again; after each teardown fetch, Request, Response, Headers and http(s).request/get/ClientRequest were the originals and a plain fetch reached the network.`
        : `leak check: ${bad.map((x) => `${TOOLS[x.tool].label}: ${x.problems.join("; ")}`).join(" | ")}`,
    );
  }
  return notes;
}

export function renderConsole(c: Collected): string {
  const tools = summarize(c);
  return [
    renderTable(tools),
    "",
    renderBehaviour(tools),
    "",
    renderTargets(targets(c, tools)),
    "",
    ...renderNotes(c, tools).map((n) => `- ${n}`),
  ].join("\n");
}

/** The "Peers" section of docs/performance.md. */
export function renderDocSection(c: Collected): string {
  const tools = summarize(c);
  const m = c.machine;
  const out: string[] = [
    "invocache beside what users would pick instead, on the same work in the same run:",
    `${c.settings.calls.toLocaleString("en-US")} distinct chat-completion calls (prompts of ~4 KiB, every tenth one streamed) made through`,
    "the real `openai` SDK against the loopback fake provider, recorded once per tool and",
    "replayed with the provider stopped. Every replayed answer is compared with the recorded",
    "one and the run fails on any difference or any upstream connection during replay.",
    "",
    "```sh",
    "npm run bench:peers            # this table (3–5 minutes here), rewrites this section",
    "npm run bench:peers -- --quick # 100 calls, 1 round: a smoke run, writes nothing",
    "```",
    "",
    `Measured on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}; load average ${m.load1} at the start${m.load1 > m.cores / 2 ? " (a busy machine: other jobs shared the cores, so expect noise)" : ""}; ${fmt(c.seconds)} s in all.`,
    "Medians; in parentheses the ratio to invocache with a cassette.",
    "",
    renderTable(tools),
    "",
    ...renderNotes(c, tools).map((n) => `- ${n}`),
    "",
    ...(c.leftOut.length === 0 ? [] : [`Left out of this run: ${c.leftOut.join("; ")}.`, ""]),
    "### The SDK floor and cold start",
    "",
    "The same calls through the real openai client with a `fetch` answering bytes captured once (no replay tool can be faster), and each tool's replayed calls/s as a fraction of it; then the whole process from node's start to the first replayed answer.",
    "",
    "```text",
    renderFloor(c),
    "```",
    "",
    "How each tool was set up:",
    "",
    ...tools.map((t) => `- ${t.label}: ${TOOLS[t.id].setup}.`),
    "",
    "### Targets",
    "",
    ...targets(c, tools).map((t) => `- **${t.pass ? "PASS" : "MISS"}** ${t.name}: ${t.detail}`),
    "",
    "### A miss and a repeated request",
    "",
    `The miss: call ${"#"}1 again with \`temperature\` ${MISS_TEMPERATURE} instead of ${TEMPERATURE}. The repeat: the same recorded request twice in one replay session. Both run on a ${c.settings.probeCalls}-call recording of the same workload, for every tool ("miss, ms" is the time to throw there).`,
    "",
    renderBehaviour(tools),
    "",
  ];
  for (const t of tools) {
    const text = t.missMessage.length > 1500 ? `${t.missMessage.slice(0, 1500)}…` : t.missMessage;
    // Longer than any backtick run in the message (a prompt diff may hold a code fence).
    const fence = "`".repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
    out.push(
      `<details><summary>${t.label}: the full miss message (${t.missMessage.length.toLocaleString("en-US")} characters${t.missMessage.length > 1500 ? ", first 1,500 shown" : ""})</summary>`,
      "",
      `${fence}text`,
      text,
      fence,
      "",
      "</details>",
      "",
    );
  }
  return out.join("\n");
}

export const BEGIN =
  "<!-- bench:peers begin: written by `npm run bench:peers`, edits here are lost -->";
export const END = "<!-- bench:peers end -->";

/**
 * `doc` with the generated part of its "## Peers" section (between
 * {@link BEGIN} and {@link END}) replaced by `generated`. Text of the section
 * outside the markers (analysis written by hand) and every other section are
 * kept. A missing section is appended; a section without markers gets them
 * after its heading, its existing text kept below.
 */
export function withPeersSection(doc: string, generated: string): string {
  const block = `${BEGIN}\n\n${generated.trim()}\n\n${END}`;
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin >= 0 && end > begin) {
    return doc.slice(0, begin) + block + doc.slice(end + END.length);
  }
  const heading = /^## Peers[ \t]*$/m.exec(doc);
  if (heading === null) {
    const base = doc.length === 0 ? "# Performance\n" : doc;
    return `${base.endsWith("\n") ? base : `${base}\n`}\n## Peers\n\n${block}\n`;
  }
  const after = heading.index + heading[0].length;
  const rest = doc.slice(after).replace(/^\n+/, "");
  return `${doc.slice(0, after)}\n\n${block}\n${rest === "" ? "" : `\n${rest}`}`;
}
