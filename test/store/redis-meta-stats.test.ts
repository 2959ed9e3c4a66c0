/**
 * `statsMeta` on Redis sums a page of keys per script run: whatever the
 * page size (one key, a page boundary inside an id's occurrences, a prefix
 * range), the sums equal the fold of listMeta. Real Redis.
 */
import { createClient } from "@keyv/redis";
import { describe, expect, it } from "vitest";
import type { RedisMetaClient } from "../../src/store/backends/redis-meta.js";
import { statsRedisMeta } from "../../src/store/backends/redis-meta-stats.js";
import { foldMetaStats, openStore } from "../../src/store/index.js";
import { mixedStatsRows } from "../../src/testing/stats-mixed.js";
import { useRedisServer } from "../helpers/servers.js";

const redis = useRedisServer();
const QUERY = { usageDetail: ["gemini-1.5-flash"], usageDetailAbove: 1000 };

describe.skipIf(redis.skip)("statsMeta on Redis a page at a time", () => {
  it("every page size gives the fold of listMeta", async () => {
    const store = openStore(redis.url());
    const raw = createClient({ url: redis.url() });
    await raw.connect();
    try {
      for (const ns of ["a", "b", "c"]) {
        for (const { key, value } of mixedStatsRows(ns)) await store.set(key, value);
      }
      const client = raw as unknown as RedisMetaClient;
      const expected = await foldMetaStats(store.listMeta!({}), QUERY);
      expect(expected.ids).toBe(45);
      for (const size of [1, 2, 3, 5, 16, 1000]) {
        expect(await statsRedisMeta(client, QUERY, Date.now(), size)).toStrictEqual(expected);
      }
      const b = await foldMetaStats(store.listMeta!({ prefix: "b:" }), QUERY);
      expect(await statsRedisMeta(client, { ...QUERY, prefix: "b:" }, Date.now(), 4)).toStrictEqual(
        b,
      );
    } finally {
      await raw.close();
      await store.close();
    }
  });
});
