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
 * - aimock (`@copilotkit/aimock`) replaying its recorded fixtures, every
 *   answer's text compared;
 * - in-process `createFetch` on the same SQLite store (the proxy's cost is
 *   its warm replay's time per call over this one's);
 * - recording through each, as a multiple of calling the upstream (the
 *   loopback fake provider) directly, every recording's answer compared
 *   with the direct call's and every recording one upstream call.
 *
 * Measured in alternated rounds, because one pass per row cannot decide a
 * ratio on this machine (the floor alone moved 414 → 791 calls/s between
 * runs a minute apart; docs/performance.md): every replay round measures
 * every server once, in an order rotated each round, with a floor pass
 * before each server and after the last, and each server's ratio is taken
 * against the floor passes either side of it in the SAME round; the table
 * gives the median of those per-round ratios and their range. Each server gets a
 * fresh instance per round (its "first pass" row), then `passes` warm passes
 * over the same calls (its "warm" row). Recording likewise: each round
 * records into fresh stores, against the direct calls of that round. One
 * short round runs first, unmeasured, to warm the process.
 *
 * Options: `--server-calls N` (distinct calls, default 300),
 * `--server-rounds R` (replay rounds, default 7), `--server-record-rounds R`
 * (default 5), `--server-passes P` (warm passes per round, default 2). Each
 * row also gives the process's CPU time per call (client, proxy and upstream
 * all run in this process), which a busy machine disturbs far less than wall
 * time: on a shared machine compare the "× floor (CPU)" column.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type OpenAI from "openai";
import { createFetch } from "../../src/adapters/index.js";
import { createRecorder } from "../../src/index.js";
import { createProxy } from "../../src/proxy/index.js";
import { startFakeProvider } from "../../test/fake-provider/index.js";
import { type ChatRequest, client, request } from "./workload.js";

export interface ServerRow {
  name: string;
  /** Median over the rounds. */
  callsPerSecond: number;
  /** CPU time of this process per call (user + system), µs; median over the rounds. */
  cpuUsPerCall: number;
  /** × the floor of the same round, by calls/s, one per round. */
  ratios: number[];
  /** × the floor of the same round, by CPU per call (floor CPU / row CPU), one per round. */
  cpuRatios: number[];
  /** Answers checked against the recording (replays), over every round. */
  checked: number;
  mismatches: number;
  note: string;
}

/** A row with nothing measured yet. */
function emptyRow(name: string, note: string): ServerRow {
  return {
    name,
    callsPerSecond: Number.NaN,
    cpuUsPerCall: Number.NaN,
    ratios: [],
    cpuRatios: [],
    checked: 0,
    mismatches: 0,
    note,
  };
}

export interface ServersOptions {
  /** Replay rounds (default 7). */
  rounds?: number;
  /** Recording rounds (default 5). */
  recordRounds?: number;
  /** Warm passes per server per round (default 2). */
  passes?: number;
  /** Start each round's rotation with the cassette before SQLite. */
  cassetteFirst?: boolean;
}

