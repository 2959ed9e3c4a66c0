/**
 * One measured run in a fresh process, forked by bench/peers/run.ts: the
 * direct baseline, one tool recording, one tool replaying, the miss/repeat
 * probes of one tool, or the in-process leak check. A fresh process per run
 * gives each tool its own peak RSS, a true cold load and untouched globals
 * (nock patches them as soon as it is imported). Results go to the parent
 * over IPC; the process exits 0 even when a check fails (the result says so).
 */
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { availableTools, type SessionMode, TOOLS, type ToolId } from "./tools.js";
import {
  call,
  client,
  errorChain,
  MISS_TEMPERATURE,
  PROBE_CALL,
  request,
  TEMPERATURE,
} from "./workload.js";

export type ChildTask =
  | { phase: "direct"; baseUrl: string; calls: number }
  /** The SDK's own floor: the same calls through the openai client with a fetch answering constant bytes. */
  | { phase: "floor"; baseUrl: string; calls: number }
  | {
      phase: "record";
      tool: ToolId;
      dir: string;
      baseUrl: string;
      calls: number;
      /** After the timed run: record `probeCalls` calls into `probeDir` and probe a miss and a repeat there. */
      probe?: { dir: string; calls: number };
    }
  | { phase: "replay"; tool: ToolId; dir: string; baseUrl: string; calls: number }
  | { phase: "leak-check"; dir: string; baseUrl: string; calls: number };

/** Timings of one run; ms from `performance.now()`. */
export interface RunResult {
  phase: "direct" | "floor" | "record" | "replay";
  tool?: ToolId;
  calls: number;
  /** direct: all calls. record: open, calls, close (persist). replay: open + every call. */
  totalMs: number;
  /** replay: open and the first call (the recording is loaded by then, whatever the tool's laziness). */
  coldMs?: number;
  /**
   * replay: from the process's start (performance.timeOrigin) to the end of
   * the first call: node and the harness, importing the tool, opening the
   * recording, the first replay. The harness part is the same for every tool.
   */
  processColdMs?: number;
  /** replay: calls 2..N. */
  steadyMs?: number;
  /** replay: CPU time (user + system, every thread of the process) over calls 2..N, µs. */
  steadyCpuUs?: number;
  /** close(): persisting, for record. */
  closeMs?: number;
  /** Replayed answers that differ from the recorded ones (replay). */
  mismatches?: number;
  recordingBytes?: number;
  cacheBytes?: number;
  /** process.resourceUsage().maxRSS, KiB (of the timed run, before any probe). */
  maxRssKiB: number;
  probe?: ProbeResult;
}

/** What a tool does on a miss and on a repeated request, in replay. */
export interface ProbeResult {
  /** Calls in the recording probed. */
  calls: number;
  /** The error chain of the call with the changed temperature (empty if it was answered). */
  miss: string[];
  missAnswered: boolean;
  /** How long the miss took to throw (or answer), ms. */
  missMs: number;
  /** The same request twice in one replay session. */
  repeat: RepeatOutcome;
  /** The same, inside a run scope, for tools that have one. */
  repeatInRun?: RepeatOutcome;
}

export type RepeatOutcome =
  | { kind: "same-answer" }
  | { kind: "different-answer" }
  | { kind: "error"; chain: string[] }
  | { kind: "first-call-failed"; chain: string[] };

export interface LeakResult {
  phase: "leak-check";
  /** One line per tool: what was checked after its teardown, and whether it held. */
  checks: { tool: ToolId; ok: boolean; problems: string[] }[];
}

export type ChildResult = RunResult | LeakResult | { phase: "error"; error: string };

const rssKiB = () => process.resourceUsage().maxRSS;

async function direct(task: Extract<ChildTask, { phase: "direct" }>): Promise<RunResult> {
  const openai = client(task.baseUrl);
  const requests = Array.from({ length: task.calls }, (_, i) => request(i));
  const started = performance.now();
  for (const body of requests) await call(openai, body);
  return {
    phase: "direct",
    calls: task.calls,
    totalMs: performance.now() - started,
    maxRssKiB: rssKiB(),
  };
}

/**
 * No replay tool can be faster than this: the real openai client whose
 * fetch returns a Response built from bytes fetched once up front (one
 * non-streamed and one streamed answer from the provider), so what is timed
 * is the SDK's own request building and response parsing. Timed like a
 * replay: calls 2..N are the steady state.
 */
