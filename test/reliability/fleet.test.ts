/**
 * A fleet on one store: 8 runner processes (test/reliability/workers/fleet-worker.ts,
 * an OpenAI-style client through `createFetch`, as CI runners would run)
 * share one PostgreSQL store, then one Redis store, each a dedicated server
 * this test may crash and restart. Runners record (auto) over overlapping
 * identities and attempts against a loopback upstream that counts calls
 * per identity + attempt; one runner is SIGKILLed while its recording is
 * in flight; the store is crashed and restarted while calls are held
 * mid-flight at the upstream; then fresh runners replay everything.
 *
 * Holds, per identity + attempt:
 * - single-flight across processes: exactly one answered upstream call,
 *   except where a runner was told the store failed (a `warning`: auto
 *   fails open and calls upstream without the lease) — those are counted
 *   and bounded, never silent;
 * - the killed runner's lease does not block the others for good: one of
 *   them records the identity once its lease expires;
 * - no acknowledged recording lost: every answer a runner got without a
 *   warning replays afterwards, the same answer, in every replaying runner;
 * - no half entry: every answer is whole and for the identity asked, and
 *   the store holds only whole entries (its stored metadata says so).
 *
 * CI runs 8 runners × 19 calls. INVOCACHE_FLEET=1 (`npm run fleet`) runs the full size
 * (8 × 601); INVOCACHE_FLEET_RUNNERS / INVOCACHE_FLEET_SHARED / INVOCACHE_FLEET_OWN override it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { openStore, type StoredMeta } from "../../src/store/index.js";
import { postgresAvailable, startPostgresServer } from "../helpers/postgres-server.js";
import { redisServerBinary, startRedisServer } from "../helpers/redis-server.js";
import { skipUnless } from "../helpers/service.js";
import {
  ROOT,
  startDurableRedis,
  startWorker,
  tempDir,
  type Worker,
  workerScript,
} from "./helpers.js";

const FULL = process.env.INVOCACHE_FLEET === "1";
const RUNNERS = Number(process.env.INVOCACHE_FLEET_RUNNERS ?? 8);
/** Identities every runner calls, each at attempts 0 and 1. */
const SHARED = Number(process.env.INVOCACHE_FLEET_SHARED ?? (FULL ? 200 : 6));
/** Identities only one runner calls. */
const OWN = Number(process.env.INVOCACHE_FLEET_OWN ?? (FULL ? 200 : 6));
const LANES = 2;
/** Short leases, so the killed runner's lease expires within the test. */
const LEASE_MS = 1_500;
const VICTIM = "0";
const TIMEOUT = FULL ? 30 * 60_000 : 180_000;

interface Call {
  key: string;
  worker: string;
  warned: boolean;
  answered: boolean;
}

interface Report {
  worker: string;
  answers: Record<string, string>;
  errors: Array<{ key: string; message: string }>;
  warned: string[];
}

/**
 * The upstream: an OpenAI-style chat endpoint on 127.0.0.1 answering
 * `<id>/<attempt>#<n>` (n counts calls for that key). The victim's call of
 * `slow-0` is never answered (it is killed meanwhile); `hold()` queues
 * every request until `release()`.
 */
