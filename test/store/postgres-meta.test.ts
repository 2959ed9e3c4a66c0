/**
 * Stored metadata on a real PostgreSQL server (postgres-meta.ts): a table
 * made before it keeps its layout on open and write and is reported as not
 * migrated; `migrateMeta` fills it; a value rewritten without its metadata
 * (an older invocache) is reported again, never served stale.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { MetadataMissingError } from "../../src/errors.js";
import { invocationManifest, manifestIdentity } from "../../src/identity/index.js";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION } from "../../src/index.js";
import { pgMetaPage } from "../../src/store/backends/postgres-meta.js";
import {
  type Entry,
  entryKey,
  type MetaQuery,
  openStore,
  type StoredMeta,
} from "../../src/store/index.js";
import type { Store } from "../../src/store/types.js";
import { usePostgresServer } from "../helpers/servers.js";

const postgres = usePostgresServer();

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
}

async function withClient<T>(url: string, fn: (c: PgClient) => Promise<T>): Promise<T> {
  const require = createRequire(createRequire(import.meta.url).resolve("@keyv/postgres"));
  const { Client } = require("pg") as { Client: new (o: { connectionString: string }) => PgClient };
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function entry(prompt: string, recordedAt: string): Entry {
  const manifest = invocationManifest(
    { role: "r", model: "m", prompt },
    { homeDir: "/h", tmpDirs: [] },
  );
  return {
    v: 1,
    id: manifestIdentity(manifest),
    manifest,
    response: { text: prompt },
    meta: {
      recordedAt,
      durationMs: 1,
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

async function listAll(store: Store): Promise<StoredMeta[]> {
  const out: StoredMeta[] = [];
  for await (const m of store.listMeta!({})) out.push(m);
  return out;
}

describe.skipIf(postgres.skip)("stored metadata on PostgreSQL", () => {
  it("migrates a table made before it, and never serves metadata an older writer made stale", async () => {
    const url = postgres.url();
    const old = entry("old", "2026-01-01T00:00:00.000Z");
    const key = entryKey("ns", old.id, 0);
    await withClient(url, async (c) => {
      await c.query(
        "CREATE TABLE public.invocache_entries (key VARCHAR(512) PRIMARY KEY, value TEXT)",
      );
      await c.query("INSERT INTO public.invocache_entries (key, value) VALUES ($1, $2)", [
        key,
        JSON.stringify({ value: old }),
      ]);
    });
    const store = openStore(url);
    const e = entry("new", "2026-02-01T00:00:00.000Z");
    await store.set(entryKey("ns", e.id, 0), e as never);
    const columns = await withClient(url, (c) =>
      c.query(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'invocache_entries' ORDER BY ordinal_position",
      ),
    );
    expect(columns.rows.map((r) => r.column_name)).toStrictEqual(["key", "value"]);
    await expect(listAll(store)).rejects.toBeInstanceOf(MetadataMissingError);

    expect(await store.migrateMeta!()).toBe(2);
    expect((await listAll(store)).map((m) => m.recordedAt).sort()).toStrictEqual([
      "2026-01-01T00:00:00.000Z",
      "2026-02-01T00:00:00.000Z",
    ]);

    // An older invocache rewrites the value alone: the trigger clears the metadata.
    const changed = { ...old, meta: { ...old.meta, recordedAt: "2026-05-05T00:00:00.000Z" } };
    await withClient(url, (c) =>
      c.query("UPDATE public.invocache_entries SET value = $1 WHERE key = $2", [
        JSON.stringify({ value: changed }),
        key,
      ]),
    );
    await expect(listAll(store)).rejects.toBeInstanceOf(MetadataMissingError);
    expect(await store.migrateMeta!()).toBe(1);
    const newest: StoredMeta[] = [];
    for await (const m of store.listMeta!({ order: "recordedAtDesc", limit: 1 })) newest.push(m);
    expect(newest.map((m) => [m.key, m.recordedAt])).toStrictEqual([
      [key, "2026-05-05T00:00:00.000Z"],
    ]);
    await store.close();
  });
});

describe.skipIf(postgres.skip)("stored metadata listings on PostgreSQL: each page seeks", () => {
  // A page after the first must start where the last one ended (an index
  // condition), not read the index from its start and filter: that made
  // every page of a time-ordered listing a scan of the table (2.9 s a page
  // at 1M entries, `bench/scale.ts --backend postgres`).
  const cases: Array<[string, MetaQuery]> = [
    ["recordedAt", { order: "recordedAt" }],
    ["recordedAtDesc", { order: "recordedAtDesc" }],
    ["recordedAtDesc before", { order: "recordedAtDesc", recordedBefore: "2026-06-01" }],
    ["key", { order: "key" }],
    ["key in a namespace", { order: "key", prefix: "ns:" }],
  ];
  it.each(cases)("%s: the page after a key is an index range", async (_, q) => {
    const store = openStore(postgres.url());
    await store.set("k", 1);
    await store.close();
    const after = { key: "ns:e:abc:0", recordedAt: "2026-05-05T00:00:00.000Z" };
    const { sql, params } = pgMetaPage(q, after, 500);
    const plan = await withClient(postgres.url(), async (c) => {
      // The table is tiny here: without this the planner reads it whole either way.
      await c.query("SET enable_seqscan = off");
      const r = await c.query(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      return JSON.stringify(r.rows[0]);
    });
    expect(plan).toMatch(/"Index Cond":"[^"]*(\(key|key\)|ROW\()/);
  });
});