export interface ServersResult {
  calls: number;
  rounds: number;
  recordRounds: number;
  passes: number;
  rows: ServerRow[];
  /** Recording through X, as a multiple of the same round's direct calls' time: median. */
  recordMultiple: Record<string, number>;
  /** The same by CPU time of this process (a busy machine disturbs it less; fsync waits are not CPU). */
  recordCpuMultiple: Record<string, number>;
  /** Every round's multiples, wall and CPU. */
  recordRoundMultiples: Record<string, { wall: number[]; cpu: number[] }>;
  /** Proxy warm replay time per call over in-process createFetch's, same round, µs: median. */
  proxyCostUs: number;
  /** The same by CPU per call, µs: median. */
  proxyCostCpuUs: number;
  /** Each row's per-round ratio to the same-size floor (a recorded answer's bytes), wall and CPU. */
  versusSized: Record<string, { wall: number[]; cpu: number[] }>;
  /**
   * Where a warm SQLite proxy replay's CPU goes, per call, median of the
   * rounds, everything answering the same bytes: the hop (same-size floor −
   * SDK alone: the client's socket, node:http, a server's answer), the
   * recorder's hit (in-process createFetch − SDK alone: identity, the
   * store's read, the answer) and the proxy's own rest (proxy − same-size
   * floor − hit).
   */
  split: { hopCpuUs: number; hitCpuUs: number; ownCpuUs: number };
  /** 1-minute load average at the start and at the end. */
  load: [number, number];
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

interface Pass {
  /** Wall time per call, ms. */
  ms: number;
  /** CPU time per call, µs. */
  cpuUs: number;
  answers: OpenAI.Chat.ChatCompletion[];
}

/** Run every call, in order, `times` times; per-call wall and CPU time and every answer. */
async function pass(openai: OpenAI, calls: number, times = 1): Promise<Pass> {
  const answers: OpenAI.Chat.ChatCompletion[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let t = 0; t < times; t++) {
    for (let i = 0; i < calls; i++) answers.push(await completion(openai, i));
  }
  const ms = (performance.now() - t0) / (calls * times);
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuUs: (cpu.user + cpu.system) / (calls * times), answers };
}

const text = (c: OpenAI.Chat.ChatCompletion) => c.choices[0]?.message.content ?? "";

