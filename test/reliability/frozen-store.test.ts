/**
 * A store that stops answering with its socket still open: redis-server and
 * the whole Postgres cluster frozen with SIGSTOP. Every store operation has a
 * timeout, so auto mode still answers from upstream (each timeout a warning
 * carrying the StoreError), replay fails closed with a StoreError, and no
 * write, delete or lease change asked for while the server was frozen
 * lands when it thaws.
 */
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRecorder,
  openStore,
  type Recorder,
  ReplayMissError,
  StoreError,
} from "../../src/index.js";
import { postgresAvailable, startPostgresServer } from "../helpers/postgres-server.js";
import { redisServerBinary, startRedisServer } from "../helpers/redis-server.js";
import { skipUnless } from "../helpers/service.js";
import { type ErrorInfo, errorInfo, startUpstream, type Upstream } from "./helpers.js";

const IDENTITY = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
/** Short, so the test is quick; the documented default is longer. */
const TIMEOUT_MS = 1000;
/** How long a call may take before the test calls it a hang. */
const HANG_MS = 15_000;

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream?.close();
});

/** `pid` and all its descendants (Linux /proc). */
function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    const file = `/proc/${out[i]}/task/${out[i]}/children`;
    if (!existsSync(file)) continue;
    for (const child of readFileSync(file, "utf8").trim().split(/\s+/)) {
      if (child !== "") out.push(Number(child));
    }
  }
  return out;
}

function signalTree(pid: number, signal: NodeJS.Signals): void {
  for (const p of processTree(pid)) {
    try {
      process.kill(p, signal);
    } catch {
      // a process that just exited
    }
  }
}

type Settled<T> =
  | { settled: true; ok: true; value: T; ms: number }
  | { settled: true; ok: false; error: unknown; ms: number }
  | { settled: false };

