/**
 * The proxy servers table of `npm run bench:peers` (`--servers-only` runs
 * just this): record/replay servers that any SDK points its base URL at,
 * measured with the real `openai` SDK making N distinct calls with ~4 KiB
 * prompts (the peers workload, plain calls), one after the other, in this
 * process:
 *
 * - the floor: a constant local HTTP server answering every call with one
 *   prebuilt response (no proxy can beat the client's own round trip);
 * - `invocache proxy` replaying from SQLite and from a cassette, every
 *   answer compared with the one recorded through it;
 * - aimock (`@copilotkit/aimock`) replaying its recorded fixtures, a first
 *   pass (a fresh server) and a warm one, every answer's text compared;
 * - recording through each, as a multiple of calling the upstream (the
 *   loopback fake provider) directly: two rounds into fresh stores, the
 *   faster kept (floor and direct calls likewise measured first and last);
 * - the proxy's cost over in-process `createFetch` on the same SQLite store.
 *
 * Options: `--server-calls N` (default 300). Timings need a quiet machine;
 * each row also gives the process's CPU time per call (client, proxy and
 * upstream all run in this process), which a busy machine disturbs far less
 * than wall time: on a shared machine compare the "× floor (CPU)" column.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type OpenAI from "openai";
import { createFetch } from "../../src/adapters/index.js";
import { createRecorder } from "../../src/index.js";
import { createProxy } from "../../src/proxy/index.js";
import { startFakeProvider } from "../../test/fake-provider/index.js";
import { type ChatRequest, client, request } from "./workload.js";

export interface ServerRow {
  name: string;
  callsPerSecond: number;
  /** CPU time of this process per call (user + system), µs. */
  cpuUsPerCall: number;
  /** Answers checked against the recording (replays) or the upstream's (records). */
  checked: number;
  mismatches: number;
  note: string;
}

export interface ServersResult {
  calls: number;
  rows: ServerRow[];
  /** Recording through X, as a multiple of the direct calls' time. */
  recordMultiple: Record<string, number>;
  /** The same by CPU time of this process (a busy machine disturbs it less; fsync waits are not CPU). */
  recordCpuMultiple: Record<string, number>;
  /** Proxy replay time per call over in-process createFetch replay, µs. */
  proxyCostUs: number;
  failures: string[];
}

/** Call i of the servers workload: the peers workload's request, never streamed. */
function plain(i: number): ChatRequest {
  const { stream: _stream, ...body } = request(i) as ChatRequest & { stream?: boolean };
  return body as ChatRequest;
}

async function completion(openai: OpenAI, i: number): Promise<OpenAI.Chat.ChatCompletion> {
  return openai.chat.completions.create(
    plain(i) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
  );
}

/** Run every call, in order; returns the wall time (ms) and the answers. */
async function pass(
  openai: OpenAI,
  calls: number,
): Promise<{ ms: number; cpuUs: number; answers: OpenAI.Chat.ChatCompletion[] }> {
  const answers: OpenAI.Chat.ChatCompletion[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) answers.push(await completion(openai, i));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuUs: (cpu.user + cpu.system) / calls, answers };
}

const text = (c: OpenAI.Chat.ChatCompletion) => c.choices[0]?.message.content ?? "";

