/**
 * `invocache prune --not-served-since`: runs recorded and replayed at
 * different times (dated after the fact, see `at`) into a SQLite file, redis-server, PostgreSQL and a YAML cassette;
 * prune removes exactly the entries no run served in the window.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { runCli } from "../../src/cli/run.js";
import { createRecorder, invocationIdentity } from "../../src/index.js";
import type { JsonValue } from "../../src/json/index.js";
import { entryKey, openStore, type Store } from "../../src/store/index.js";
import { usePostgresServer, useRedisServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";
import { fakeIo } from "./in-process.js";

const DAY = 86_400_000;

const req = (name: string) => ({ role: "r", model: "m", prompt: `step ${name}` });

/**
 * The recorder calls of one moment, `daysAgo`: made now through the real
 * recorder (`runId` undefined = outside any run), then dated: the entries
 * this moment recorded get that `recordedAt`, its run record that `endedAt`
 * (a fake clock would also move the stores' own deadlines).
 */
async function at(
  daysAgo: number,
  open: () => Store,
  ns: string,
  runId: string | undefined,
  names: string[],
) {
  const when = new Date(Date.now() - daysAgo * DAY).toISOString();
  const before = new Set(await keys(open, `${ns}:`));
  const recorder = createRecorder({ store: open(), namespace: ns, mode: "auto" });
  const calls = async () => {
    for (const n of names) await recorder.call(req(n), async () => ({ text: `answer ${n}` }));
  };
  if (runId === undefined) await calls();
  else await recorder.run(calls, { runId });
  await recorder.close();
  const store = open();
  for (const key of await keys(open, `${ns}:`)) {
    if (before.has(key)) continue;
    const value = (await store.get(key)) as Record<string, JsonValue>;
    const dated = key.includes(":run:")
      ? { ...value, endedAt: when }
      : { ...value, meta: { ...(value.meta as Record<string, JsonValue>), recordedAt: when } };
    await store.set(key, dated, { refresh: true });
  }
  await store.close();
}

interface PruneJson {
  dryRun: boolean;
  removed: Array<{ key: string }>;
  kept: number;
}

async function prune(cwd: string, args: string[]) {
  const io = fakeIo(cwd);
  const code = await runCli(["prune", "--not-served-since", "30d", "--json", ...args], io);
  expect(code, io.stderr()).toBe(0);
  return JSON.parse(io.stdout()) as PruneJson;
}

async function keys(open: () => Store, prefix: string): Promise<string[]> {
  const store = open();
  const out: string[] = [];
  for await (const [key] of store.list(prefix)) out.push(key);
  await store.close();
  return out.sort();
}

function suite(name: string, source: () => string[], open: () => Store, skip = false) {
  describe.skipIf(skip)(`prune --not-served-since on ${name}`, () => {
    it("removes exactly the entries no run served in the window", async () => {
      const ns = `n${randomBytes(4).toString("hex")}`;
      const idle = `i${randomBytes(4).toString("hex")}`;
      await at(60, open, ns, `${ns}-first`, ["A", "B", "C"]);
      await at(50, open, ns, undefined, ["E"]);
      await at(40, open, ns, `${ns}-mid`, ["B"]);
      await at(5, open, ns, `${ns}-last`, ["A", "D"]);
      await at(1, open, ns, undefined, ["F"]);
      // A namespace whose runs write no records: its old entry stays.
      await at(90, open, idle, undefined, ["Z"]);
      const key = (n: string, space = ns) => entryKey(space, invocationIdentity(req(n)), 0);
      const cwd = tempDir(`prune-served-${name}`);

      const dry = await prune(cwd, [...source(), "--dry-run"]);
      const expected = [key("B"), key("C"), key("E")].sort();
      expect(dry.removed.map((r) => r.key).sort()).toStrictEqual(expected);
      expect((await keys(open, `${ns}:e:`)).length).toBe(6);

      const done = await prune(cwd, source());
      expect(done.removed.map((r) => r.key).sort()).toStrictEqual(expected);
      expect(await keys(open, `${ns}:e:`)).toStrictEqual([key("A"), key("D"), key("F")].sort());
      expect(await keys(open, `${idle}:e:`)).toStrictEqual([key("Z", idle)]);
      // Run records are not entries: all three stay.
      expect(await keys(open, `${ns}:run:`)).toHaveLength(3);
    });
  });
}

const sqlite = `sqlite://${join(tempDir("prune-served-sqlite"), "cache.sqlite")}`;
suite(
  "sqlite",
  () => ["--store", sqlite],
  () => openStore(sqlite),
);
const redis = useRedisServer();
suite(
  "redis",
  () => ["--store", redis.url()],
  () => openStore(redis.url()),
  redis.skip,
);
const postgres = usePostgresServer();
suite(
  "postgres",
  () => ["--store", postgres.url()],
  () => openStore(postgres.url()),
  postgres.skip,
);
const cassette = join(tempDir("prune-served-cassette"), "c.yaml");
suite(
  "a cassette",
  () => ["--cassette", cassette],
  () => cassetteStore(cassette),
);

describe("prune --not-served-since usage", () => {
  it("names the option of a bad duration", async () => {
    const io = fakeIo(tempDir("prune-served-usage"));
    expect(await runCli(["prune", "--not-served-since", "soon"], io)).toBe(2);
    expect(io.stderr()).toContain("--not-served-since");
  });
});
