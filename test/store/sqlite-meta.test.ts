/**
 * Stored metadata on a real SQLite file (src/store/backends/sqlite-meta.ts):
 * a file made before it is never changed by an open or a read, answers
 * `listMeta` with MetadataMissingError until `migrateMeta`, and after it;
 * a write that changes a value without its metadata (an older invocache)
 * makes the store report missing metadata instead of serving stale rows.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MetadataMissingError } from "../../src/errors.js";
import { invocationManifest, manifestIdentity } from "../../src/identity/index.js";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION } from "../../src/index.js";
import { type Entry, entryKey, openStore, type StoredMeta } from "../../src/store/index.js";
import type { Store } from "../../src/store/types.js";
import { rawSql as sql } from "../helpers/raw-sqlite.js";
import { tempDir } from "../helpers/tmp.js";

const dir = tempDir("sqlite-meta");
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

/** A file in the layout of an invocache before stored metadata, with `n` entries. */
async function oldFile(name: string, n: number): Promise<{ path: string; keys: string[] }> {
  const path = join(dir, `${name}.sqlite`);
  await sql(path, "CREATE TABLE invocache_entries(key VARCHAR(255) PRIMARY KEY, value TEXT )");
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const e = entry(`p${i}`, `2026-01-0${1 + (i % 9)}T00:00:00.000Z`);
    const key = entryKey("ns", e.id, 0);
    keys.push(key);
    await sql(path, "INSERT INTO invocache_entries (key, value) VALUES (?, ?)", [
      key,
      JSON.stringify({ value: e }),
    ]);
  }
  return { path, keys };
}

describe("stored metadata on SQLite", () => {
  it("leaves a file made before it unchanged on open and write, says how to migrate, then answers", async () => {
    const { path, keys } = await oldFile("old", 3);
    const store = openStore(`sqlite://${path}`);
    const e = entry("new", "2026-02-01T00:00:00.000Z");
    await store.set(entryKey("ns", e.id, 0), e as never);
    const columns = (await sql(path, "PRAGMA table_info(invocache_entries)")) as Array<{
      name: string;
    }>;
    expect(columns.map((c) => c.name)).toStrictEqual(["key", "value"]);
    const error = await listAll(store).catch((x: unknown) => x);
    expect(error).toBeInstanceOf(MetadataMissingError);
    expect((error as Error).message).toMatch(/invocache migrate-store --store sqlite:/);

    const reader = openStore(`sqlite://${path}`, { readOnly: true });
    await expect(listAll(reader)).rejects.toBeInstanceOf(MetadataMissingError);

    expect(await store.migrateMeta!()).toBe(4);
    const rows = await listAll(reader);
    expect(rows.map((r) => r.key).sort()).toStrictEqual([...keys, entryKey("ns", e.id, 0)].sort());
    expect(rows.every((r) => r.kind === "entry")).toBe(true);
    // Again: nothing left to fill.
    expect(await store.migrateMeta!()).toBe(0);
    // A write after the migration keeps its metadata, from this handle too.
    const f = entry("after", "2026-03-01T00:00:00.000Z");
    await store.set(entryKey("ns", f.id, 0), f as never);
    const newest: StoredMeta[] = [];
    for await (const m of reader.listMeta!({ order: "recordedAtDesc", limit: 1 })) newest.push(m);
    expect(newest[0]).toMatchObject({ id: f.id, recordedAt: "2026-03-01T00:00:00.000Z" });
    await reader.close();
    await store.close();
  });

  it("never serves stale metadata after a write that changed only the value", async () => {
    const path = join(dir, "stale.sqlite");
    const store = openStore(`sqlite://${path}`);
    const e = entry("x", "2026-01-01T00:00:00.000Z");
    const key = entryKey("ns", e.id, 0);
    await store.set(key, e as never);
    expect((await listAll(store)).map((m) => m.recordedAt)).toStrictEqual([
      "2026-01-01T00:00:00.000Z",
    ]);
    // What an older invocache does: write the value alone.
    const changed = { ...e, meta: { ...e.meta, recordedAt: "2026-05-05T00:00:00.000Z" } };
    await sql(path, "UPDATE invocache_entries SET value = ? WHERE key = ?", [
      JSON.stringify({ value: changed }),
      key,
    ]);
    await expect(listAll(store)).rejects.toBeInstanceOf(MetadataMissingError);
    expect(await store.migrateMeta!()).toBe(1);
    expect((await listAll(store)).map((m) => m.recordedAt)).toStrictEqual([
      "2026-05-05T00:00:00.000Z",
    ]);
    await store.close();
  });

  it("answers listings from the covering indexes, never the values", async () => {
    const path = join(dir, "plan.sqlite");
    const store = openStore(`sqlite://${path}`);
    await store.set("k", 1);
    await store.close();
    const plans = [
      "SELECT key, m_meta FROM invocache_entries INDEXED BY invocache_meta_key WHERE key > '' ORDER BY key LIMIT 5",
      "SELECT key, m_meta FROM invocache_entries INDEXED BY invocache_meta_at WHERE m_at IS NOT NULL AND m_at < 'z' ORDER BY m_at DESC, key DESC LIMIT 5",
    ];
    for (const p of plans) {
      const plan = (await sql(path, `EXPLAIN QUERY PLAN ${p}`)) as Array<{ detail: string }>;
      expect(plan.map((r) => r.detail).join(" ")).toMatch(/COVERING INDEX/);
    }
  });
});
