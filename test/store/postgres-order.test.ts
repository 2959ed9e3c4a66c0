/**
 * `Store.listByRecordedAt` on PostgreSQL: the order is built and sorted by
 * the server (a temp table of (recordedAt, key), built in chunks of keys),
 * then paged out. Real PostgreSQL on 127.0.0.1.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { PG_VALUES_TABLE } from "../../src/store/backends/postgres.js";
import { openStore } from "../../src/store/open.js";
import type { JsonValue, Store } from "../../src/store/types.js";
import { usePostgresServer } from "../helpers/servers.js";

const postgres = usePostgresServer();

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
}

/** A plain pg connection: the "other process" that writes while a listing runs. */
async function sql(): Promise<PgClient> {
  const require = createRequire(createRequire(import.meta.url).resolve("@keyv/postgres"));
  const { Client } = require("pg") as { Client: new (c: object) => PgClient };
  const client = new Client({ connectionString: postgres.url() });
  await client.connect();
  return client;
}

/** Byte order (UTF-8), as the store promises: `recordedAt`, then key. */
function byTimeThenKey(a: { at: string; key: string }, b: { at: string; key: string }): number {
  return (
    Buffer.compare(Buffer.from(a.at), Buffer.from(b.at)) ||
    Buffer.compare(Buffer.from(a.key), Buffer.from(b.key))
  );
}

function recordedAt(value: JsonValue): string {
  const meta = (value as { meta?: { recordedAt?: unknown } } | null)?.meta;
  return typeof meta?.recordedAt === "string" ? meta.recordedAt : "";
}

async function listed(store: Store, prefix: string): Promise<Array<[string, JsonValue]>> {
  const out: Array<[string, JsonValue]> = [];
  for await (const row of store.listByRecordedAt!(prefix)) out.push(row);
  return out;
}

