/**
 * `invocache prune` against an entry re-recorded while it runs: prune scans,
 * decides an entry is old, and deletes it a batch later; another process
 * that re-records that key in between must keep its fresh recording. Real
 * stores (a SQLite file, redis-server, PostgreSQL, a YAML cassette), a
 * second handle as the other process, prune run in process with its batch
 * seam (`pruneSeams.beforeDelete`) to place the re-record in that window.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { pruneSeams } from "../../src/cli/commands/prune.js";
import { runCli } from "../../src/cli/run.js";
import { manifestIdentity } from "../../src/identity/identity.js";
import { invocationManifest } from "../../src/identity/manifest.js";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION } from "../../src/index.js";
import type { JsonValue } from "../../src/json/index.js";
import { type Entry, entryKey, openStore, type Store } from "../../src/store/index.js";
import { usePostgresServer, useRedisServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";
import { fakeIo } from "./in-process.js";

const DAY = 86_400_000;

/** An entry whose id is its manifest's identity (a cassette checks it). */
function entry(prompt: string, recordedAt: string, text: string): Entry {
  const manifest = invocationManifest(
    { role: "r", model: "gpt-4o", prompt },
    { homeDir: "/home/u", tmpDirs: ["/tmp"] },
  );
  return {
    v: 1,
    id: manifestIdentity(manifest),
    manifest,
    response: { text },
    meta: {
      recordedAt,
      durationMs: 10,
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

interface PruneJson {
  dryRun: boolean;
  removed: Array<{ key: string }>;
  kept: number;
}

async function prune(cwd: string, args: string[]): Promise<PruneJson> {
  const io = fakeIo(cwd);
  const code = await runCli(["prune", "--older-than", "30d", "--json", ...args], io);
  expect(code, io.stderr()).toBe(0);
  return JSON.parse(io.stdout()) as PruneJson;
}

afterEach(() => {
  delete pruneSeams.beforeDelete;
});

/** One namespace's three entries: K and J old, N new. */
function seeds(ns: string) {
  const tag = randomBytes(8).toString("hex");
  const long = new Date(Date.now() - 60 * DAY).toISOString();
  const k = entry(`K ${tag}`, long, "old K");
  const j = entry(`J ${tag}`, long, "old J");
  const n = entry(`N ${tag}`, now(), "new N");
  const json = (e: Entry) => e as unknown as JsonValue;
  return {
    K: {
      key: entryKey(ns, k.id, 0),
      old: json(k),
      fresh: json(entry(`K ${tag}`, now(), "fresh K")),
    },
    J: { key: entryKey(ns, j.id, 0), value: json(j) },
    N: { key: entryKey(ns, n.id, 0), value: json(n) },
  };
}

function now(): string {
  return new Date().toISOString();
}

/** The race on a store at `url` (opened by `open` as the other process). */
function storeRace(name: string, url: () => string, skip = false) {
  describe.skipIf(skip)(`prune --store ${name}`, () => {
    const cwd = tempDir(`prune-race-${name}`);

    async function seeded(ns: string) {
      const s = seeds(ns);
      const store = openStore(url());
      await store.set(s.K.key, s.K.old);
      await store.set(s.J.key, s.J.value);
      await store.set(s.N.key, s.N.value);
      await store.close();
      return s;
    }

    async function read(f: (store: Store) => Promise<unknown>) {
      const store = openStore(url());
      try {
        return await f(store);
      } finally {
        await store.close();
      }
    }

    it("keeps an entry re-recorded between the scan and its batch's delete", async () => {
      const ns = `race${randomBytes(4).toString("hex")}`;
      const s = await seeded(ns);
      let windows = 0;
      pruneSeams.beforeDelete = async (keys) => {
        windows++;
        expect(keys).toContain(s.K.key);
        // Another process re-records K now: prune has read the old K already.
        const other = openStore(url());
        await other.set(s.K.key, s.K.fresh);
        await other.close();
      };
      const report = await prune(cwd, ["--store", url(), "--namespace", ns]);
      expect(windows).toBe(1);
      expect(await read((st) => st.get(s.K.key))).toStrictEqual(s.K.fresh);
      // The unchanged old entry is still removed, the new one kept.
      expect(await read((st) => st.get(s.J.key))).toBeUndefined();
      expect(await read((st) => st.get(s.N.key))).toStrictEqual(s.N.value);
      expect(report.removed.map((r) => r.key)).toStrictEqual([s.J.key]);
      expect(report.kept).toBe(2);
    });

    it("--dry-run lists both old entries and changes nothing", async () => {
      const ns = `dry${randomBytes(4).toString("hex")}`;
      const s = await seeded(ns);
      pruneSeams.beforeDelete = async () => {
        throw new Error("a dry run deletes nothing");
      };
      const report = await prune(cwd, ["--store", url(), "--namespace", ns, "--dry-run"]);
      expect(report.dryRun).toBe(true);
      expect(report.removed.map((r) => r.key).sort()).toStrictEqual([s.K.key, s.J.key].sort());
      expect(report.kept).toBe(1);
      expect(await read((st) => st.get(s.K.key))).toStrictEqual(s.K.old);
      expect(await read((st) => st.get(s.J.key))).toStrictEqual(s.J.value);
    });
  });
}

const sqliteDir = tempDir("prune-race-sqlite");
storeRace("sqlite", () => `sqlite://${join(sqliteDir, "cache.sqlite")}`);

describe("prune --store sqlite, many batches", () => {
  it("keeps entries re-recorded in a batch deleted while the scan goes on", async () => {
    const url = `sqlite://${join(tempDir("prune-race-batches"), "cache.sqlite")}`;
    const store = openStore(url);
    const old = Array.from({ length: 600 }, () => seeds("many").J);
    for (const { key, value } of old) await store.set(key, value);
    await store.close();
    const refreshed = new Set<string>();
    const windows: number[] = [];
    pruneSeams.beforeDelete = async (keys) => {
      windows.push(keys.length);
      // In every batch, another process re-records its last key.
      const key = keys.at(-1)!;
      const other = openStore(url);
      const value = (await other.get(key)) as { meta: { recordedAt: string } };
      await other.set(key, { ...value, meta: { ...value.meta, recordedAt: now() } });
      await other.close();
      refreshed.add(key);
    };
    const report = await prune(tempDir("prune-race-batches-cwd"), ["--store", url]);
    // Two full batches of 256 while the scan went on, then the rest.
    expect(windows).toStrictEqual([256, 256, 88]);
    const after = openStore(url);
    const left: string[] = [];
    for await (const [key] of after.list("")) left.push(key);
    await after.close();
    expect(left.sort()).toStrictEqual([...refreshed].sort());
    expect(report.removed).toHaveLength(597);
    expect(report.kept).toBe(3);
  });
});

const redis = useRedisServer();
storeRace("redis", () => redis.url(), redis.skip);

const postgres = usePostgresServer();
storeRace("postgres", () => postgres.url(), postgres.skip);

describe("prune --cassette", () => {
  it("keeps an entry re-recorded between the scan and the rewrite", async () => {
    const dir = tempDir("prune-race-cassette");
    const file = join(dir, "race.yaml");
    const s = seeds("default");
    const writer = cassetteStore(file);
    await writer.set(s.K.key, s.K.old);
    await writer.set(s.J.key, s.J.value);
    await writer.set(s.N.key, s.N.value);
    await writer.close();
    pruneSeams.beforeDelete = async () => {
      const other = cassetteStore(file);
      await other.set(s.K.key, s.K.fresh);
      await other.close();
    };
    const report = await prune(dir, ["--cassette", file]);
    const after = cassetteStore(file);
    expect(await after.get(s.K.key)).toStrictEqual(s.K.fresh);
    expect(await after.get(s.J.key)).toBeUndefined();
    expect(await after.get(s.N.key)).toStrictEqual(s.N.value);
    await after.close();
    expect(report.removed.map((r) => r.key)).toStrictEqual([s.J.key]);
  });
});