async function startFleetUpstream(onVictim: () => void) {
  const log: Call[] = [];
  const counts = new Map<string, number>();
  let held: Array<() => void> | undefined;
  let onCount: ((total: number) => void) | undefined;
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      const content = String(
        (JSON.parse(body) as { messages: Array<{ content: string }> }).messages[0]!.content,
      );
      const id = content.replace(/^call /, "");
      const worker = String(req.headers["x-fleet-worker"]);
      const key = `${id}/${String(req.headers["x-fleet-attempt"])}`;
      const call: Call = {
        key,
        worker,
        warned: req.headers["x-fleet-warned"] === "1",
        answered: false,
      };
      log.push(call);
      onCount?.(log.length);
      if (id.startsWith("slow-") && worker === VICTIM) {
        onVictim();
        return; // never answered: the runner dies waiting
      }
      const answer = () => {
        const n = (counts.get(key) ?? 0) + 1;
        counts.set(key, n);
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            id: `chatcmpl-${n}`,
            object: "chat.completion",
            model: "fleet-model",
            choices: [
              {
                index: 0,
                message: { role: "assistant", content: `${key}#${n}` },
                finish_reason: "stop",
              },
            ],
            usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
          }),
          () => {
            call.answered = true;
          },
        );
      };
      if (held !== undefined) held.push(answer);
      else setTimeout(answer, 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    whenCount(n: number): Promise<void> {
      return new Promise((resolve) => {
        onCount = (total) => {
          if (total >= n) {
            onCount = undefined;
            resolve();
          }
        };
      });
    },
    hold() {
      held ??= [];
    },
    release() {
      const queued = held ?? [];
      held = undefined;
      for (const answer of queued) answer();
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runner `w`'s plan A: the shared identities (both attempts), rotated per runner, then its own. */
function planOf(w: number): Array<[string, number]> {
  if (String(w) === VICTIM) return [["slow-0", 0]];
  const shared: Array<[string, number]> = [];
  for (let i = 0; i < SHARED; i++) shared.push([`s-${i}`, 0], [`s-${i}`, 1]);
  const turn = (w * 3) % shared.length;
  const own: Array<[string, number]> = Array.from({ length: OWN }, (_, j) => [`p${w}-${j}`, 0]);
  const rotated = [...shared.slice(turn), ...shared.slice(0, turn)];
  // Own calls between the shared ones, so runners meet on shared identities at different times.
  const out: Array<[string, number]> = [];
  while (rotated.length > 0 || own.length > 0) {
    if (rotated.length > 0) out.push(rotated.shift()!);
    if (own.length > 0) out.push(own.shift()!);
  }
  return out;
}

function start(
  storeUrl: string,
  upstreamUrl: string,
  worker: string,
  mode: "auto" | "replay",
  namespace: string,
  planA: Array<[string, number]>,
  planB: Array<[string, number]>,
  lanes = LANES,
): Worker {
  return startWorker(workerScript("fleet-worker.ts"), [
    storeUrl,
    upstreamUrl,
    worker,
    mode,
    namespace,
    String(lanes),
    String(LEASE_MS),
    JSON.stringify(planA),
    JSON.stringify(planB),
  ]);
}

function reportOf(w: Worker): Report {
  const line = w.lines.find((l) => l.startsWith("{"));
  if (line === undefined) throw new Error(`a runner printed no report: ${w.lines.join("\n")}`);
  return JSON.parse(line) as Report;
}

/**
 * Run the fleet on `storeUrl`; `restart` crashes and restarts its server.
 * Returns what the test prints.
 */
async function fleet(storeUrl: string, restart: () => Promise<void>, namespace: string) {
  let kill: () => void = () => {};
  const victimKilled = new Promise<void>((resolve) => {
    kill = resolve;
  });
  const upstream = await startFleetUpstream(() => kill());
  try {
    const runners = Array.from({ length: RUNNERS }, (_, w) =>
      start(
        storeUrl,
        upstream.url,
        String(w),
        "auto",
        namespace,
        planOf(w),
        [["slow-0", 0]],
        String(w) === VICTIM ? 1 : LANES,
      ),
    );
    await Promise.all(runners.map((r) => r.line((l) => l === "ready", 120_000)));
    const distinct = SHARED * 2 + (RUNNERS - 1) * OWN;
    const third = upstream.whenCount(Math.max(2, Math.floor(distinct / 3)));
    for (const r of runners) r.child.stdin!.write("go\n");

    // The victim holds the lease of slow-0 and waits on the upstream: SIGKILL it.
    await victimKilled;
    const victim = runners[Number(VICTIM)]!;
    victim.child.kill("SIGKILL");
    await victim.exited;

    // A third of the way: hold every upstream answer (recordings in flight), crash and restart the store.
    await third;
    upstream.hold();
    await restart();
    upstream.release();

    const others = runners.filter((_, w) => String(w) !== VICTIM);
    await Promise.all(others.map((r) => r.line((l) => l === "a-done", TIMEOUT)));
    // Now the others call slow-0, whose lease the dead victim still holds until it expires.
    for (const r of others) r.child.stdin!.end("b\n");
    await Promise.all(others.map((r) => r.exited));
    const reports = others.map(reportOf);

    // Every call got an answer (auto fails open), whole and for the identity asked.
    for (const r of reports) {
      expect(r.errors, `runner ${r.worker}`).toStrictEqual([]);
      for (const [key, answer] of Object.entries(r.answers)) {
        expect(answer.startsWith(`${key}#`), `${key}: ${answer}`).toBe(true);
      }
    }
    const warnedKeys = new Set(reports.flatMap((r) => r.warned));
    const calls = new Map<string, Call[]>();
    for (const c of upstream.log) calls.set(c.key, [...(calls.get(c.key) ?? []), c]);
    // Single-flight: one answered upstream call per identity + attempt, but where a store warning was given.
    let excess = 0;
    for (const [key, list] of calls) {
      const answered = list.filter((c) => c.answered && c.worker !== VICTIM);
      if (!warnedKeys.has(key)) expect(answered.length, `upstream calls for ${key}`).toBe(1);
      excess += Math.max(0, answered.length - 1);
    }
    expect(excess).toBeLessThanOrEqual(reports.reduce((n, r) => n + r.warned.length, 0));
    // The killed runner's identity was recorded by exactly one other runner after its lease expired.
    expect(calls.get("slow-0/0")!.filter((c) => c.worker === VICTIM && !c.answered)).toHaveLength(
      1,
    );
    if (!warnedKeys.has("slow-0/0")) {
      expect(calls.get("slow-0/0")!.filter((c) => c.answered)).toHaveLength(1);
    }

    // Replay: every answer given without a warning is there, the same, for fresh runners.
    const acknowledged = new Map<string, string>();
    for (const r of reports) {
      for (const [key, answer] of Object.entries(r.answers)) {
        if (!warnedKeys.has(key)) acknowledged.set(key, answer);
      }
    }
    for (const r of reports) {
      for (const [key, answer] of Object.entries(r.answers)) {
        if (acknowledged.has(key)) expect(answer, key).toBe(acknowledged.get(key));
      }
    }
    const before = upstream.log.length;
    const plan = [...acknowledged.keys()].map((k): [string, number] => {
      const [id, attempt] = k.split("/");
      return [id!, Number(attempt)];
    });
    const replayers = Array.from({ length: Math.max(1, RUNNERS / 2) }, (_, i) =>
      start(storeUrl, upstream.url, `r${i}`, "replay", namespace, plan, []),
    );
    await Promise.all(replayers.map((r) => r.line((l) => l === "ready", 120_000)));
    for (const r of replayers) r.child.stdin!.end("go\nb\n");
    await Promise.all(replayers.map((r) => r.exited));
    for (const replay of replayers.map(reportOf)) {
      expect(replay.errors).toStrictEqual([]);
      expect(replay.answers).toStrictEqual(Object.fromEntries(acknowledged));
    }
    expect(upstream.log.length).toBe(before);

    // The store holds whole entries only: no problem row, one entry per recorded identity at most.
    const store = openStore(storeUrl);
    const rows: StoredMeta[] = [];
    for await (const m of store.listMeta!({ prefix: `${namespace}:` })) rows.push(m);
    await store.close();
    expect(rows.filter((m) => m.kind !== "entry" && m.kind !== "run")).toStrictEqual([]);
    expect(rows.filter((m) => m.kind === "entry").length).toBeGreaterThanOrEqual(acknowledged.size);
    return {
      runners: RUNNERS,
      calls: upstream.log.length,
      distinct: calls.size,
      warned: warnedKeys.size,
      excess,
    };
  } finally {
    await upstream.close();
  }
}

const dir = tempDir("fleet");
const stops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const stop of stops) await stop();
});