describe.skipIf(postgres.skip)("postgres:// listByRecordedAt", () => {
  it("is offered by stores opened read-write and read-only", async () => {
    for (const store of [
      openStore(postgres.url()),
      openStore(postgres.url(), { readOnly: true }),
    ]) {
      expect(store.listByRecordedAt).toBeTypeOf("function");
      await store.close();
    }
  });

  it("orders by recordedAt then key (bytes) across chunks; non-entries and corrupt values first", async () => {
    const prefix = `ord${Math.random().toString(36).slice(2, 8)}:`;
    // The order is under test, not the timeout: a busy machine may take more
    // than the default 5 s for a step of the 12,000-row build.
    const store = openStore(postgres.url(), { timeoutMs: 60_000 });
    await store.get(`${prefix}x`); // creates the tables
    const db = await sql();
    try {
      // 12,000 entries (three chunks of the build) written by one statement,
      // times drawn so that many share one, keys in an order unlike the times'.
      await db.query(
        `INSERT INTO public.${PG_VALUES_TABLE} (key, value)
         SELECT $1 || lpad(((i * 7919) % 12000)::text, 5, '0'),
           json_build_object('value', json_build_object('meta', json_build_object(
             'recordedAt', to_char(timestamp '2026-01-01' + ((i * 104729) % 997) * interval '1 minute',
                                   'YYYY-MM-DD"T"HH24:MI:SS".000Z"'))))::text
         FROM generate_series(0, 11999) AS i`,
        [prefix],
      );
    } finally {
      await db.end();
    }
    // Keys beyond ASCII (byte order is not UTF-16 order past U+FFFF), a value
    // that is not an entry, a lone surrogate elsewhere in an entry.
    await store.set(`${prefix}\u{1F600}`, { meta: { recordedAt: "2026-01-01T00:00:00.000Z" } });
    await store.set(`${prefix}\uFFFD`, { meta: { recordedAt: "2026-01-01T00:00:00.000Z" } });
    await store.set(`${prefix}run`, { runId: "r" });
    await store.set(`${prefix}lone`, {
      meta: { recordedAt: "2025-12-31T00:00:00.000Z" },
      text: "\uD800",
    });
    const db2 = await sql();
    try {
      // Text that is not JSON at all, as another client could leave it.
      await db2.query(`INSERT INTO public.${PG_VALUES_TABLE} (key, value) VALUES ($1, $2)`, [
        `${prefix}corrupt`,
        "{not json",
      ]);
    } finally {
      await db2.end();
    }
    try {
      const rows: Array<{ key: string; at: string }> = [];
      const failures: string[] = [];
      // The corrupt row fails only its own deserialization: the listing
      // reports it by key (a StoreError) after every row before it.
      try {
        for await (const [key, value] of store.listByRecordedAt!(prefix)) {
          rows.push({ key, at: recordedAt(value) });
        }
      } catch (error) {
        failures.push(String((error as Error).message));
      }
      expect(failures).toHaveLength(1);
      expect(failures[0]).toContain(`${prefix}corrupt`);
      await store.delete(`${prefix}corrupt`);
      const all = (await listed(store, prefix)).map(([key, value]) => ({
        key,
        at: recordedAt(value),
      }));
      expect(all).toHaveLength(12_004);
      expect(all).toStrictEqual([...all].sort(byTimeThenKey));
      expect(all[0]).toStrictEqual({ key: `${prefix}run`, at: "" });
      expect(all[1]).toStrictEqual({ key: `${prefix}lone`, at: "2025-12-31T00:00:00.000Z" });
      const twins = all.filter((r) => r.key.endsWith("\u{1F600}") || r.key.endsWith("\uFFFD"));
      // UTF-8 bytes: U+FFFD (EF BF BD) before U+1F600 (F0 9F 98 80); UTF-16 would say otherwise.
      expect(twins.map((r) => r.key)).toStrictEqual([`${prefix}\uFFFD`, `${prefix}\u{1F600}`]);
      expect(new Set(all.map((r) => r.key)).size).toBe(all.length);
    } finally {
      const db3 = await sql();
      await db3.query(`DELETE FROM public.${PG_VALUES_TABLE} WHERE left(key, $2) = $1`, [
        prefix,
        prefix.length,
      ]);
      await db3.end();
      await store.close();
    }
  });

  it("streams: rows are read page by page as the caller goes, not before the first one", async () => {
    const prefix = `str${Math.random().toString(36).slice(2, 8)}:`;
    const store = openStore(postgres.url(), { readOnly: true });
    const writer = openStore(postgres.url());
    const at = (i: number) => `2026-02-01T00:00:${String(i).padStart(2, "0")}.000Z`;
    for (let i = 0; i < 300; i++) {
      const key = `${prefix}${String(i).padStart(3, "0")}`;
      await writer.set(key, { meta: { recordedAt: at(i % 60) }, n: i });
    }
    const db = await sql();
    try {
      const seen: Array<[string, JsonValue]> = [];
      for await (const row of store.listByRecordedAt!(prefix)) {
        seen.push(row);
        if (seen.length === 1) {
          // The first row is here. Another connection now deletes a row that
          // sorts last and changes one that sorts near the end: a listing
          // that had read every value before yielding would still give both
          // as they were.
          await db.query(`DELETE FROM public.${PG_VALUES_TABLE} WHERE key = $1`, [`${prefix}299`]);
          await db.query(`UPDATE public.${PG_VALUES_TABLE} SET value = $2 WHERE key = $1`, [
            `${prefix}298`,
            JSON.stringify({ value: { meta: { recordedAt: at(58) }, n: "changed" } }),
          ]);
        }
      }
      const keys = seen.map(([key]) => key);
      expect(keys).toHaveLength(299);
      expect(keys).not.toContain(`${prefix}299`);
      const changed = seen.find(([key]) => key === `${prefix}298`);
      expect(changed?.[1]).toStrictEqual({ meta: { recordedAt: at(58) }, n: "changed" });
      expect(keys).toStrictEqual(
        [...seen]
          .map(([key, value]) => ({ key, at: recordedAt(value) }))
          .sort(byTimeThenKey)
          .map((r) => r.key),
      );
    } finally {
      await db.query(`DELETE FROM public.${PG_VALUES_TABLE} WHERE left(key, $2) = $1`, [
        prefix,
        prefix.length,
      ]);
      await db.end();
      await writer.close();
      await store.close();
    }
  });

  it("says why when the server refuses the temp table (a role without TEMPORARY)", async () => {
    const db = await sql();
    const name = `nt${Math.random().toString(36).slice(2, 8)}`;
    try {
      await db.query(`CREATE ROLE ${name} LOGIN`);
      await db.query(`CREATE DATABASE ${name} OWNER ${name}`);
      await db.query(`REVOKE TEMPORARY ON DATABASE ${name} FROM PUBLIC, ${name}`);
    } finally {
      await db.end();
    }
    const port = new URL(postgres.url()).port;
    const store = openStore(`postgres://${name}@127.0.0.1:${port}/${name}`);
    try {
      await store.set("k", { meta: { recordedAt: "2026-01-01T00:00:00.000Z" } });
      const failure = await (async () => {
        for await (const _ of store.listByRecordedAt!("")) {
          // never reached
        }
      })().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(StoreError);
      expect(String((failure as Error).message)).toMatch(/TEMPORARY privilege/);
      // Everything else still works.
      expect(await store.get("k")).toStrictEqual({
        meta: { recordedAt: "2026-01-01T00:00:00.000Z" },
      });
    } finally {
      await store.close();
    }
  });
});
