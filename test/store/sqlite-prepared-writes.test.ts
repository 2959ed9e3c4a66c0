/**
 * The SQLite store's writes through statements it prepares once and keeps
 * (src/store/backends/sqlite.ts, readerOn): a kept statement must behave
 * as a statement compiled for each write would, when the file's schema
 * changes under it (another process migrating it, adding triggers) and
 * after a write that failed on another process's write lock.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, StoreError } from "../../src/index.js";
import { SQLITE_LEASES_TABLE, SQLITE_VALUES_TABLE } from "../../src/store/backends/sqlite.js";
import { rawSql } from "../helpers/raw-sqlite.js";
import { startWorker, tempDir, workerScript } from "../reliability/helpers.js";

const dir = tempDir("sqlite-prepared-writes");

describe("SQLite writes through kept statements", () => {
  it("a write after another connection added a trigger runs that trigger (the kept statement is compiled again)", async () => {
    const file = join(dir, "schema.sqlite");
    const store = openStore(`sqlite://${file}`);
    await store.set("before", { n: 1 });
    expect(await store.acquireLease("lease-before", "me", 60_000)).toBe(true);
    // Another program changes the schema while the store's statements are kept.
    await rawSql(file, "CREATE TABLE seen (key TEXT)");
    await rawSql(
      file,
      `CREATE TRIGGER seen_set AFTER INSERT ON ${SQLITE_VALUES_TABLE} BEGIN INSERT INTO seen (key) VALUES (NEW.key); END`,
    );
    await rawSql(
      file,
      `CREATE TRIGGER seen_lease AFTER INSERT ON ${SQLITE_LEASES_TABLE} BEGIN INSERT INTO seen (key) VALUES ('lease:' || NEW.key); END`,
    );
    await store.set("after", { n: 2 });
    expect(await store.acquireLease("lease-after", "me", 60_000)).toBe(true);
    expect(await rawSql(file, "SELECT key FROM seen ORDER BY key")).toStrictEqual([
      { key: "after" },
      { key: "lease:lease-after" },
    ]);
    expect(await store.get("before")).toStrictEqual({ n: 1 });
    expect(await store.get("after")).toStrictEqual({ n: 2 });
    await store.close();
  });

  it("a write that failed on another process's write lock leaves the handle reading and writing what others wrote since", async () => {
    const file = join(dir, "busy.sqlite");
    const url = `sqlite://${file}`;
    const store = openStore(url);
    const other = openStore(url);
    await store.set("x", 1);
    await other.set("seed", 0);
    expect(await store.get("x")).toBe(1);
    const locker = startWorker(workerScript("sqlite-locker.ts"), [file, "write", "stdin"]);
    await locker.line((l) => l === "locked");
    let failed: unknown;
    try {
      // Waits out the 5 s busy timeout, then fails: the kept statement stopped mid-way.
      failed = await store.set("y", 2).then(
        () => undefined,
        (error: unknown) => error,
      );
    } finally {
      locker.child.stdin!.end("release\n");
      await locker.line((l) => l === "released");
      await locker.exited;
    }
    expect(failed).toBeInstanceOf(StoreError);
    expect(String((failed as Error).message)).toMatch(/database is locked/);
    // Written by another handle after the failure: this handle's reads see it...
    await other.set("z", 3);
    expect(await store.get("z")).toBe(3);
    expect(await store.getHit?.("z")).toBeDefined();
    // ...and its kept statement writes again.
    await store.set("y", 2);
    expect(await other.get("y")).toBe(2);
    await Promise.all([store.close(), other.close()]);
  }, 30_000);
});