describe("a fleet of runners on one store", () => {
  const noPg = skipUnless(postgresAvailable, "postgres (initdb)", "apt-get install postgresql");
  it.skipIf(noPg)(
    "PostgreSQL: single-flight across processes, a killed runner and a crashed store lose nothing",
    async () => {
      const pg = await startPostgresServer({ durable: true });
      stops.push(() => pg.stop());
      const result = await fleet(pg.url, () => pg.restart(), "fleet-pg");
      console.log(`fleet on PostgreSQL: ${JSON.stringify(result)}`);
    },
    TIMEOUT,
  );

  const noRedis = skipUnless(
    redisServerBinary !== undefined,
    "redis-server",
    "apt-get install -y redis-server",
  );
  it.skipIf(noRedis)(
    "Redis: single-flight across processes, a killed runner and a crashed store lose nothing",
    async () => {
      const redis = await startDurableRedis(`${dir}/redis`);
      stops.push(() => redis.stop());
      const restart = async () => {
        await redis.kill();
        await redis.restart();
      };
      const result = await fleet(redis.url, restart, "fleet-redis");
      console.log(`fleet on Redis: ${JSON.stringify(result)}`);
    },
    TIMEOUT,
  );
});

/** `invocache proxy` as a process (through tsx, from the sources); resolves its URL once it is listening. */
function startProxy(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "proxy", "--port", "0", ...args],
    {
      cwd: ROOT,
      env: { ...process.env, INVOCACHE_MODE: "", CI: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out)?.[0];
      if (url !== undefined && out.includes("\n")) resolve({ child, url });
    });
    child.once("exit", (code) => reject(new Error(`proxy exited ${code}: ${err}`)));
  });
}

