/**
 * The viewer on real PostgreSQL and Redis stores. On PostgreSQL (a private cluster on loopback):
 * the same lazy paths as on SQLite (test/viewer/scale.test.ts), through the
 * same `Store.listMeta`: it starts and serves the first page, the next page
 * and a search without reading a stored value, and opening an entry reads
 * that one entry. And on Redis (stored metadata in a hash and sorted sets
 * beside each value): its pages read no stored value either. The full read
 * without metadata is test/viewer/scale.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION, openStore } from "../../src/index.js";
import { type Entry, entryKey } from "../../src/store/index.js";
import { KeyvStore } from "../../src/store/keyv-store.js";
import { startViewer } from "../../src/viewer/index.js";
import {
  type PostgresServer,
  postgresAvailable,
  startPostgresServer,
} from "../helpers/postgres-server.js";
import { type RedisServer, redisServerBinary, startRedisServer } from "../helpers/redis-server.js";
import { get } from "./fixtures.js";

const N = 120;

function entry(i: number): Entry {
  return {
    v: 1,
    id: i.toString(16).padStart(64, "0"),
    manifest: {
      attempt: 0,
      inputs: [],
      model: "gpt-5",
      prompt: "p",
      role: i === 7 ? "reviewer" : "builder",
      task: i === 7 ? "the-postgres-needle" : "",
    },
    response: { text: "r" },
    meta: {
      recordedAt: new Date(Date.parse("2026-01-01") + i * 1000).toISOString(),
      durationMs: 12,
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

describe.skipIf(!postgresAvailable)("the viewer on PostgreSQL with stored metadata", () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await startPostgresServer();
    const store = openStore(pg.url);
    for (let i = 0; i < N; i++)
      await store.set(entryKey("default", entry(i).id, 0), entry(i) as never);
    await store.close();
  }, 120_000);
  afterAll(async () => {
    await pg?.stop();
  });

  it("serves pages and a search reading no stored value; an entry reads one", async () => {
    const gets = vi.spyOn(KeyvStore.prototype, "get");
    const lists = vi.spyOn(KeyvStore.prototype, "list");
    const viewer = await startViewer({ store: pg.url });
    try {
      const host = `127.0.0.1:${viewer.port}`;
      const first = await get(viewer.port, `/?token=${viewer.token}`, { host });
      const cookie = String(first.headers["set-cookie"]).split(";")[0]!;
      const page = (path: string) => get(viewer.port, path, { host, cookie });
      const rows = (body: string) => body.match(/<tr data-href="\/entry\//g)?.length ?? 0;
      const overview = await page("/");
      expect(rows(overview.body)).toBe(50);
      expect(overview.body).not.toContain('id="full-read"');
      // Newest first: entry 119, recorded 119 s after the base.
      expect(overview.body).toContain("2026-01-01 00:01:59 UTC");
      expect(rows((await page("/?offset=100")).body)).toBe(20);
      const found = await page("/?q=postgres-needle");
      expect(rows(found.body)).toBe(1);
      expect(gets).not.toHaveBeenCalled();
      expect(lists).not.toHaveBeenCalled();
      const key = entryKey("default", entry(7).id, 0);
      const opened = await page(`/entry/${encodeURIComponent(key)}`);
      expect(opened.body).toContain("the-postgres-needle");
      expect(gets).toHaveBeenCalledTimes(1);
      expect(lists).not.toHaveBeenCalled();
    } finally {
      await viewer.close();
      vi.restoreAllMocks();
    }
  }, 120_000);
});

describe.skipIf(redisServerBinary === undefined)("the viewer on Redis", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  }, 60_000);
  afterAll(async () => {
    await redis?.stop();
  });

  it("serves its pages from Redis's stored metadata, reading no value", async () => {
    const url = `redis://127.0.0.1:${redis.port}`;
    const store = openStore(url);
    for (let i = 0; i < 3; i++)
      await store.set(entryKey("default", entry(i).id, 0), entry(i) as never);
    expect(store.listMeta).toBeTypeOf("function");
    await store.close();
    const gets = vi.spyOn(KeyvStore.prototype, "get");
    const lists = vi.spyOn(KeyvStore.prototype, "list");
    const viewer = await startViewer({ store: url });
    try {
      const host = `127.0.0.1:${viewer.port}`;
      const first = await get(viewer.port, `/?token=${viewer.token}`, { host });
      const cookie = String(first.headers["set-cookie"]).split(";")[0]!;
      const overview = await get(viewer.port, "/", { host, cookie });
      expect(overview.body.match(/<tr data-href="\/entry\//g)?.length).toBe(3);
      expect(overview.body).not.toContain('id="full-read"');
      expect(gets).not.toHaveBeenCalled();
      expect(lists).not.toHaveBeenCalled();
    } finally {
      await viewer.close();
      vi.restoreAllMocks();
    }
  }, 60_000);
});
