/**
 * What a recording costs the store in `record` mode: on a store `openStore`
 * opens (memory, SQLite; Redis and Postgres when installed) exactly one write
 * and no read, since record mode serves nothing it reads and such a store
 * raises no fixture error on a read (src/recorder/record-probe.ts). A
 * cassette, and any store read through a staleness policy, is still read
 * first: a fixture error there must come before the paid call.
 * Operations are counted through a wrapping Store, so this is not a timing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cassetteStore,
  createRecorder,
  type InvocationRequest,
  openStore,
  type Store,
} from "../../src/index.js";
import { countingStore } from "../helpers/counting-store.js";
import {
  type PostgresServer,
  postgresAvailable,
  startPostgresServer,
} from "../helpers/postgres-server.js";
import { type RedisServer, redisServerBinary, startRedisServer } from "../helpers/redis-server.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-record-ops-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const baseReq: InvocationRequest = {
  role: "builder",
  model: "gpt-5",
  prompt: "Implement the parser in /home/u/proj/src/parse.ts.",
  params: { temperature: 0.2 },
};
const answer = { choices: [{ message: { role: "assistant", content: "done" } }] };
const CALLS = 4;

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

const unique = () => Math.random().toString(36).slice(2);
const backends: [string, () => string][] = [
  ["memory", () => "memory://"],
  ["sqlite", () => `sqlite://${join(dir, `rec-${unique()}.sqlite`)}`],
  ...(redisServerBinary === undefined
    ? []
    : [["redis", () => redis!.url] as [string, () => string]]),
  ...(postgresAvailable ? [["postgres", () => pg!.url] as [string, () => string]] : []),
];

/** Record CALLS distinct calls (and one again) in `record` mode through a counting wrapper of `inner`. */
async function recordThrough(inner: Store, options: { maxAge?: string } = {}) {
  const counting = countingStore(inner);
  const recorder = createRecorder({
    store: counting.store,
    mode: "record",
    identity: machine,
    ...options,
  });
  const prompt = `${baseReq.prompt} ${unique()}`;
  let upstream = 0;
  for (let i = 0; i < CALLS; i++) {
    const req = { ...baseReq, prompt: `${prompt} #${i % (CALLS - 1)}` };
    const got = await recorder.call(req, async () => {
      upstream++;
      return answer;
    });
    expect(got).toEqual(answer);
  }
  await recorder.close();
  return { counts: { ...counting.counts }, upstream, inner };
}

describe.each(backends)("record mode on %s", (_name, url) => {
  it("is one write per recording and no read", async () => {
    const { counts, upstream, inner } = await recordThrough(openStore(url()));
    expect(upstream).toBe(CALLS);
    // The repeated request is re-recorded (record mode always calls upstream): a write each.
    expect(counts).toEqual({
      get: 0,
      getHit: 0,
      set: CALLS,
      delete: 0,
      list: 0,
      acquireLease: 0,
      releaseLease: 0,
    });
    await inner.close();
  });

  it("under a staleness policy still reads each entry first", async () => {
    const { counts, inner } = await recordThrough(openStore(url()), { maxAge: "30d" });
    expect([counts.get, counts.set]).toEqual([CALLS, CALLS]);
    await inner.close();
  });
});

describe("record mode on a cassette", () => {
  it("reads each entry first (a cassette that cannot be loaded fails before the paid call)", async () => {
    const store = cassetteStore(join(dir, `rec-${unique()}.yaml`), { parseCache: false });
    const { counts } = await recordThrough(store);
    expect([counts.get, counts.set]).toEqual([CALLS, CALLS]);
    await store.close();
  });
});
