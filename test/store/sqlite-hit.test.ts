/**
 * What a hit reads, kept beside the values on SQLite (src/store/backends/sqlite-hit.ts):
 * each key's hit is always its value without the manifest as SQLite cuts
 * it (NULL for a text that is not JSON), after every kind of write (the
 * store's own, an older invocache's, keyv's value-only write, a delete);
 * a file made before it is never changed by an open or a read, and
 * `migrateMeta` adds and fills it. Real SQLite files, both drivers (the
 * better-sqlite3 one when INVOCACHE_BETTER_SQLITE3 names a build).
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { invocationManifest, manifestIdentity } from "../../src/identity/index.js";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION } from "../../src/index.js";
import { createBetterSqliteBackend } from "../../src/store/backends/better-sqlite3.js";
import { SQLITE_HIT_MIN_SAVING, sqliteHitOf } from "../../src/store/backends/sqlite-hit.js";
import { type Entry, entryKey, openStore } from "../../src/store/index.js";
import { KeyvStore } from "../../src/store/keyv-store.js";
import type { Store } from "../../src/store/types.js";
import { rawSql } from "../helpers/raw-sqlite.js";
import { tempDir } from "../helpers/tmp.js";

const dir = tempDir("sqlite-hit");
let n = 0;
const freshFile = () => join(dir, `h${n++}.sqlite`);

function entry(prompt: string, answer: string): Entry {
  const manifest = invocationManifest(
    // Long: a hit row is kept only when it saves SQLITE_HIT_MIN_SAVING characters.
    { role: "r", model: "m", prompt: `${prompt} ${"long conversation ".repeat(600)}` },
    { homeDir: "/h", tmpDirs: [] },
  );
  return {
    v: 1,
    id: manifestIdentity(manifest),
    manifest,
    response: { text: answer },
    meta: {
      recordedAt: "2026-01-01T00:00:00.000Z",
      durationMs: 1,
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

const withoutManifest = (e: Entry) => {
  const { manifest: _, ...rest } = e;
  return rest;
};

type Sql = (path: string, text: string, params?: unknown[]) => Promise<unknown[]>;

const buildPath = process.env.INVOCACHE_BETTER_SQLITE3;
/**
 * Each driver, and SQL run on the file as another program would, through
 * the same SQLite library: two copies of SQLite in one process do not see
 * each other's POSIX locks, so mixing them on one file is not a test of anything.
 */
const drivers: [string, (path: string) => Store, Sql][] = [
  ["sqlite3", (path) => openStore(`sqlite://${path}`), rawSql],
];
if (buildPath !== undefined) {
  const load = () => createRequire(import.meta.url)(buildPath);
  type Db = {
    prepare(s: string): {
      reader: boolean;
      all(...p: unknown[]): unknown[];
      run(...p: unknown[]): unknown;
    };
    close(): void;
  };
  const betterSql: Sql = async (path, text, params = []) => {
    const Database = load() as new (p: string) => Db;
    const db = new Database(path);
    try {
      const st = db.prepare(text);
      if (st.reader) return st.all(...params);
      st.run(...params);
      return [];
    } finally {
      db.close();
    }
  };
  drivers.push([
    "better-sqlite3",
    (path) =>
      new KeyvStore(`sqlite://${path}`, () => createBetterSqliteBackend(path, load), {
        timeoutMs: 30_000,
        meta: "stored",
      }),
    betterSql,
  ]);
}