describe("two invocache proxy processes on one store", () => {
  const noRedis = skipUnless(
    redisServerBinary !== undefined,
    "redis-server",
    "apt-get install -y redis-server",
  );
  it.skipIf(noRedis)(
    "Redis: concurrent clients through both get one upstream call per identity + attempt and the same answer everywhere",
    async () => {
      const redis = await startRedisServer();
      stops.push(() => redis.stop());
      const upstream = await startFleetUpstream(() => {});
      const proxies: ChildProcess[] = [];
      try {
        const args = [
          "--store",
          redis.url,
          "--mode",
          "auto",
          "--upstream",
          `fleet=${upstream.url}`,
        ];
        const started = await Promise.all([startProxy(args), startProxy(args)]);
        proxies.push(...started.map((p) => p.child));
        // Every identity + attempt asked 4 times, twice through each proxy, by 16 concurrent clients.
        const plan: Array<{ id: string; attempt: number; proxy: string }> = [];
        for (let i = 0; i < SHARED * 2; i++) {
          for (const attempt of [0, 1]) {
            for (const p of [...started, ...started])
              plan.push({ id: `x-${i}`, attempt, proxy: p.url });
          }
        }
        let seed = 7;
        for (let i = plan.length - 1; i > 0; i--) {
          seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
          const j = seed % (i + 1);
          [plan[i], plan[j]] = [plan[j]!, plan[i]!];
        }
        const answers = new Map<string, Set<string>>();
        let next = 0;
        const client = async () => {
          while (next < plan.length) {
            const { id, attempt, proxy } = plan[next++]!;
            const key = `${id}/${attempt}`;
            const res = await fetch(`${proxy}/fleet/v1/chat/completions`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                authorization: "Bearer sk-fleet",
                "x-invocache-role": "fleet",
                "x-invocache-attempt": String(attempt),
                "x-fleet-worker": "proxy-client",
                "x-fleet-attempt": String(attempt),
              },
              body: JSON.stringify({
                model: "fleet-model",
                messages: [{ role: "user", content: `call ${id}` }],
              }),
            });
            const text = await res.text();
            expect(res.status, text).toBe(200);
            const content = (
              JSON.parse(text) as { choices: Array<{ message: { content: string } }> }
            ).choices[0]!.message.content;
            expect(content.startsWith(`${key}#`), content).toBe(true);
            answers.set(key, (answers.get(key) ?? new Set()).add(content));
          }
        };
        await Promise.all(Array.from({ length: 16 }, client));
        expect(answers.size).toBe(SHARED * 4);
        for (const [key, seen] of answers) expect([...seen], key).toHaveLength(1);
        const perKey = new Map<string, number>();
        for (const c of upstream.log) perKey.set(c.key, (perKey.get(c.key) ?? 0) + 1);
        expect(
          [...perKey.values()].every((n) => n === 1),
          JSON.stringify([...perKey]),
        ).toBe(true);
        expect(perKey.size).toBe(SHARED * 4);

        const store = openStore(redis.url);
        const rows: StoredMeta[] = [];
        for await (const m of store.listMeta!({ entriesOnly: true })) rows.push(m);
        await store.close();
        expect(rows).toHaveLength(SHARED * 4);
      } finally {
        for (const p of proxies) {
          if (p.exitCode === null) {
            const gone = new Promise((resolve) => p.once("exit", resolve));
            p.kill("SIGTERM");
            await gone;
          }
        }
        await upstream.close();
      }
    },
    TIMEOUT,
  );
});
