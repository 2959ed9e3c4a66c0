/**
 * The optional better-sqlite3 driver of `sqlite://` stores
 * (`openStore(url, { sqliteDriver: "better-sqlite3" })`).
 *
 * better-sqlite3 is an optional peer, not installed here (it compiles on
 * install): without it, opening fails with a StoreError naming the install
 * step. The conformance suite and the cross-driver checks run against a real
 * build only when INVOCACHE_BETTER_SQLITE3 gives the path of a better-sqlite3
 * 12.x package directory (opt in, docs/performance.md "SQLite drivers"):
 *   INVOCACHE_BETTER_SQLITE3=/path/to/node_modules/better-sqlite3 npx vitest run test/store/better-sqlite3.test.ts
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { createRecorder } from "../../src/index.js";
import { createBetterSqliteBackend } from "../../src/store/backends/better-sqlite3.js";
import { KeyvStore } from "../../src/store/keyv-store.js";
import { openStore } from "../../src/store/open.js";
import { storeConformance } from "../../src/testing/store-conformance.js";
import { countingStore } from "../helpers/counting-store.js";
import { tempDir } from "../helpers/tmp.js";

const buildPath = process.env.INVOCACHE_BETTER_SQLITE3;
const load = () => createRequire(import.meta.url)(buildPath!);
const dir = tempDir("better-sqlite3");
let n = 0;
const freshFile = () => join(dir, `b${n++}.sqlite`);
/** A store over the better-sqlite3 build named by the env var (as openStore builds it). */
const betterStore = (file: string) =>
  new KeyvStore(`sqlite://${file}`, () => createBetterSqliteBackend(file, load), {
    timeoutMs: 30_000,
    // As openStore opens a SQLite store: listMeta from the stored metadata columns.
    meta: "stored",
  });

describe("sqliteDriver option", () => {
  it("without better-sqlite3 installed, the first operation is a StoreError naming the install step", async () => {
    const store = openStore(`sqlite://${freshFile()}`, { sqliteDriver: "better-sqlite3" });
    const failure = await store.get("k").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(StoreError);
    expect(String((failure as Error).message)).toMatch(/npm install better-sqlite3@12\.x/);
    await store.close();
  });

  it("refuses an unknown driver with a TypeError naming the option", () => {
    expect(() => openStore("sqlite://x.sqlite", { sqliteDriver: "sqlite4" as "sqlite3" })).toThrow(
      /options\.sqliteDriver must be "sqlite3" or "better-sqlite3"/,
    );
  });
});

const file = freshFile();
storeConformance("sqlite:// through better-sqlite3", () => betterStore(file), {
  skip: buildPath === undefined,
});