async function floor(task: Extract<ChildTask, { phase: "floor" }>): Promise<RunResult> {
  const requests = Array.from({ length: task.calls }, (_, i) => request(i));
  const captured: { body: Uint8Array; headers: [string, string][] }[] = [];
  for (const streamed of [false, true]) {
    const i = requests.findIndex((r) => (r.stream === true) === streamed);
    let saved: { body: Uint8Array; headers: [string, string][] } | undefined;
    const capture: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      saved = { body: new Uint8Array(await res.arrayBuffer()), headers: [...res.headers] };
      return new Response(saved.body, { status: res.status, headers: saved.headers });
    };
    await call(client(task.baseUrl, capture), requests[i]!);
    captured.push(saved!);
  }
  const [json, sse] = captured as [(typeof captured)[0], (typeof captured)[0]];
  const constant: typeof fetch = async (_input, init) => {
    const streamed = typeof init?.body === "string" && init.body.includes('"stream":true');
    const c = streamed ? sse : json;
    return new Response(c.body, { status: 200, headers: c.headers });
  };
  const openai = client(task.baseUrl, constant);
  const started = performance.now();
  await call(openai, requests[0]!);
  const first = performance.now();
  for (const body of requests.slice(1)) await call(openai, body);
  const ended = performance.now();
  return {
    phase: "floor",
    calls: task.calls,
    totalMs: ended - started,
    coldMs: first - started,
    steadyMs: ended - first,
    maxRssKiB: rssKiB(),
  };
}

async function record(task: Extract<ChildTask, { phase: "record" }>): Promise<RunResult> {
  const tool = TOOLS[task.tool];
  const requests = Array.from({ length: task.calls }, (_, i) => request(i));
  await tool.preload();
  const answers: string[] = [];
  const started = performance.now();
  const session = await tool.open(task.dir, "record");
  const openai = client(task.baseUrl, session.fetch);
  for (const body of requests) answers.push(await call(openai, body));
  const closing = performance.now();
  await session.close(task.calls);
  const ended = performance.now();
  writeFileSync(join(task.dir, "answers.json"), JSON.stringify(answers));
  const result: RunResult = {
    phase: "record",
    tool: task.tool,
    calls: task.calls,
    totalMs: ended - started,
    closeMs: ended - closing,
    recordingBytes: tool.recordingBytes(task.dir),
    cacheBytes: tool.cacheBytes(task.dir),
    maxRssKiB: rssKiB(),
  };
  if (task.probe !== undefined) {
    const { dir, calls } = task.probe;
    const session = await tool.open(dir, "record");
    const probeClient = client(task.baseUrl, session.fetch);
    for (const body of requests.slice(0, calls)) await call(probeClient, body);
    await session.close(calls);
    result.probe = await probe(task.tool, dir, task.baseUrl, calls);
  }
  return result;
}

async function replay(task: Extract<ChildTask, { phase: "replay" }>): Promise<RunResult> {
  const tool = TOOLS[task.tool];
  const recorded = JSON.parse(readFileSync(join(task.dir, "answers.json"), "utf8")) as string[];
  if (recorded.length < task.calls) {
    throw new Error(`${task.tool}: ${recorded.length} recorded answers for ${task.calls} calls`);
  }
  const requests = Array.from({ length: task.calls }, (_, i) => request(i));
  await tool.preload();
  let mismatches = 0;
  const started = performance.now();
  const session = await tool.open(task.dir, "replay");
  const openai = client(task.baseUrl, session.fetch);
  const first = await call(openai, requests[0]!);
  const warm = performance.now();
  const cpu = process.cpuUsage();
  if (first !== recorded[0]) mismatches++;
  for (let i = 1; i < task.calls; i++) {
    if ((await call(openai, requests[i]!)) !== recorded[i]) mismatches++;
  }
  const ended = performance.now();
  const used = process.cpuUsage(cpu);
  await session.close(task.calls);
  return {
    phase: "replay",
    tool: task.tool,
    calls: task.calls,
    totalMs: ended - started,
    coldMs: warm - started,
    processColdMs: warm,
    steadyMs: ended - warm,
    steadyCpuUs: used.user + used.system,
    mismatches,
    recordingBytes: tool.recordingBytes(task.dir),
    cacheBytes: tool.cacheBytes(task.dir),
    maxRssKiB: rssKiB(),
  };
}

async function tryCall(
  fn: () => Promise<string>,
): Promise<{ ok: true; answer: string } | { ok: false; chain: string[] }> {
  try {
    return { ok: true, answer: await fn() };
  } catch (error) {
    return { ok: false, chain: errorChain(error) };
  }
}

async function repeatTwice(
  fn: () => Promise<string>,
  scope: <T>(f: () => Promise<T>) => Promise<T>,
): Promise<RepeatOutcome> {
  return scope(async () => {
    const first = await tryCall(fn);
    if (!first.ok) return { kind: "first-call-failed", chain: first.chain };
    const second = await tryCall(fn);
    if (!second.ok) return { kind: "error", chain: second.chain };
    return { kind: second.answer === first.answer ? "same-answer" : "different-answer" };
  });
}