/** An answer with only its text, the fake provider's reply number cut out. */
const unnumbered = (c: OpenAI.Chat.ChatCompletion): OpenAI.Chat.ChatCompletion =>
  ({
    choices: [{ message: { content: text(c).replace(/^reply #\d+ /, "") } }],
  }) as OpenAI.Chat.ChatCompletion;

/** The one prebuilt chat completion of the constant server (and of the constant fetch). */
const CONSTANT_BODY = JSON.stringify({
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

/** A fetch answering every call with `body`, in-process (no socket). */
const constantFetch =
  (body: string): typeof globalThis.fetch =>
  async () =>
    new Response(body, { status: 200, headers: { "content-type": "application/json" } });

/** A constant server: one prebuilt chat completion (`body`) for every request. */
async function startConstant(
  body = CONSTANT_BODY,
): Promise<{ url: string; close(): Promise<void> }> {
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

/**
 * Compare every replayed answer with the recorded one for its call (answer i
 * is call i mod the calls: passes repeat the calls); exact JSON, or only the
 * text (`loose`). A missing answer counts.
 */
function check(
  recorded: OpenAI.Chat.ChatCompletion[],
  replayed: OpenAI.Chat.ChatCompletion[],
  calls: number,
  loose = false,
): number {
  if (recorded.length < calls) return replayed.length;
  let mismatches = 0;
  replayed.forEach((p, i) => {
    const r = recorded[i % calls] as OpenAI.Chat.ChatCompletion;
    const same = loose ? text(p) === text(r) : JSON.stringify(p) === JSON.stringify(r);
    if (!same) mismatches++;
  });
  return mismatches;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** The mean per-call wall and CPU time of some passes (their answers are checked on their own). */
function meanPass(passes: readonly (Pass | undefined)[]): Pass {
  const got = passes.filter((p): p is Pass => p !== undefined);
  return {
    ms: got.reduce((n, p) => n + p.ms, 0) / got.length,
    cpuUs: got.reduce((n, p) => n + p.cpuUs, 0) / got.length,
    answers: [],
  };
}

/** One timed sample of a row in a round. */
interface Sample {
  row: string;
  pass: Pass;
  checked: number;
  mismatches: number;
}

/** A contender in a round: measures one or more rows (a fresh instance, then warm passes). */
interface Contender {
  name: string;
  run(calls: number, passes: number): Promise<Sample[]>;
}

/** Rotate `xs` left by `r`: round r starts with a different contender. */
function rotate<T>(xs: readonly T[], r: number): T[] {
  const k = r % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

const FLOOR = "constant server (floor)";
const IN_PROCESS = "in-process createFetch replay (SQLite)";
const SDK_ALONE = "SDK alone (in-process constant fetch, recorded size)";
const SIZED_FLOOR = "constant server, a recorded answer's size";

export async function runServers(
  calls: number,
  log: (line: string) => void,
  options: ServersOptions = {},
): Promise<ServersResult> {
  const rounds = options.rounds ?? 7;
  const recordRounds = options.recordRounds ?? 5;
  const passes = options.passes ?? 2;
  const load0 = loadavg()[0] as number;
  const dir = mkdtempSync(join(tmpdir(), "invocache-servers-"));
  const failures: string[] = [];
  const provider = await startFakeProvider();
  const constant = await startConstant();
  const closers: (() => Promise<void>)[] = [];
  const upstream = `${provider.url}/v1`;
  let aimock: typeof import("@copilotkit/aimock").LLMock | undefined;
  try {
    ({ LLMock: aimock } = await import("@copilotkit/aimock"));
  } catch {
    log("servers: aimock is not installed; its rows are left out");
  }
  try {
    // Recording rounds. Round 0's stores are the ones replayed afterwards.
    const sqliteUrl = `sqlite://${join(dir, "proxy.sqlite")}`;
    const cassettePath = join(dir, "proxy.yaml");
    const fixtures = join(dir, "aimock");
    const recordedOn: Record<string, OpenAI.Chat.ChatCompletion[]> = {};
    const recordRoundMultiples: Record<string, { wall: number[]; cpu: number[] }> = {};
    const stores = [
      // r < 0: the warm-up round's throwaway stores.
      ["SQLite", (r: number) => (r === 0 ? sqliteUrl : `sqlite://${join(dir, `rec-${r}.sqlite`)}`)],
      ["cassette", (r: number) => (r === 0 ? cassettePath : join(dir, `rec-${r}.yaml`))],
    ] as const;
    const ordered = options.cassetteFirst === true ? [...stores].reverse() : stores;
    await recordingRound(-1, Math.min(30, calls)); // warm-up, unmeasured
    for (let r = 0; r < recordRounds; r++) await recordingRound(r, calls);

    async function recordingRound(r: number, n: number): Promise<void> {
      const warmup = r < 0;
      let direct: Pass | undefined;
      const taken: Record<string, Pass> = {};
      const recorders: Contender[] = [
        {
          name: "direct",
          run: async (c) => {
            direct = await pass(client(upstream), c);
            return [];
          },
        },
        ...ordered.map(
          ([name, into]): Contender => ({
            name: `invocache proxy (${name})`,
            run: async (c) => {
              const proxy = await createProxy({
                store: into(r),
                mode: "record",
                upstreams: { bench: provider.url },
                env: {},
              });
              const before = provider.calls;
              const p = await pass(client(`${proxy.url}/bench/v1`), c);
              await proxy.close();
              if (provider.calls - before !== c)
                failures.push(
                  `invocache proxy (${name}) record: ${provider.calls - before} upstream calls for ${c}`,
                );
              if (r === 0) recordedOn[name] = p.answers;
              taken[`invocache proxy (${name})`] = p;
              return [];
            },
          }),
        ),
        ...(aimock === undefined
          ? []
          : [
              {
                name: "aimock",
                run: async (c: number) => {
                  const LLMock = aimock as typeof import("@copilotkit/aimock").LLMock;
                  const recorder = new LLMock({
                    port: 0,
                    record: {
                      providers: { openai: provider.url },
                      fixturePath: r === 0 ? fixtures : join(dir, `aimock-${warmup ? "warm" : r}`),
                    },
                  });
                  await recorder.start();
                  const before = provider.calls;
                  const p = await pass(client(`${recorder.url}/v1`), c);
                  await recorder.stop();
                  if (provider.calls - before !== c)
                    failures.push(
                      `aimock record: ${provider.calls - before} upstream calls for ${c}`,
                    );
                  if (r === 0) recordedOn.aimock = p.answers;
                  taken.aimock = p;
                  return [];
                },
              } satisfies Contender,
            ]),
      ];
      for (const c of rotate(recorders, Math.max(r, 0))) await c.run(n, 1);
      const base = direct;
      if (base === undefined) throw new Error("unreachable: the direct calls ran");
      for (const [name, p] of Object.entries(taken)) {
        // What the recorder handed back is the upstream's answer. The fake
        // provider numbers its replies ("reply #n from …"), so the text is
        // compared without that number.
        const m = check(base.answers.map(unnumbered), p.answers.map(unnumbered), n, true);
        if (m > 0)
          failures.push(
            `${name} record round ${warmup ? "warm-up" : r + 1}: ${m} answers differ from the upstream's`,
          );
        if (warmup) continue;
        const into = recordRoundMultiples[name] ?? { wall: [], cpu: [] };
        into.wall.push(p.ms / base.ms);
        into.cpu.push(p.cpuUs / base.cpuUs);
        recordRoundMultiples[name] = into;
      }
      if (!warmup)
        log(
          `servers: record round ${r + 1}/${recordRounds} (load ${(loadavg()[0] as number).toFixed(2)}): direct ${(1e3 / base.ms).toFixed(0)} calls/s; ${Object.entries(
            taken,
          )
            .map(
              ([k, p]) =>
                `${k} ${(p.ms / base.ms).toFixed(2)}× (CPU ${(p.cpuUs / base.cpuUs).toFixed(2)}×)`,
            )
            .join(", ")}`,
        );
    }

    // The replayed answers carry the prompt back (the fake provider echoes
    // it: ~4.4 KB against the floor's ~0.3 KB), so a second constant server
    // answers with one recorded answer: the round trip of the same bytes.
    const sizedBody = JSON.stringify(recordedOn.SQLite?.[0] ?? JSON.parse(CONSTANT_BODY));
    const sizedText = text(JSON.parse(sizedBody) as OpenAI.Chat.ChatCompletion);
    const sized = await startConstant(sizedBody);
    closers.push(sized.close);

    // Replay rounds.
    const replayers: Contender[] = [
      {
        name: FLOOR,
        run: async (c, times) => {
          const p = await pass(client(`${constant.url}/v1`), c, times);
          const mismatches = p.answers.filter((a) => text(a) !== "constant").length;
          return [{ row: FLOOR, pass: p, checked: p.answers.length, mismatches }];
        },
      },
      {
        name: SIZED_FLOOR,
        run: async (c, times) => {
          const p = await pass(client(`${sized.url}/v1`), c, times);
          const mismatches = p.answers.filter((a) => text(a) !== sizedText).length;
          return [{ row: SIZED_FLOOR, pass: p, checked: p.answers.length, mismatches }];
        },
      },
      ...ordered.map(
        ([name]): Contender => ({
          name: `invocache proxy (${name})`,
          run: async (c, times) => {
            const recorded = recordedOn[name] ?? [];
            const proxy = await createProxy({
              store: name === "SQLite" ? sqliteUrl : cassettePath,
              mode: "replay",
              upstreams: { bench: provider.url },
              env: {},
            });
            const before = provider.calls;
            const openai = client(`${proxy.url}/bench/v1`);
            const first = await pass(openai, c);
            const warm = await pass(openai, c, times);
            await proxy.close();
            if (provider.calls !== before)
              failures.push(`invocache proxy (${name}) replay went upstream`);
            return [
              {
                row: `invocache proxy replay (${name}, first pass)`,
                pass: first,
                checked: first.answers.length,
                mismatches: check(recorded, first.answers, c),
              },
              {
                row: `invocache proxy replay (${name}, warm)`,
                pass: warm,
                checked: warm.answers.length,
                mismatches: check(recorded, warm.answers, c),
              },
            ];
          },
        }),
      ),
      {
        name: SDK_ALONE,
        run: async (c, times) => {
          // The same client answered by a fetch that never leaves the process:
          // what the SDK's own side of a call costs, for the split below.
          const openai = client(upstream, constantFetch(sizedBody));
          const p = await pass(openai, c, times);
          const mismatches = p.answers.filter((a) => text(a) !== sizedText).length;
          return [{ row: SDK_ALONE, pass: p, checked: p.answers.length, mismatches }];
        },
      },
      {
        name: IN_PROCESS,
        run: async (c, times) => {
          const recorder = createRecorder({ store: sqliteUrl, mode: "replay", env: {} });
          // The proxy hands createFetch the upstream URL itself: same origin, same identities.
          const openai = client(upstream, createFetch({ recorder }));
          await pass(openai, c); // a fresh recorder's first pass: the warm one is compared
          const warm = await pass(openai, c, times);
          await recorder.close();
          return [
            {
              row: IN_PROCESS,
              pass: warm,
              checked: warm.answers.length,
              mismatches: check(recordedOn.SQLite ?? [], warm.answers, c),
            },
          ];
        },
      },
      ...(aimock === undefined
        ? []
        : [
            {
              name: "aimock",
              run: async (c: number, times: number) => {
                const LLMock = aimock as typeof import("@copilotkit/aimock").LLMock;
                const replayer = new LLMock({ port: 0 });
                replayer.loadFixtureDir(fixtures);
                await replayer.start();
                const before = provider.calls;
                const openai = client(`${replayer.url}/v1`);
                const first = await pass(openai, c);
                const warm = await pass(openai, c, times);
                await replayer.stop();
                if (provider.calls !== before) failures.push("aimock replay went upstream");
                const recorded = recordedOn.aimock ?? [];
                return [
                  {
                    row: "aimock replay (first pass)",
                    pass: first,
                    checked: first.answers.length,
                    mismatches: check(recorded, first.answers, c, true),
                  },
                  {
                    row: "aimock replay (warm)",
                    pass: warm,
                    checked: warm.answers.length,
                    mismatches: check(recorded, warm.answers, c, true),
                  },
                ];
              },
            } satisfies Contender,
          ]),
    ];

    const rows = new Map<string, ServerRow & { ms: number[]; cpu: number[] }>();
    const proxyCost: number[] = [];
    const proxyCostCpu: number[] = [];
    const split = { hop: [] as number[], hit: [] as number[], own: [] as number[] };
    const versusSized = new Map<string, { wall: number[]; cpu: number[] }>();
    for (const c of replayers) await c.run(Math.min(30, calls), 1); // warm-up, unmeasured
    const [floorRunner, ...servers] = replayers as [Contender, ...Contender[]];
    for (let r = 0; r < rounds; r++) {
      // The floor before every server and after the last; each server's
      // sample is taken against the mean of the floor passes either side of
      // it, so load that changes within a round moves both alike.
      const floors: Sample[] = await floorRunner.run(calls, 1);
      const samples: { sample: Sample; floor: Pass }[] = [];
      for (const c of rotate(servers, r)) {
        const got = await c.run(calls, passes);
        const after = await floorRunner.run(calls, 1);
        const floor = meanPass([floors.at(-1)?.pass, after[0]?.pass]);
        floors.push(...after);
        for (const sample of got) samples.push({ sample, floor });
      }
      const floor = meanPass(floors.map((f) => f.pass));
      samples.unshift({
        sample: {
          row: FLOOR,
          pass: floor,
          checked: floors.reduce((n, f) => n + f.checked, 0),
          mismatches: floors.reduce((n, f) => n + f.mismatches, 0),
        },
        floor,
      });
      for (const { sample: s, floor } of samples) {
        const row = rows.get(s.row) ?? { ...emptyRow(s.row, ""), ms: [], cpu: [] };
        row.ms.push(s.pass.ms);
        row.cpu.push(s.pass.cpuUs);
        row.ratios.push(floor.ms / s.pass.ms);
        row.cpuRatios.push(floor.cpuUs / s.pass.cpuUs);
        row.checked += s.checked;
        row.mismatches += s.mismatches;
        rows.set(s.row, row);
      }
      const warmSqlite = samples.find(
        (s) => s.sample.row === "invocache proxy replay (SQLite, warm)",
      )?.sample;
      const inProcess = samples.find((s) => s.sample.row === IN_PROCESS)?.sample;
      if (warmSqlite !== undefined && inProcess !== undefined) {
        proxyCost.push((warmSqlite.pass.ms - inProcess.pass.ms) * 1e3);
        proxyCostCpu.push(warmSqlite.pass.cpuUs - inProcess.pass.cpuUs);
      }
      const sdk = samples.find((s) => s.sample.row === SDK_ALONE)?.sample;
      const sizedAt = samples.find((s) => s.sample.row === SIZED_FLOOR);
      if (
        warmSqlite !== undefined &&
        inProcess !== undefined &&
        sdk !== undefined &&
        sizedAt !== undefined
      ) {
        const hit = inProcess.pass.cpuUs - sdk.pass.cpuUs;
        split.hop.push(sizedAt.sample.pass.cpuUs - sdk.pass.cpuUs);
        split.hit.push(hit);
        split.own.push(warmSqlite.pass.cpuUs - sizedAt.sample.pass.cpuUs - hit);
      }
      // Each row against the same-size floor: its ratio to the floor over the same-size floor's.
      if (sizedAt !== undefined) {
        const sizedWall = sizedAt.floor.ms / sizedAt.sample.pass.ms;
        const sizedCpu = sizedAt.floor.cpuUs / sizedAt.sample.pass.cpuUs;
        for (const { sample: x, floor: f } of samples) {
          if (x.row === FLOOR || x.row === SIZED_FLOOR) continue;
          const into = versusSized.get(x.row) ?? { wall: [], cpu: [] };
          into.wall.push(f.ms / x.pass.ms / sizedWall);
          into.cpu.push(f.cpuUs / x.pass.cpuUs / sizedCpu);
          versusSized.set(x.row, into);
        }
      }
      log(
        `servers: replay round ${r + 1}/${rounds} (load ${(loadavg()[0] as number).toFixed(2)}): floor ${floors.map((f) => (1e3 / f.pass.ms).toFixed(0)).join(", ")} calls/s; ${samples
          .filter((s) => s.sample.row !== FLOOR)
          .map(
            ({ sample: s, floor }) =>
              `${s.row} ${(floor.ms / s.pass.ms).toFixed(2)}× (CPU ${(floor.cpuUs / s.pass.cpuUs).toFixed(2)}×)`,
          )
          .join("; ")}`,
      );
    }

    const order = [
      FLOOR,
      SIZED_FLOOR,
      ...ordered.flatMap(([name]) => [
        `invocache proxy replay (${name}, first pass)`,
        `invocache proxy replay (${name}, warm)`,
      ]),
      IN_PROCESS,
      SDK_ALONE,
      "aimock replay (first pass)",
      "aimock replay (warm)",
    ];
    const notes: Record<string, string> = {
      [FLOOR]: "one prebuilt response",
      [IN_PROCESS]: "same store, no proxy hop, warm; answers equal to the proxy's recording",
      [SIZED_FLOOR]: `one prebuilt response: a recorded answer (${Buffer.byteLength(sizedBody)} bytes)`,
      [SDK_ALONE]: "the client answered by a constant fetch in-process: no socket, no recorder",
      "aimock replay (first pass)":
        "a fresh server each round; every answer's text equal to the recorded one",
      "aimock replay (warm)": "every answer's text equal to the recorded one",
    };
    const out: ServerRow[] = [];
    for (const name of order) {
      const row = rows.get(name);
      if (row === undefined) continue;
      const { ms, cpu, ...rest } = row;
      if (row.mismatches > 0) failures.push(`${name}: ${row.mismatches} answers differ`);
      out.push({
        ...rest,
        callsPerSecond: 1e3 / median(ms),
        cpuUsPerCall: median(cpu),
        note:
          notes[name] ??
          (name.endsWith("first pass)")
            ? "a fresh proxy each round; every answer equal to the recorded one (JSON)"
            : "every answer equal to the recorded one (JSON)"),
      });
    }
    if (aimock === undefined) out.push(emptyRow("aimock", "not installed"));
    const recordMultiple: Record<string, number> = {};
    const recordCpuMultiple: Record<string, number> = {};
    for (const [k, v] of Object.entries(recordRoundMultiples)) {
      recordMultiple[k] = median(v.wall);
      recordCpuMultiple[k] = median(v.cpu);
    }
    return {
      calls,
      rounds,
      recordRounds,
      passes,
      rows: out,
      recordMultiple,
      recordCpuMultiple,
      recordRoundMultiples,
      proxyCostUs: median(proxyCost),
      proxyCostCpuUs: median(proxyCostCpu),
      versusSized: Object.fromEntries(versusSized),
      split: {
        hopCpuUs: median(split.hop),
        hitCpuUs: median(split.hit),
        ownCpuUs: median(split.own),
      },
      load: [load0, loadavg()[0] as number],
      failures,
    };
  } finally {
    for (const close of closers) await close();
    await constant.close();
    await provider.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The table: each row's median over the rounds, its ratio to the same round's floor, and the ratios' range. */
export function renderServers(r: ServersResult): string {
  const range = (xs: readonly number[], digits = 2) =>
    xs.length === 0 ? "–" : `${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}`;
  const lines = [
    `Proxy servers: ${r.calls} distinct calls, ~4 KiB prompts, real openai SDK, sequential; ${r.rounds} replay rounds (each: every server in an order rotated per round, a floor pass before each and after the last; a fresh server, then ${r.passes} warm pass(es)), ${r.recordRounds} recording rounds; load average ${r.load[0].toFixed(2)} → ${r.load[1].toFixed(2)}`,
    "",
    "Each ratio is taken against the floor passes either side of it in the same round; the median over the rounds, then their range.",
    "",
    "| server | calls/s | × floor | CPU µs/call | × floor (CPU) | answers checked | mismatches | × floor, rounds | × floor (CPU), rounds | note |",
    "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --- |",
    ...r.rows.map(
      (row) =>
        `| ${row.name} | ${fmt(row.callsPerSecond)} | ${fmt(median(row.ratios), 2)} | ${fmt(row.cpuUsPerCall)} | ${fmt(median(row.cpuRatios), 2)} | ${row.checked} | ${row.mismatches} | ${range(row.ratios)} | ${range(row.cpuRatios)} | ${row.note} |`,
    ),
    "",
    "Recording, as a multiple of calling the upstream directly in the same round (median; the rounds' range):",
    ...Object.entries(r.recordMultiple).map(([k, v]) => {
      const rounds = r.recordRoundMultiples[k] ?? { wall: [], cpu: [] };
      return `- ${k}: ${fmt(v, 2)}× (by CPU time: ${fmt(r.recordCpuMultiple[k] ?? Number.NaN, 2)}×); rounds ${range(rounds.wall)}× (CPU ${range(rounds.cpu)}×)`;
    }),
    "",
    `Proxy cost over in-process createFetch (SQLite replay): ${fmt(r.proxyCostUs)} µs per call (CPU: ${fmt(r.proxyCostCpuUs)} µs; median of the rounds' differences)`,
    "Against the constant server answering a recorded answer's bytes (same round; median, the rounds' range):",
    ...Object.entries(r.versusSized).map(
      ([k, v]) =>
        `- ${k}: ${fmt(median(v.wall), 2)}× (${range(v.wall)}), by CPU ${fmt(median(v.cpu), 2)}× (${range(v.cpu)})`,
    ),
    "",
    `Warm SQLite proxy replay, CPU per call (median of the rounds): the hop (same-size floor − SDK alone) ${fmt(r.split.hopCpuUs)} µs, the recorder's hit (in-process createFetch − SDK alone) ${fmt(r.split.hitCpuUs)} µs, the proxy's own rest ${fmt(r.split.ownCpuUs)} µs`,
  ];
  return lines.join("\n");
}

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "–";
}