describe.skipIf(buildPath === undefined)("better-sqlite3 beside sqlite3", () => {
  it("each driver reads what the other wrote (same file layout)", async () => {
    const path = freshFile();
    const better = betterStore(path);
    await better.set("from-better", { a: 1 });
    await better.close();
    const classic = openStore(`sqlite://${path}`);
    expect(await classic.get("from-better")).toStrictEqual({ a: 1 });
    await classic.set("from-sqlite3", ["b"]);
    expect(await classic.acquireLease("lease", "one", 60_000)).toBe(true);
    await classic.close();
    const again = betterStore(path);
    expect(await again.get("from-sqlite3")).toStrictEqual(["b"]);
    // The lease table is shared too: another owner cannot take a live lease.
    expect(await again.acquireLease("lease", "two", 60_000)).toBe(false);
    await again.close();
  });

  /** A second connection on `file` holding its write lock (BEGIN IMMEDIATE) until it lets go. */
  function lockHolder(file: string) {
    const Database = load() as new (
      path: string,
    ) => { exec(sql: string): unknown; close(): unknown };
    const holder = new Database(file);
    holder.exec("BEGIN IMMEDIATE");
    return {
      letGo(how: "COMMIT" | "ROLLBACK") {
        holder.exec(how);
        holder.close();
      },
    };
  }

  /** Count the ticks of a 10 ms timer while `work` runs: a blocked event loop ticks no more. */
  async function ticksDuring<T>(work: () => Promise<T>): Promise<{ ticks: number; result: T }> {
    let ticks = 0;
    const tick = setInterval(() => ticks++, 10);
    try {
      const result = await work();
      return { ticks, result };
    } finally {
      clearInterval(tick);
    }
  }

  it("a write waiting for another connection's lock leaves the event loop free, then lands", async () => {
    const file = freshFile();
    const store = betterStore(file);
    await store.set("warm", 1);
    const holder = lockHolder(file);
    // The holder lets go from a timer: only an event loop left free can run it.
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        holder.letGo("COMMIT");
        resolve();
      }, 500),
    );
    const { ticks } = await ticksDuring(async () => {
      await store.set("k", { v: 1 });
      await released;
    });
    expect(await store.get("k")).toStrictEqual({ v: 1 });
    // 500 ms of waiting is ~50 ticks of a free loop; a loop blocked in the wait ticks once at most.
    expect(ticks).toBeGreaterThanOrEqual(10);
    await store.close();
  }, 20_000);

  it("a lock held past the busy timeout fails the write loudly; the loop stays free meanwhile", async () => {
    const file = freshFile();
    const store = betterStore(file);
    await store.set("warm", 1);
    const holder = lockHolder(file);
    const { ticks, result: failure } = await ticksDuring(() =>
      store.set("k", 1).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    holder.letGo("ROLLBACK");
    expect(failure).toBeInstanceOf(StoreError);
    expect(String((failure as Error).message)).toMatch(/set.*k/);
    expect(String(((failure as Error).cause as Error).message)).toMatch(/database is locked/);
    // ~5 s of waiting: hundreds of ticks of a free loop, none of a blocked one.
    expect(ticks).toBeGreaterThanOrEqual(100);
    expect(await store.get("k")).toBeUndefined();
    await store.close();
  }, 20_000);

  it("a write that timed out waiting for the lock never lands once the lock goes", async () => {
    const file = freshFile();
    const store = new KeyvStore(`sqlite://${file}`, () => createBetterSqliteBackend(file, load), {
      timeoutMs: 300,
    });
    await store.set("warm", 1);
    const holder = lockHolder(file);
    const failures = await Promise.all(
      [store.set("late", 1), store.delete("warm")].map((p) =>
        p.then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    );
    // Let go while both are still being tried again (their 5 s are not over).
    holder.letGo("COMMIT");
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(StoreError);
      expect(String((failure as Error).message)).toMatch(/timed out after 300 ms/);
    }
    // Longer than the longest pause between tries: any retry has run by now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Checked and closed beside a handle with the default limit: the 300 ms
    // one is only for the writes (a read or a close on a busy CI machine can
    // take longer, and the last connection's close checkpoints to disk).
    const check = betterStore(file);
    expect(await check.get("late")).toBeUndefined();
    expect(await check.get("warm")).toBe(1);
    await store.close(); // not the last connection: no checkpoint
    await check.close();
  });

  it("a replay hit is one read and no write", async () => {
    const counting = countingStore(betterStore(freshFile()));
    const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
    const r = createRecorder({ store: counting.store, mode: "auto", identity: machine });
    const req = { role: "builder", model: "gpt-5", prompt: "hello" };
    await r.call(req, async () => ({ ok: true }));
    counting.reset();
    for (let i = 0; i < 3; i++) {
      expect(await r.call(req, async () => ({ ok: false }))).toStrictEqual({ ok: true });
    }
    expect({ ...counting.counts }).toStrictEqual({
      get: 0,
      getHit: 3,
      set: 0,
      delete: 0,
      list: 0,
      acquireLease: 0,
      releaseLease: 0,
    });
    await r.close();
  });
});