describe.each(drivers)("the hit column (%s)", (_driver, open, sql) => {
  /** Each value's stored hit (undefined: no hit row), and the hit it should have (undefined: none). */
  async function hitColumn(path: string): Promise<Array<{ hit: unknown; cut: unknown }>> {
    const rows = (await sql(
      path,
      `SELECT h.key IS NOT NULL AS has, h.hit AS hit,
         CASE WHEN json_valid(value) AND length(CAST(value AS BLOB)) - length(CAST(${sqliteHitOf("value")} AS BLOB)) >= ${SQLITE_HIT_MIN_SAVING}
           THEN 1 ELSE 0 END AS worth, ${sqliteHitOf("value")} AS cut
       FROM invocache_entries AS e LEFT JOIN invocache_hits AS h ON h.key = e.key ORDER BY e.key`,
    )) as Array<{ has: number; hit: unknown; worth: number; cut: unknown }>;
    return rows.map((r) => ({
      hit: r.has ? r.hit : undefined,
      cut: r.worth ? r.cut : undefined,
    }));
  }
  /** Each value has the hit row it should (its cut, when that is JSON and saves enough), and no other. */
  async function inStep(path: string): Promise<void> {
    for (const r of await hitColumn(path)) expect(r.hit).toBe(r.cut);
    const orphans = await sql(
      path,
      "SELECT key FROM invocache_hits WHERE key NOT IN (SELECT key FROM invocache_entries)",
    );
    expect(orphans).toStrictEqual([]);
  }

  it("is the value without its manifest after every write of the store, and what a hit serves", async () => {
    const path = freshFile();
    const store = open(path);
    const a = entry("first", "one");
    const key = entryKey("ns", a.id, 0);
    await store.set(key, a as never);
    const [row] = await hitColumn(path);
    expect(row!.hit).toEqual(expect.any(String));
    await inStep(path);
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(a));
    // Overwritten by the store: the new value's cut.
    const b = { ...a, response: { text: "two" } };
    await store.set(key, b as never);
    await inStep(path);
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(b));
    await store.close();
  });

  it("keeps no row for a small record, whose hit cuts the value as before", async () => {
    const path = freshFile();
    const store = open(path);
    const long = entry("long", "one");
    const small = { ...long, manifest: { small: true } } as unknown as Entry;
    const key = entryKey("ns", long.id, 0);
    await store.set(key, small as never);
    expect((await hitColumn(path))[0]!.hit).toBeUndefined();
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(small));
    // Rewritten long: a row; small again: the row goes.
    await store.set(key, long as never);
    expect((await hitColumn(path))[0]!.hit).toEqual(expect.any(String));
    await store.set(key, small as never);
    expect((await hitColumn(path))[0]!.hit).toBeUndefined();
    await inStep(path);
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(small));
    await store.close();
  });

  it("follows every kind of write, whoever makes it: keyv alone, an older invocache, a delete", async () => {
    const path = freshFile();
    const store = open(path);
    const a = entry("second", "one");
    const key = entryKey("ns", a.id, 0);
    await store.set(key, a as never);
    // keyv alone (or an invocache before stored metadata): the value only.
    const b = { ...a, response: { text: "by keyv" } };
    await sql(path, "UPDATE invocache_entries SET value = ? WHERE key = ?", [
      JSON.stringify({ value: b }),
      key,
    ]);
    await inStep(path);
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(b));
    // An invocache before the hits' table: value and metadata, a new key too.
    const c = { ...a, response: { text: "by an older invocache" } };
    const other = entry("another", "three");
    for (const [k, v] of [
      [key, c],
      [entryKey("ns", other.id, 0), other],
    ] as const) {
      await sql(
        path,
        `INSERT INTO invocache_entries (key, value, m_rev) VALUES (?, ?, 1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value, m_rev = coalesce(m_rev, 0) + 1`,
        [k, JSON.stringify({ value: v })],
      );
    }
    await inStep(path);
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(c));
    expect(await store.getHit!(entryKey("ns", other.id, 0))).toStrictEqual(withoutManifest(other));
    // Deleted by anyone: its hit goes too; a moved key takes its hit along.
    await store.delete(key);
    await sql(path, "UPDATE invocache_entries SET key = 'ns:moved' WHERE key = ?", [
      entryKey("ns", other.id, 0),
    ]);
    await inStep(path);
    expect(await store.getHit!(key)).toBeUndefined();
    expect(await store.getHit!("ns:moved")).toStrictEqual(withoutManifest(other));
    await store.close();
  });

  it("has no row for a value that is not JSON, whose hit still reports it as before", async () => {
    const path = freshFile();
    const store = open(path);
    const a = entry("third", "one");
    const key = entryKey("ns", a.id, 0);
    await store.set(key, a as never);
    await sql(path, "UPDATE invocache_entries SET value = '{not json' WHERE key = ?", [key]);
    expect((await hitColumn(path))[0]!.hit).toBeUndefined();
    await inStep(path);
    await expect(store.getHit!(key)).rejects.toThrow();
    await store.close();
  });

  it("is not added to a file made before it by an open or a read; migrateMeta adds and fills it", async () => {
    const path = freshFile();
    await sql(path, "CREATE TABLE invocache_entries(key VARCHAR(255) PRIMARY KEY, value TEXT )");
    const entries = ["p0", "p1", "p2"].map((p) => entry(p, `answer ${p}`));
    for (const e of entries) {
      await sql(path, "INSERT INTO invocache_entries (key, value) VALUES (?, ?)", [
        entryKey("ns", e.id, 0),
        JSON.stringify({ value: e }),
      ]);
    }
    await sql(path, "INSERT INTO invocache_entries (key, value) VALUES ('ns:bad', '{not json')");
    const columns = async () =>
      (
        (await sql(path, "SELECT name FROM sqlite_master WHERE name LIKE '%hits%'")) as Array<{
          name: string;
        }>
      ).map((c) => c.name);
    expect(await columns()).toStrictEqual([]);
    const store = open(path);
    for (const e of entries) {
      expect(await store.getHit!(entryKey("ns", e.id, 0))).toStrictEqual(withoutManifest(e));
    }
    await store.set(entryKey("ns", entries[0]!.id, 0), entries[0] as never);
    expect(await columns()).toStrictEqual([]);
    await store.migrateMeta!();
    expect(await columns()).toContain("invocache_hits");
    const rows = await hitColumn(path);
    // The three entries filled; the text that is not JSON has no hit row.
    expect(rows.filter((r) => r.hit !== undefined)).toHaveLength(3);
    await inStep(path);
    // Written from now on by the triggers, whoever writes; a new open reads it.
    const d = { ...entries[1]!, response: { text: "after the migration" } };
    await store.set(entryKey("ns", d.id, 0), d as never);
    await store.close();
    const again = open(path);
    expect(await again.getHit!(entryKey("ns", d.id, 0))).toStrictEqual(withoutManifest(d));
    await inStep(path);
    // A second migration fills nothing new and changes nothing.
    const snapshot = await hitColumn(path);
    await again.migrateMeta!();
    expect(await hitColumn(path)).toStrictEqual(snapshot);
    await again.close();
  });
});
