import { cpSync, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { createSqliteBackend, loadSqlite3 } from "../../src/store/backends/sqlite.js";
import { openStore } from "../../src/store/open.js";
import { storeConformance } from "../../src/testing/store-conformance.js";
import { tempDir } from "../helpers/tmp.js";

const dir = tempDir("sqlite");

// One file for the whole suite: handles share data, as real users' processes do.
const file = join(dir, "conformance", "cache.sqlite");
storeConformance("sqlite:// (file)", () => openStore(`sqlite://${file}`));

describe("sqlite://", () => {
  it("creates parent folders on first use, not on open", async () => {
    const path = join(dir, "a", "b", "c.sqlite");
    const store = openStore(`sqlite://${path}`);
    expect(store.url).toBe(`sqlite://${path}`);
    expect(existsSync(join(dir, "a"))).toBe(false);
    await store.set("k", 1);
    expect(existsSync(path)).toBe(true);
    await store.close();
  });

  it("keeps data across handles and reopenings", async () => {
    const path = join(dir, "persist.sqlite");
    const first = openStore(`sqlite://${path}`);
    await first.set("k", { kept: true });
    await first.close();
    const second = openStore(`sqlite://${path}`);
    expect(await second.get("k")).toStrictEqual({ kept: true });
    await second.close();
  });

  it("runs in WAL mode with synchronous=NORMAL and a busy timeout", async () => {
    const backend = await createSqliteBackend(join(dir, "pragmas.sqlite"));
    try {
      const adapter = backend.keyv.store as {
        query: (sql: string) => Promise<Array<Record<string, unknown>>>;
      };
      expect(await adapter.query("PRAGMA journal_mode")).toStrictEqual([{ journal_mode: "wal" }]);
      // synchronous: 0 OFF, 1 NORMAL, 2 FULL.
      expect(await adapter.query("PRAGMA synchronous")).toStrictEqual([{ synchronous: 1 }]);
      expect(await adapter.query("PRAGMA busy_timeout")).toStrictEqual([{ timeout: 5000 }]);
    } finally {
      await backend.close();
    }
  });

  it("answers parallel reads each with its own row, and a read after a write with the write", async () => {
    // Keyed reads run through one prepared statement on a second connection.
    const store = openStore(`sqlite://${join(dir, "parallel.sqlite")}`);
    await Promise.all(Array.from({ length: 64 }, (_, i) => store.set(`k${i}`, { i })));
    const got = await Promise.all(Array.from({ length: 64 }, (_, i) => store.get(`k${i}`)));
    expect(got).toStrictEqual(Array.from({ length: 64 }, (_, i) => ({ i })));
    for (let round = 0; round < 5; round++) {
      await store.set("k0", { round });
      expect(await store.get("k0")).toStrictEqual({ round });
    }
    expect(await store.get("absent")).toBeUndefined();
    await store.close();
  });

  it("reads another handle's write at once, through the full and the hit read alike", async () => {
    // Both reads are statements on one connection: neither may leave the
    // connection's read snapshot open for the other (a stepped statement
    // holds it until it finishes or is reset), or it would serve old values.
    const path = join(dir, "snapshots.sqlite");
    const reader = openStore(`sqlite://${path}`);
    const writer = openStore(`sqlite://${path}`);
    const hit = (key: string) => (reader.getHit as NonNullable<typeof reader.getHit>)(key);
    for (let round = 0; round < 6; round++) {
      await writer.set("k", { round });
      expect(round % 2 === 0 ? await reader.get("k") : await hit("k")).toStrictEqual({ round });
      expect(round % 2 === 0 ? await hit("k") : await reader.get("k")).toStrictEqual({ round });
    }
    await writer.delete("k");
    expect(await hit("k")).toBeUndefined();
    expect(await reader.get("k")).toBeUndefined();
    await Promise.all([reader.close(), writer.close()]);
  });

  it("reports a file it cannot open as StoreError, never as a miss", async () => {
    // A directory where the database file should be.
    const store = openStore(`sqlite://${dir}`);
    await expect(store.get("k")).rejects.toMatchObject({ name: "StoreError", operation: "get" });
    await store.close();
  });

  it("reports corrupt stored data as StoreError", async () => {
    const path = join(dir, "corrupt.sqlite");
    const backend = await createSqliteBackend(path);
    const adapter = backend.keyv.store as { query: (sql: string) => Promise<unknown> };
    await adapter.query(`INSERT INTO invocache_entries (key, value) VALUES ('bad', 'not json')`);
    await adapter.query(
      `INSERT INTO invocache_entries (key, value) VALUES ('alien', '"no envelope"')`,
    );
    await backend.close();
    const store = openStore(`sqlite://${path}`);
    await expect(store.get("bad")).rejects.toMatchObject({ name: "StoreError", key: "bad" });
    await expect(store.get("alien")).rejects.toMatchObject({ name: "StoreError", key: "alien" });
    await store.close();
  });
});

describe("sqlite3 without its native binding", () => {
  it("is a StoreError naming the install step (npm rebuild sqlite3)", () => {
    // A real sqlite3 package whose native part was never built, as after
    // `npm install --ignore-scripts`: its JavaScript without build/.
    const root = join(dir, "no-binding");
    const pkg = join(root, "node_modules", "sqlite3");
    const real = dirname(createRequire(import.meta.url).resolve("sqlite3/package.json"));
    mkdirSync(pkg, { recursive: true });
    cpSync(join(real, "package.json"), join(pkg, "package.json"));
    cpSync(join(real, "lib"), join(pkg, "lib"), { recursive: true });
    for (const dep of ["bindings", "file-uri-to-path"]) {
      symlinkSync(
        dirname(createRequire(real).resolve(`${dep}/package.json`)),
        join(root, "node_modules", dep),
      );
    }
    const load = () => createRequire(join(root, "index.js"))("sqlite3");
    let error: unknown;
    try {
      loadSqlite3("sqlite:///app/cache.sqlite", load);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreError);
    const e = error as StoreError;
    expect(e.store).toBe("sqlite:///app/cache.sqlite");
    expect(e.operation).toBe("open");
    expect(e.message).toContain("npm rebuild sqlite3");
    expect(e.message).toContain("--ignore-scripts");
    expect(String((e.cause as Error).message)).toMatch(/Could not locate the bindings file/);
  });

  it("passes any other failure through unchanged", () => {
    const other = new Error("something else");
    expect(() =>
      loadSqlite3("sqlite:///x", () => {
        throw other;
      }),
    ).toThrow(other);
  });
});
