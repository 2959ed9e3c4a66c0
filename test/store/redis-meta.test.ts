/**
 * Stored metadata on a real Redis server (redis-meta.ts): a store written
 * before it (values alone) is reported as not migrated and `migrateMeta`
 * fills it; a value an older invocache rewrote alone is reported, never
 * served with its old metadata; an expired value leaves the listing; the
 * commands answer from the metadata (no warning) once migrated.
 */
import { createClient } from "@keyv/redis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run.js";
import { MetadataMissingError, StoreError } from "../../src/errors.js";
import { invocationManifest, manifestIdentity } from "../../src/identity/index.js";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION } from "../../src/index.js";
import { type Entry, entryKey, openStore, type StoredMeta } from "../../src/store/index.js";
import type { Store } from "../../src/store/types.js";
import { fakeIo } from "../cli/in-process.js";
import { useRedisServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";

const redis = useRedisServer();
const dir = tempDir("redis-meta");

function entry(prompt: string, recordedAt: string, role = "r"): Entry {
  const manifest = invocationManifest({ role, model: "m", prompt }, { homeDir: "/h", tmpDirs: [] });
  return {
    v: 1,
    id: manifestIdentity(manifest),
    manifest,
    response: { text: prompt },
    meta: {
      recordedAt,
      durationMs: 1,
      usage: { shape: "openai.chat", inputTokens: 2, outputTokens: 3 },
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

async function listAll(store: Store, query = {}): Promise<StoredMeta[]> {
  const out: StoredMeta[] = [];
  for await (const m of store.listMeta!(query)) out.push(m);
  return out;
}

/** A raw client on the test server (what an older invocache's writes look like). */
let raw: ReturnType<typeof createClient>;
beforeEach(async (ctx) => {
  if (redis.skip) return ctx.skip();
  raw = createClient({ url: redis.url() });
  await raw.connect();
  await raw.flushAll();
});
afterEach(async () => {
  if (raw?.isOpen) await raw.close();
});

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIo(dir);
  const code = await runCli(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

describe.skipIf(redis.skip)("stored metadata on Redis", () => {
  it("migrates a store written before it, and never serves metadata an older writer made stale", async () => {
    const old = entry("old", "2026-01-01T00:00:00.000Z");
    const key = entryKey("ns", old.id, 0);
    // Written before stored metadata: the value alone.
    await raw.set(`invocache:v:${key}`, JSON.stringify({ value: old }));
    const store = openStore(redis.url());
    const e = entry("new", "2026-02-01T00:00:00.000Z");
    await store.set(entryKey("ns", e.id, 0), e as never);
    await expect(listAll(store)).rejects.toBeInstanceOf(MetadataMissingError);

    // The new write carried its metadata already: only the old value is filled.
    expect(await store.migrateMeta!()).toBe(1);
    expect((await listAll(store)).map((m) => m.recordedAt).sort()).toStrictEqual([
      "2026-01-01T00:00:00.000Z",
      "2026-02-01T00:00:00.000Z",
    ]);

    // An older invocache rewrites the value alone: the listing refuses to
    // answer with the old metadata, and a migration fills it again.
    const changed = { ...old, meta: { ...old.meta, recordedAt: "2026-05-05T00:00:00.000Z" } };
    await raw.set(`invocache:v:${key}`, JSON.stringify({ value: changed, note: "older" }));
    await expect(listAll(store)).rejects.toThrow(/migrate-store/);
    await expect(listAll(store)).rejects.toBeInstanceOf(StoreError);
    // …and so do the stats summed on the server.
    await expect(store.statsMeta!()).rejects.toThrow(/migrate-store/);
    expect(await store.migrateMeta!()).toBe(1);
    const newest = await listAll(store, { order: "recordedAtDesc", limit: 1 });
    expect(newest.map((m) => [m.key, m.recordedAt])).toStrictEqual([
      [key, "2026-05-05T00:00:00.000Z"],
    ]);
    // The time order holds each value once: the old time's member went with it.
    expect((await listAll(store, { order: "recordedAt" })).map((m) => m.recordedAt)).toStrictEqual([
      "2026-02-01T00:00:00.000Z",
      "2026-05-05T00:00:00.000Z",
    ]);
    await store.close();
  });

  it("answers on an empty store at once, and after the server lost its marker but kept no old values", async () => {
    const store = openStore(redis.url());
    const e = entry("x", "2026-03-01T00:00:00.000Z");
    await store.set(entryKey("ns", e.id, 0), e as never);
    expect(await raw.exists("invocache:meta:layout")).toBe(1);
    // A server restarted without persistence, written since by this version.
    await raw.del("invocache:meta:layout");
    expect((await listAll(store)).map((m) => m.key)).toStrictEqual([entryKey("ns", e.id, 0)]);
    expect(await raw.exists("invocache:meta:layout")).toBe(1);
    await store.close();
  });

  it("drops an expired value from the listing, and deletes take their metadata along", async () => {
    const store = openStore(redis.url());
    const a = entry("a", "2026-03-01T00:00:00.000Z");
    const b = entry("b", "2026-03-02T00:00:00.000Z");
    await store.set(entryKey("ns", a.id, 0), a as never, { ttlMs: 100 });
    await store.set(entryKey("ns", b.id, 0), b as never);
    expect(await listAll(store)).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 250));
    expect((await listAll(store)).map((m) => m.key)).toStrictEqual([entryKey("ns", b.id, 0)]);
    await store.delete(entryKey("ns", b.id, 0));
    expect(await listAll(store)).toStrictEqual([]);
    expect(await raw.zCard("invocache:meta:at")).toBeLessThanOrEqual(1);
    expect(await raw.exists(`invocache:meta:v:${entryKey("ns", b.id, 0)}`)).toBe(0);
    await store.close();
  });

  it("pages through more rows than one server page, in key and time order", async () => {
    const store = openStore(redis.url());
    const keys: string[] = [];
    for (let i = 0; i < 1_100; i++) {
      const e = entry(
        `p${i}`,
        `2026-04-01T00:00:${String(i % 60).padStart(2, "0")}.${String(i).padStart(3, "0")}Z`,
      );
      keys.push(entryKey("ns", e.id, 0));
      await store.set(keys.at(-1)!, e as never);
    }
    const byKey = await listAll(store, { prefix: "ns:" });
    expect(byKey.map((m) => m.key)).toStrictEqual([...keys].sort());
    const byTime = await listAll(store, { order: "recordedAtDesc" });
    expect(byTime).toHaveLength(1_100);
    const times = byTime.map((m) => m.recordedAt!);
    expect(times).toStrictEqual([...times].sort().reverse());
    expect(await listAll(store, { prefix: "nx:" })).toStrictEqual([]);
    await store.close();
  });

  it("ls, stats and prune --dry-run answer from the metadata once migrated", async () => {
    const url = redis.url();
    for (const [i, role] of ["planner", "builder"].entries()) {
      const e = entry(`p${i}`, `2026-01-0${i + 1}T00:00:00.000Z`, role);
      await raw.set(`invocache:v:${entryKey("ns", e.id, 0)}`, JSON.stringify({ value: e }));
    }
    const statsBefore = await cli(["stats", "--store", url, "--json"]);
    expect(statsBefore.code, statsBefore.err).toBe(0);
    expect(statsBefore.err).toMatch(/invocache migrate-store --store redis:/);
    const lsBefore = await cli(["ls", "--store", url, "--json"]);
    expect(lsBefore.err).toMatch(/invocache migrate-store/);
    const pruneArgs = ["prune", "--older-than", "1d", "--dry-run", "--store", url, "--json"];
    const pruneBefore = await cli(pruneArgs);

    const migrated = await cli(["migrate-store", "--store", url, "--json"]);
    expect(migrated.code, migrated.err).toBe(0);
    expect(JSON.parse(migrated.out)).toMatchObject({ filled: 2, supported: true });

    const statsAfter = await cli(["stats", "--store", url, "--json"]);
    expect(statsAfter.err).toBe("");
    expect(JSON.parse(statsAfter.out)).toStrictEqual(JSON.parse(statsBefore.out));
    expect(JSON.parse(statsAfter.out)).toMatchObject({ entries: 2 });
    const lsAfter = await cli(["ls", "--store", url, "--json"]);
    expect(lsAfter.err).toBe("");
    expect(JSON.parse(lsAfter.out)).toStrictEqual(JSON.parse(lsBefore.out));
    const pruneAfter = await cli(pruneArgs);
    expect(pruneAfter.err).toBe("");
    expect(JSON.parse(pruneAfter.out)).toStrictEqual(JSON.parse(pruneBefore.out));
    expect(JSON.parse(pruneAfter.out).removed).toHaveLength(2);
  });
});
