import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSqliteBackend } from "../../src/store/backends/sqlite.js";
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