/** A constant server: one prebuilt chat completion for every request. */
async function startConstant(): Promise<{ url: string; close(): Promise<void> }> {
  const body = JSON.stringify({
    id: "chatcmpl-constant",
    object: "chat.completion",
    created: 1,
    model: "gpt-bench",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: "constant" },
        finish_reason: "stop",
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Compare replayed answers with the recorded ones; exact JSON, or only the text (`loose`). */
function check(
  recorded: OpenAI.Chat.ChatCompletion[],
  replayed: OpenAI.Chat.ChatCompletion[],
  loose = false,
): number {
  let mismatches = 0;
  recorded.forEach((r, i) => {
    const p = replayed[i];
    const same =
      p !== undefined && (loose ? text(p) === text(r) : JSON.stringify(p) === JSON.stringify(r));
    if (!same) mismatches++;
  });
  return mismatches;
}

export async function runServers(
  calls: number,
  log: (line: string) => void,
  options: { cassetteFirst?: boolean } = {},
): Promise<ServersResult> {
  const dir = mkdtempSync(join(tmpdir(), "invocache-servers-"));
  const failures: string[] = [];
  const rows: ServerRow[] = [];
  const recordMultiple: Record<string, number> = {};
  const recordCpuMultiple: Record<string, number> = {};
  const rate = (ms: number) => (calls / ms) * 1e3;
  const provider = await startFakeProvider();
  const upstream = `${provider.url}/v1`;
  try {
    // The floor and the direct calls are measured first and again last, and
    // the faster of each kept: measured only first, while the process is
    // still cold, they read low and flatter every ratio taken against them.
    const constant = await startConstant();
    await pass(client(`${constant.url}/v1`), Math.min(20, calls)); // warm the client's sockets
    const floorFirst = await pass(client(`${constant.url}/v1`), calls);
    const floorRow: ServerRow = {
      name: "constant server (floor)",
      callsPerSecond: rate(floorFirst.ms),
      cpuUsPerCall: floorFirst.cpuUs,
      checked: calls,
      mismatches: floorFirst.answers.filter((a) => text(a) !== "constant").length,
      note: "one prebuilt response",
    };
    rows.push(floorRow);
    log(`servers: floor ${rate(floorFirst.ms).toFixed(0)} calls/s (first)`);

    // The upstream, directly.
    const direct = await pass(client(upstream), calls);
    log(`servers: direct upstream ${rate(direct.ms).toFixed(0)} calls/s (first)`);

    // invocache proxy on SQLite and on a cassette: record, then replay.
    const sqliteUrl = `sqlite://${join(dir, "proxy.sqlite")}`;
    const recordedOn: Record<string, OpenAI.Chat.ChatCompletion[]> = {};
    const stores = [
      ["SQLite", sqliteUrl, `sqlite://${join(dir, "proxy-first.sqlite")}`],
      ["cassette", join(dir, "proxy.yaml"), join(dir, "proxy-first.yaml")],
    ] as const;
    // `--cassette-first` measures the two stores in the other order, to tell
    // a store's own cost from the cost of coming first (docs/performance.md,
    // "Proxy SQLite replay and recording (twelfth session)").
    for (const [name, store, spare] of options.cassetteFirst === true
      ? [...stores].reverse()
      : stores) {
      // Recorded twice, each time into a fresh store (every call a miss), the
      // faster kept: a single pass mostly measures a cold process. aimock's
      // recording is measured the same way.
      let recordedMs = Number.POSITIVE_INFINITY;
      let recordedCpu = Number.POSITIVE_INFINITY;
      let recorded: { answers: OpenAI.Chat.ChatCompletion[] } | undefined;
      for (const into of [spare, store]) {
        const recordProxy = await createProxy({
          store: into,
          mode: "record",
          upstreams: { bench: provider.url },
          env: {},
        });
        const round = await pass(client(`${recordProxy.url}/bench/v1`), calls);
        await recordProxy.close();
        recordedMs = Math.min(recordedMs, round.ms);
        recordedCpu = Math.min(recordedCpu, round.cpuUs);
        recorded = round;
      }
      if (recorded === undefined) throw new Error("unreachable: two recording rounds ran");
      recordedOn[name] = recorded.answers;
      recordMultiple[`invocache proxy (${name})`] = recordedMs / direct.ms;
      recordCpuMultiple[`invocache proxy (${name})`] = recordedCpu / direct.cpuUs;
      const replayProxy = await createProxy({
        store,
        mode: "replay",
        upstreams: { bench: provider.url },
        env: {},
      });
      const before = provider.calls;
      // A fresh proxy (first pass), then the same one again (warm), as aimock's rows.
      for (const pass_ of ["first pass", "warm"] as const) {
        const replayed = await pass(client(`${replayProxy.url}/bench/v1`), calls);
        const mismatches = check(recorded.answers, replayed.answers);
        if (mismatches > 0)
          failures.push(`invocache proxy (${name}, ${pass_}): ${mismatches} answers differ`);
        rows.push({
          name: `invocache proxy replay (${name}, ${pass_})`,
          callsPerSecond: rate(replayed.ms),
          cpuUsPerCall: replayed.cpuUs,
          checked: calls,
          mismatches,
          note: "every answer equal to the recorded one (JSON)",
        });
        log(
          `servers: invocache proxy (${name}) replay ${pass_} ${rate(replayed.ms).toFixed(0)} calls/s, ${replayed.cpuUs.toFixed(0)} µs CPU/call`,
        );
      }
      await replayProxy.close();
      if (provider.calls !== before)
        failures.push(`invocache proxy (${name}) replay went upstream`);
    }

    // In-process createFetch on the same SQLite store, for the proxy's cost.
    const recorder = createRecorder({ store: sqliteUrl, mode: "replay", env: {} });
    const inProcess = await pass(
      // The proxy hands createFetch the upstream URL itself: same origin, same identities.
      client(upstream, createFetch({ recorder })),
      calls,
    );
    await recorder.close();
    const inProcessMismatches = check(recordedOn.SQLite ?? [], inProcess.answers);
    if (inProcessMismatches > 0) {
      failures.push(`in-process createFetch: ${inProcessMismatches} answers differ`);
    }
    const proxyRow = rows.find((r) => r.name === "invocache proxy replay (SQLite, warm)");
    const proxyMs = proxyRow === undefined ? Number.NaN : (calls / proxyRow.callsPerSecond) * 1e3;
    const proxyCostUs = ((proxyMs - inProcess.ms) / calls) * 1e3;
    rows.push({
      name: "in-process createFetch replay (SQLite)",
      callsPerSecond: rate(inProcess.ms),
      cpuUsPerCall: inProcess.cpuUs,
      checked: calls,
      mismatches: inProcessMismatches,
      note: "same store, no proxy hop; answers equal to the proxy's recording",
    });

    // aimock: record through it, then replay a fresh server (first pass) and again (warm).
    const beforeAimock = provider.calls;
    await aimockRows(
      calls,
      provider.url,
      dir,
      direct,
      rows,
      recordMultiple,
      recordCpuMultiple,
      failures,
      log,
    );
    if (recordMultiple.aimock !== undefined && provider.calls - beforeAimock !== 2 * calls) {
      failures.push(
        `aimock record: ${provider.calls - beforeAimock} upstream calls for ${calls} in each of two rounds`,
      );
    }

    // The floor and the direct calls again, warm: the faster of each run counts.
    const floorLast = await pass(client(`${constant.url}/v1`), calls);
    await constant.close();
    log(`servers: floor ${rate(floorLast.ms).toFixed(0)} calls/s (last)`);
    if (floorLast.ms < floorFirst.ms) {
      floorRow.callsPerSecond = rate(floorLast.ms);
      floorRow.cpuUsPerCall = floorLast.cpuUs;
      floorRow.note = `one prebuilt response; the faster of a first (${rate(floorFirst.ms).toFixed(0)}/s) and a last run`;
    } else {
      floorRow.note = `one prebuilt response; the faster of a first and a last (${rate(floorLast.ms).toFixed(0)}/s) run`;
    }
    const directLast = await pass(client(upstream), calls);
    log(`servers: direct upstream ${rate(directLast.ms).toFixed(0)} calls/s (last)`);
    if (directLast.ms < direct.ms) {
      for (const k of Object.keys(recordMultiple))
        recordMultiple[k] = ((recordMultiple[k] as number) * direct.ms) / directLast.ms;
    }
    if (directLast.cpuUs < direct.cpuUs) {
      for (const k of Object.keys(recordCpuMultiple))
        recordCpuMultiple[k] = ((recordCpuMultiple[k] as number) * direct.cpuUs) / directLast.cpuUs;
    }

    return { calls, rows, recordMultiple, recordCpuMultiple, proxyCostUs, failures };
  } finally {
    await provider.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function aimockRows(
  calls: number,
  providerUrl: string,
  dir: string,
  direct: { ms: number; cpuUs: number },
  rows: ServerRow[],
  recordMultiple: Record<string, number>,
  recordCpuMultiple: Record<string, number>,
  failures: string[],
  log: (line: string) => void,
): Promise<void> {
  let LLMock: typeof import("@copilotkit/aimock").LLMock;
  try {
    ({ LLMock } = await import("@copilotkit/aimock"));
  } catch {
    rows.push({
      name: "aimock",
      callsPerSecond: Number.NaN,
      cpuUsPerCall: Number.NaN,
      checked: 0,
      mismatches: 0,
      note: "not installed",
    });
    return;
  }
  const rate = (ms: number) => (calls / ms) * 1e3;
  const fixtures = join(dir, "aimock");
  // Recorded twice into fresh fixture folders, the faster kept (as the proxy's).
  let recordedMs = Number.POSITIVE_INFINITY;
  let recordedCpu = Number.POSITIVE_INFINITY;
  let recorded: { answers: OpenAI.Chat.ChatCompletion[] } | undefined;
  for (const into of [join(dir, "aimock-first"), fixtures]) {
    const recorder = new LLMock({
      port: 0,
      record: { providers: { openai: providerUrl }, fixturePath: into },
    });
    await recorder.start();
    const round = await pass(client(`${recorder.url}/v1`), calls);
    await recorder.stop();
    recordedMs = Math.min(recordedMs, round.ms);
    recordedCpu = Math.min(recordedCpu, round.cpuUs);
    recorded = round;
  }
  if (recorded === undefined) throw new Error("unreachable: two recording rounds ran");
  recordMultiple.aimock = recordedMs / direct.ms;
  recordCpuMultiple.aimock = recordedCpu / direct.cpuUs;
  const replayer = new LLMock({ port: 0 });
  replayer.loadFixtureDir(fixtures);
  await replayer.start();
  const first = await pass(client(`${replayer.url}/v1`), calls);
  const warm = await pass(client(`${replayer.url}/v1`), calls);
  await replayer.stop();
  for (const [name, run] of [
    ["aimock replay (first pass)", first],
    ["aimock replay (warm)", warm],
  ] as const) {
    const mismatches = check(recorded.answers, run.answers, true);
    if (mismatches > 0) failures.push(`${name}: ${mismatches} answers' text differs`);
    rows.push({
      name,
      callsPerSecond: rate(run.ms),
      cpuUsPerCall: run.cpuUs,
      checked: calls,
      mismatches,
      note: "every answer's text equal to the recorded one",
    });
    log(`servers: ${name} ${rate(run.ms).toFixed(0)} calls/s, ${run.cpuUs.toFixed(0)} µs CPU/call`);
  }
}

/** The table, with each replay as a multiple of the floor. */
export function renderServers(r: ServersResult): string {
  const floor = r.rows[0]?.callsPerSecond ?? Number.NaN;
  const floorCpu = r.rows[0]?.cpuUsPerCall ?? Number.NaN;
  const lines = [
    `Proxy servers: ${r.calls} distinct calls, ~4 KiB prompts, real openai SDK, sequential`,
    "",
    "| server | calls/s | × floor | CPU µs/call | × floor (CPU) | answers checked | mismatches | note |",
    "| --- | --: | --: | --: | --: | --: | --: | --- |",
    ...r.rows.map(
      (row) =>
        `| ${row.name} | ${fmt(row.callsPerSecond)} | ${fmt(row.callsPerSecond / floor, 2)} | ${fmt(row.cpuUsPerCall)} | ${fmt(floorCpu / row.cpuUsPerCall, 2)} | ${row.checked} | ${row.mismatches} | ${row.note} |`,
    ),
    "",
    "Recording, as a multiple of calling the upstream directly:",
    ...Object.entries(r.recordMultiple).map(
      ([k, v]) =>
        `- ${k}: ${fmt(v, 2)}× (by CPU time: ${fmt(r.recordCpuMultiple[k] ?? Number.NaN, 2)}×)`,
    ),
    "",
    `Proxy cost over in-process createFetch (SQLite replay): ${fmt(r.proxyCostUs)} µs per call`,
  ];
  return lines.join("\n");
}

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "–";
}