/**
 * In replay: the request of call {@link PROBE_CALL} with another temperature
 * (a miss), then the recorded request twice (a repeat), plainly and inside a
 * run scope where the tool has one.
 */
async function probe(
  id: ToolId,
  dir: string,
  baseUrl: string,
  calls: number,
): Promise<ProbeResult> {
  const session = await TOOLS[id].open(dir, "replay");
  const openai = client(baseUrl, session.fetch);
  const missStarted = performance.now();
  const miss = await tryCall(() => call(openai, request(PROBE_CALL, MISS_TEMPERATURE)));
  const missMs = performance.now() - missStarted;
  const plain = <T>(f: () => Promise<T>) => f();
  const once = () => call(openai, request(PROBE_CALL, TEMPERATURE));
  const repeat = await repeatTwice(once, plain);
  const repeatInRun =
    session.runScope === undefined ? undefined : await repeatTwice(once, session.runScope);
  await session.close(0);
  return {
    calls,
    miss: miss.ok ? [] : miss.chain,
    missAnswered: miss.ok,
    missMs,
    repeat,
    ...(repeatInRun === undefined ? {} : { repeatInRun }),
  };
}

/**
 * All four tools in one process, one after the other (record `calls` calls,
 * replay them), checking after each teardown that the globals a tool may
 * patch are the originals again and that a plain request reaches the
 * network (a counting loopback server) instead of an interceptor.
 */
async function leakCheck(task: Extract<ChildTask, { phase: "leak-check" }>): Promise<LeakResult> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const probeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/leak-probe`;
  const globals = () => ({
    fetch: globalThis.fetch,
    Request: globalThis.Request,
    Response: globalThis.Response,
    Headers: globalThis.Headers,
    "http.ClientRequest": http.ClientRequest,
    "http.request": http.request,
    "http.get": http.get,
    "https.request": https.request,
    "https.get": https.get,
  });
  const original = globals();
  const checks: LeakResult["checks"] = [];
  try {
    // Every tool once, then invocache again: it must still work after the peers' patches.
    const sequence: ToolId[] = [...availableTools(), "invocache-cassette"];
    for (const [n, id] of sequence.entries()) {
      const problems: string[] = [];
      const dir = join(task.dir, `${n}-${id}`);
      for (const mode of ["record", "replay"] as SessionMode[]) {
        const session = await TOOLS[id].open(dir, mode);
        const openai = client(task.baseUrl, session.fetch);
        const answers: string[] = [];
        for (let i = 0; i < task.calls; i++) answers.push(await call(openai, request(i)));
        await session.close(task.calls);
        if (mode === "record") writeFileSync(join(dir, "answers.json"), JSON.stringify(answers));
        else {
          const recorded = JSON.parse(readFileSync(join(dir, "answers.json"), "utf8")) as string[];
          const bad = answers.filter((a, i) => a !== recorded[i]).length;
          if (bad > 0)
            problems.push(`${bad} replayed answers differ (after the earlier tools ran)`);
        }
        const now = globals();
        for (const [name, value] of Object.entries(now)) {
          if (value !== original[name as keyof typeof original]) {
            problems.push(`${name} still patched after ${mode} teardown`);
          }
        }
        const before = hits;
        const res = await tryCall(async () => (await fetch(probeUrl)).text());
        if (!res.ok) problems.push(`a plain fetch failed after ${mode}: ${res.chain.join(" <- ")}`);
        else if (hits !== before + 1)
          problems.push(`a plain fetch after ${mode} did not reach the network`);
      }
      checks.push({ tool: id, ok: problems.length === 0, problems });
    }
  } finally {
    server.close();
  }
  return { phase: "leak-check", checks };
}

async function main(task: ChildTask): Promise<ChildResult> {
  switch (task.phase) {
    case "direct":
      return direct(task);
    case "floor":
      return floor(task);
    case "record":
      return record(task);
    case "replay":
      return replay(task);
    case "leak-check":
      return leakCheck(task);
  }
}

const send = (result: ChildResult) =>
  new Promise<void>((resolve) => process.send?.(result, () => resolve()) ?? resolve());

if (process.argv[2] === undefined || process.send === undefined) {
  process.stderr.write("usage: forked by bench/peers/run.ts with a task (JSON)\n");
  process.exit(2);
}
let result: ChildResult;
try {
  result = await main(JSON.parse(process.argv[2]) as ChildTask);
} catch (e) {
  result = { phase: "error", error: e instanceof Error ? (e.stack ?? e.message) : String(e) };
}
await send(result);
process.exit(0);
