/**
 * What a hit reads, kept beside the value on SQLite (src/store/backends/sqlite-hit.ts):
 * `m_hit` is always the value without its manifest as SQLite cuts it, or
 * NULL; every kind of write keeps it in step (the store's own, an older
 * invocache's that bumps `m_rev` without it, keyv's value-only write), a
 * file made before it is never changed by an open or a read, and
 * `migrateMeta` adds and fills it. Real SQLite files, both drivers (the
 * better-sqlite3 one when INVOCACHE_BETTER_SQLITE3 names a build).
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { invocationManifest, manifestIdentity } from "../../src/identity/index.js";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION } from "../../src/index.js";
import { createBetterSqliteBackend } from "../../src/store/backends/better-sqlite3.js";
import { SQLITE_HIT_FROM_VALUE } from "../../src/store/backends/sqlite-hit.js";
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
    { role: "r", model: "m", prompt },
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
  /** Each row's m_hit, and what SQLite cuts from its value now. */
  async function hitColumn(path: string): Promise<Array<{ hit: unknown; cut: unknown }>> {
    return (await sql(
      path,
      `SELECT m_hit AS hit, ${SQLITE_HIT_FROM_VALUE} AS cut FROM invocache_entries ORDER BY key`,
    )) as Array<{ hit: unknown; cut: unknown }>;
  }

  it("is the value without its manifest after every write of the store, and what a hit serves", async () => {
    const path = freshFile();
    const store = open(path);
    const a = entry("first", "one");
    const key = entryKey("ns", a.id, 0);
    await store.set(key, a as never);
    let [row] = await hitColumn(path);
    expect(row!.hit).not.toBeNull();
    expect(row!.hit).toBe(row!.cut);
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(a));
    // Overwritten by the store: the new value's cut.
    const b = { ...a, response: { text: "two" } };
    await store.set(key, b as never);
    [row] = await hitColumn(path);
    expect(row!.hit).toBe(row!.cut);
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(b));
    await store.close();
  });

  it("never serves the cut of an older value after a write that changed the value without it", async () => {
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
    expect((await hitColumn(path))[0]!.hit).toBeNull();
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(b));
    // Written again by the store: the column is back.
    await store.set(key, a as never);
    expect((await hitColumn(path))[0]!.hit).toBe((await hitColumn(path))[0]!.cut);
    // An invocache before the column: value and metadata, m_rev bumped, m_hit untouched.
    const c = { ...a, response: { text: "by an older invocache" } };
    await sql(
      path,
      `INSERT INTO invocache_entries (key, value, m_rev) VALUES (?, ?, 1)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, m_rev = coalesce(m_rev, 0) + 1`,
      [key, JSON.stringify({ value: c })],
    );
    expect((await hitColumn(path))[0]!.hit).toBeNull();
    expect(await store.getHit!(key)).toStrictEqual(withoutManifest(c));
    // The same value written again by anyone: the column still matches it.
    await store.set(key, c as never);
    await sql(path, "UPDATE invocache_entries SET value = value WHERE key = ?", [key]);
    const [row] = await hitColumn(path);
    expect(row!.hit).not.toBeNull();
    expect(row!.hit).toBe(row!.cut);
    await store.close();
  });

  it("is NULL for a value that is not JSON, whose hit still reports it as before", async () => {
    const path = freshFile();
    const store = open(path);
    const a = entry("third", "one");
    const key = entryKey("ns", a.id, 0);
    await store.set(key, a as never);
    await sql(path, "UPDATE invocache_entries SET value = '{not json' WHERE key = ?", [key]);
    expect((await hitColumn(path))[0]!.hit).toBeNull();
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
      ((await sql(path, "PRAGMA table_info(invocache_entries)")) as Array<{ name: string }>).map(
        (c) => c.name,
      );
    const before = await columns();
    const store = open(path);
    for (const e of entries) {
      expect(await store.getHit!(entryKey("ns", e.id, 0))).toStrictEqual(withoutManifest(e));
    }
    await store.set(entryKey("ns", entries[0]!.id, 0), entries[0] as never);
    expect(await columns()).toStrictEqual(before);
    await store.migrateMeta!();
    expect(await columns()).toContain("m_hit");
    const rows = await hitColumn(path);
    // The three entries filled; the text that is not JSON keeps NULL.
    expect(rows.filter((r) => r.hit !== null)).toHaveLength(3);
    for (const r of rows) if (r.hit !== null) expect(r.hit).toBe(r.cut);
    // This open writes the column from now on; a new open reads it.
    const d = { ...entries[1]!, response: { text: "after the migration" } };
    await store.set(entryKey("ns", d.id, 0), d as never);
    await store.close();
    const again = open(path);
    expect(await again.getHit!(entryKey("ns", d.id, 0))).toStrictEqual(withoutManifest(d));
    for (const r of await hitColumn(path)) if (r.hit !== null) expect(r.hit).toBe(r.cut);
    // A second migration fills nothing new and changes nothing.
    const snapshot = await hitColumn(path);
    await again.migrateMeta!();
    expect(await hitColumn(path)).toStrictEqual(snapshot);
    await again.close();
  });
});