/** How `p` ends, or `settled: false` if it is still pending after {@link HANG_MS}. */
async function within<T>(p: Promise<T>): Promise<Settled<T>> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ settled: false }), HANG_MS);
  });
  try {
    return await Promise.race([
      p.then(
        (value) => ({ settled: true as const, ok: true as const, value, ms: Date.now() - started }),
        (error: unknown) => ({
          settled: true as const,
          ok: false as const,
          error,
          ms: Date.now() - started,
        }),
      ),
      hang,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

interface Answer {
  name: string;
  answer: string;
}

function caller(recorder: Recorder) {
  return (name: string) =>
    recorder.call<Answer>({ role: "worker", model: "m", prompt: `do ${name}` }, async () => {
      const res = await fetch(`${upstream.url}/${name}`, { method: "POST" });
      return (await res.json()) as Answer;
    });
}

interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const servers: Array<{ name: string; skip: boolean; start: () => Promise<Server> }> = [
  {
    name: "redis-server",
    skip: skipUnless(
      redisServerBinary !== undefined,
      "redis-server",
      "apt-get install -y redis-server",
    ),
    start: () => startRedisServer(),
  },
  {
    name: "postgres",
    skip: skipUnless(postgresAvailable, "postgres", "apt-get install -y postgresql"),
    start: () => startPostgresServer(),
  },
];

for (const { name, skip, start } of servers) {
  describe.skipIf(skip)(`${name} frozen with SIGSTOP`, () => {
    let server: Server;
    beforeAll(async () => {
      server = await start();
      // Load the driver once, under the default timeout: the short one below
      // is for a store that stops answering, not for a busy machine's imports.
      const warm = openStore(server.url);
      await warm.get("warm-up");
      await warm.close();
    }, 60_000);
    afterAll(async () => {
      if (server === undefined) return;
      signalTree(server.pid, "SIGCONT");
      await server.stop();
    });

    it("every operation times out as a StoreError: auto answers from upstream with warnings, replay fails closed, nothing asked for while frozen lands later", async () => {
      const url = `${server.url}?timeoutMs=${TIMEOUT_MS}`;
      const namespace = `frozen-${name}`;
      const auto = createRecorder({ store: url, mode: "auto", namespace, identity: IDENTITY });
      const replay = createRecorder({ store: url, mode: "replay", namespace, identity: IDENTITY });
      const store = openStore(url);
      const warnings: ErrorInfo[] = [];
      auto.on("warning", (w) => warnings.push(errorInfo(w.error)));
      const observed: string[] = [];
      try {
        const kept = await caller(auto)("kept");
        expect(await caller(replay)("kept")).toStrictEqual(kept);
        expect(await store.acquireLease("warm-up", "A", 60_000)).toBe(true);
        await store.set("kept-value", "before");
        expect(warnings).toStrictEqual([]);

        signalTree(server.pid, "SIGSTOP");
        try {
          // auto: answered from upstream, each store failure a warning with the timeout.
          for (const call of ["kept", "fresh"]) {
            const before = upstream.total;
            const outcome = await within(caller(auto)(call));
            expect(outcome.settled, `auto ${call} still pending after ${HANG_MS} ms`).toBe(true);
            if (!outcome.settled) return;
            expect(outcome.ok, `auto ${call}`).toBe(true);
            if (outcome.ok) expect(outcome.value.name).toBe(call);
            expect(upstream.total).toBe(before + 1);
            observed.push(`auto ${call}: ${outcome.ms} ms`);
          }
          expect(warnings.length).toBeGreaterThan(0);
          for (const w of warnings) {
            expect(w.name, w.message).toBe("StoreError");
            expect(w.message).toContain(`timed out after ${TIMEOUT_MS} ms`);
          }

          // replay: a StoreError naming the timeout, never a miss, nothing upstream.
          const before = upstream.total;
          const outcome = await within(caller(replay)("kept"));
          expect(outcome.settled, `replay still pending after ${HANG_MS} ms`).toBe(true);
          if (!outcome.settled) return;
          expect(outcome.ok).toBe(false);
          if (!outcome.ok) {
            expect(outcome.error).toBeInstanceOf(StoreError);
            expect(outcome.error).not.toBeInstanceOf(ReplayMissError);
            const e = outcome.error as StoreError;
            expect(e.operation).toBe("get");
            expect(e.message).toContain(`timed out after ${TIMEOUT_MS} ms`);
            expect(e.message).toContain("timeoutMs");
          }
          expect(upstream.total).toBe(before);
          observed.push(`replay: ${outcome.ms} ms`);

          // A lease asked for now must not be taken when the server thaws.
          const lease = await within(store.acquireLease("late", "A", 60_000));
          expect(lease.settled && !lease.ok && lease.error instanceof StoreError).toBe(true);
          if (lease.settled) observed.push(`acquireLease: ${lease.ms} ms`);
          // Same for a release: A's warm-up lease must still be held after the thaw.
          const release = await within(store.releaseLease("warm-up", "A"));
          expect(release.settled && !release.ok).toBe(true);
          // And for values: neither a write nor a delete made now may land later.
          const write = await within(store.set("late-write", "too late"));
          expect(write.settled && !write.ok && write.error instanceof StoreError).toBe(true);
          const overwrite = await within(store.set("kept-value", "too late"));
          expect(overwrite.settled && !overwrite.ok).toBe(true);
          const removal = await within(store.delete("kept-value"));
          expect(removal.settled && !removal.ok).toBe(true);
        } finally {
          signalTree(server.pid, "SIGCONT");
        }

        // Thawed: the queued operations have run (a few round trips later)...
        for (let i = 0; i < 20; i++) await store.get("barrier");
        // ...and the late lease did not land: someone else can take it.
        expect(await store.acquireLease("late", "B", 1000)).toBe(true);
        // ...nor the late release: A still holds its lease.
        expect(await store.acquireLease("warm-up", "B", 1000)).toBe(false);
        // ...nor the late writes and delete: values are as before the freeze.
        expect(await store.get("late-write")).toBeUndefined();
        expect(await store.get("kept-value")).toBe("before");
        // The recorders use the store again: a hit, no upstream call, no new warning.
        const before = upstream.total;
        const seen = warnings.length;
        expect(await caller(auto)("kept")).toStrictEqual(kept);
        expect(await caller(replay)("kept")).toStrictEqual(kept);
        expect(upstream.total).toBe(before);
        expect(warnings.length).toBe(seen);
        console.log(`${name} frozen (timeoutMs=${TIMEOUT_MS}): ${observed.join(", ")}`);
      } finally {
        await Promise.all([auto.close(), replay.close(), store.close()]);
      }
    }, 90_000);
  });
}
