/**
 * A replay hit costs exactly one store read and no write (no run record, no
 * lease, no stats), on memory and SQLite, and on real Redis and Postgres
 * servers when installed, in `auto` and `replay` mode.
 * Operations are counted through a wrapping Store, so this is not a timing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRecorder, type InvocationRequest, type Mode, openStore } from "../../src/index.js";
import { countingStore, writesOf } from "../helpers/counting-store.js";
import {
  type PostgresServer,
  postgresAvailable,
  startPostgresServer,
} from "../helpers/postgres-server.js";
import { type RedisServer, redisServerBinary, startRedisServer } from "../helpers/redis-server.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-hit-ops-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const baseReq: InvocationRequest = {
  role: "builder",
  model: "gpt-5",
  prompt: "Implement the parser in /home/u/proj/src/parse.ts as of 2026-09-09T10:00:00Z.",
  params: { temperature: 0.2 },
};
const answer = { choices: [{ message: { role: "assistant", content: "done" } }] };
const HITS = 5;

let redis: RedisServer | undefined;
let pg: PostgresServer | undefined;
beforeAll(async () => {
  if (redisServerBinary !== undefined) redis = await startRedisServer();
  if (postgresAvailable) pg = await startPostgresServer();
}, 120_000);
afterAll(async () => {
  await redis?.stop();
  await pg?.stop();
});

// Shared servers keep data between tests: each test records under its own prompt.
const backends: [string, () => string][] = [
  ["memory", () => "memory://"],
  ["sqlite", () => `sqlite://${join(dir, `hits-${Math.random().toString(36).slice(2)}.sqlite`)}`],
  ...(redisServerBinary === undefined
    ? []
    : [["redis", () => redis!.url] as [string, () => string]]),
  ...(postgresAvailable ? [["postgres", () => pg!.url] as [string, () => string]] : []),
];

describe.each(backends)("a hit on %s", (_name, url) => {
  it.each<Mode>(["auto", "replay"])("in %s mode is one read and zero writes", async (mode) => {
    const counting = countingStore(openStore(url()));
    const recording = createRecorder({ store: counting.store, mode: "auto", identity: machine });
    const req = { ...baseReq, prompt: `${baseReq.prompt} ${Math.random()}` };
    await recording.call(req, async () => answer);
    // The wrapper sees the recorder's writes: a miss records the entry.
    expect(counting.counts.set).toBeGreaterThan(0);
    const replay =
      mode === "auto"
        ? recording
        : createRecorder({ store: counting.store, mode, identity: machine });
    counting.reset();
    for (let i = 0; i < HITS; i++) {
      const got = await replay.call(req, async () => {
        throw new Error("a hit must not call the provider");
      });
      expect(got).toEqual(answer);
    }
    expect(replay.stats.hits).toBe(HITS);
    // One read per hit: the entry without its manifest (Store.getHit).
    expect({ ...counting.counts }).toEqual({
      get: 0,
      getHit: HITS,
      set: 0,
      delete: 0,
      list: 0,
      acquireLease: 0,
      releaseLease: 0,
    });
    expect(writesOf(counting.counts)).toBe(0);
    if (replay !== recording) await replay.close();
    await recording.close();
  });
});
