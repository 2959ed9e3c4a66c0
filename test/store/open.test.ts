import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { importOptional } from "../../src/store/backends/optional.js";
import { escapeGlob } from "../../src/store/backends/redis.js";
import { KeyvStore } from "../../src/store/keyv-store.js";
import { openStore } from "../../src/store/open.js";
import { STORE_TIMEOUT_MS, storeTimeoutMs } from "../../src/store/timeout.js";
import { defaultStoreUrl, parseStoreUrl, redactUrl } from "../../src/store/url.js";

describe("parseStoreUrl", () => {
  const cwd = "/work/app";

  it("resolves sqlite paths: relative to cwd, absolute with three slashes, default when empty", () => {
    expect(parseStoreUrl("sqlite://cache.sqlite", cwd)).toStrictEqual({
      kind: "sqlite",
      path: "/work/app/cache.sqlite",
      url: "sqlite:///work/app/cache.sqlite",
    });
    expect(parseStoreUrl("sqlite://../x/c.db", cwd)).toMatchObject({ path: "/work/x/c.db" });
    expect(parseStoreUrl("sqlite:///abs/c.db", cwd)).toMatchObject({
      path: "/abs/c.db",
      url: "sqlite:///abs/c.db",
    });
    expect(parseStoreUrl("sqlite://", cwd)).toMatchObject({
      path: "/work/app/.invocache/cache.sqlite",
    });
    expect(parseStoreUrl("SQLITE://c.db", cwd)).toMatchObject({ path: "/work/app/c.db" });
    expect(parseStoreUrl("sqlite://:memory:", cwd)).toMatchObject({ path: ":memory:" });
  });

  it("takes the sqlite path verbatim (no percent-decoding, spaces kept)", () => {
    expect(parseStoreUrl("sqlite:///tmp/my dir/a%20b.db", cwd)).toMatchObject({
      path: "/tmp/my dir/a%20b.db",
    });
  });

  it("defaults to process.cwd()", () => {
    expect(parseStoreUrl("sqlite://c.db")).toMatchObject({ path: resolve("c.db") });
  });

  it("parses redis and postgres URLs and redacts credentials and query", () => {
    expect(parseStoreUrl("redis://u:pw@cache.local:6380/2")).toStrictEqual({
      kind: "redis",
      url: "redis://cache.local:6380/2",
      connectUrl: "redis://u:pw@cache.local:6380/2",
    });
    expect(parseStoreUrl("rediss://:pw@h")).toMatchObject({ url: "rediss://h" });
    expect(parseStoreUrl("redis://h:1/")).toMatchObject({ url: "redis://h:1" });
    expect(parseStoreUrl("postgresql://u:pw@db:5433/app?sslmode=require&password=x")).toStrictEqual(
      {
        kind: "postgres",
        url: "postgresql://db:5433/app",
        connectUrl: "postgresql://u:pw@db:5433/app?sslmode=require&password=x",
      },
    );
    expect(parseStoreUrl("memory://")).toStrictEqual({ kind: "memory", url: "memory://" });
  });

  it("refuses unknown schemes with a TypeError naming url and listing the valid ones", () => {
    for (const bad of ["mysql://h/db", "cache.sqlite", "", "file:///x", "C:\\cache.sqlite"]) {
      expect(() => parseStoreUrl(bad)).toThrow(TypeError);
      expect(() => parseStoreUrl(bad)).toThrow(/^url .*valid schemes: sqlite:\/\/, memory:\/\//);
    }
    expect(() => parseStoreUrl(42 as unknown as string)).toThrow(/url must be a string/);
  });

  it("refuses malformed URLs, without echoing the password", () => {
    const cases = [
      "redis://u:secret@h:notaport",
      "redis://",
      "redis://h/not-a-db",
      "postgres://u:secret@h:99999/db",
      "memory://named",
      "sqlite:relative.db",
    ];
    for (const bad of cases) {
      let error: unknown;
      try {
        parseStoreUrl(bad);
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/^url "[^"]*" is malformed: .*valid schemes/);
      expect((error as Error).message).not.toContain("secret");
    }
  });
});

describe("openStore", () => {
  it("is synchronous and touches nothing until first use", () => {
    const store = openStore("sqlite:///nonexistent-dir-for-invocache/never/created.sqlite");
    expect(store.url).toBe("sqlite:///nonexistent-dir-for-invocache/never/created.sqlite");
  });

  it("throws TypeError synchronously for a bad url", () => {
    expect(() => openStore("nope://x")).toThrow(TypeError);
  });
});

describe("defaultStoreUrl", () => {
  it("points at .invocache/cache.sqlite under the project root", () => {
    expect(defaultStoreUrl("/work/app")).toBe(
      `sqlite://${join("/work/app", ".invocache", "cache.sqlite")}`,
    );
    expect(() => defaultStoreUrl("")).toThrow(TypeError);
  });
});

describe("redactUrl", () => {
  it("drops userinfo and query", () => {
    expect(redactUrl("redis://u:p@h:1/0")).toBe("redis://h:1/0");
    expect(redactUrl("postgres://h/db?password=p")).toBe("postgres://h/db");
    expect(redactUrl("redis://h:1")).toBe("redis://h:1");
  });
});

describe("importOptional", () => {
  it("turns a missing optional package into a StoreError saying what to install", async () => {
    const missing = Object.assign(
      new Error(
        "Cannot find package '@keyv/redis' imported from /app/dist/store/backends/redis.js",
      ),
      { code: "ERR_MODULE_NOT_FOUND" },
    );
    const error = await importOptional("@keyv/redis", "redis://h:1", () =>
      Promise.reject(missing),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toContain("npm install @keyv/redis");
    expect((error as StoreError).store).toBe("redis://h:1");
    expect((error as StoreError).cause).toBe(missing);
  });

  it("recognizes Node's real error for a package that is not installed", async () => {
    const name = "@keyv/definitely-not-installed";
    await expect(
      importOptional(name, "redis://h:1", () => import(/* @vite-ignore */ name)),
    ).rejects.toThrow(`npm install ${name}`);
  });

  it("passes other failures through unchanged", async () => {
    const inner = Object.assign(new Error("Cannot find package 'pg' imported from x"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    await expect(
      importOptional("@keyv/postgres", "postgres://h", () => Promise.reject(inner)),
    ).rejects.toBe(inner);
  });
});

describe("escapeGlob", () => {
  it("escapes every Redis glob metacharacter", () => {
    expect(escapeGlob("a*b?c[d]e\\f")).toBe("a\\*b\\?c\\[d\\]e\\\\f");
  });
});

describe("store timeouts", () => {
  it("takes ?timeoutMs= from a Redis or Postgres URL, and keeps it from the driver", () => {
    expect(parseStoreUrl("redis://u:pw@h:1/2?timeoutMs=250")).toStrictEqual({
      kind: "redis",
      url: "redis://h:1/2",
      connectUrl: "redis://u:pw@h:1/2",
      timeoutMs: 250,
    });
    expect(parseStoreUrl("postgres://h/db?sslmode=require&timeoutMs=9")).toStrictEqual({
      kind: "postgres",
      url: "postgres://h/db",
      connectUrl: "postgres://h/db?sslmode=require",
      timeoutMs: 9,
    });
  });

  it("defaults per backend; options win over the URL", () => {
    expect(storeTimeoutMs(parseStoreUrl("redis://h"), {})).toBe(STORE_TIMEOUT_MS.redis);
    expect(storeTimeoutMs(parseStoreUrl("sqlite:///x.db"), {})).toBe(STORE_TIMEOUT_MS.sqlite);
    expect(storeTimeoutMs(parseStoreUrl("redis://h?timeoutMs=7"), {})).toBe(7);
    expect(storeTimeoutMs(parseStoreUrl("redis://h?timeoutMs=7"), { timeoutMs: 8 })).toBe(8);
  });

  it("refuses a bad timeout, naming where it came from", () => {
    for (const bad of ["0", "-1", "1.5", "soon", "", "99999999999"]) {
      expect(() => parseStoreUrl(`redis://u:secret@h?timeoutMs=${bad}`)).toThrow(
        /^url "redis:\/\/h" is malformed: timeoutMs must be a whole number/,
      );
    }
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 31, "5" as unknown as number]) {
      expect(() => openStore("memory://", { timeoutMs: bad })).toThrow(RangeError);
      expect(() => openStore("memory://", { timeoutMs: bad })).toThrow(/options\.timeoutMs/);
    }
  });

  it("a memory store answers well within its timeout; a backend that never opens times out", async () => {
    const store = openStore("memory://", { timeoutMs: 1000 });
    await store.set("k", 1);
    expect(await store.get("k")).toBe(1);
    await store.close();
    // A store whose backend never finishes opening: every operation is a StoreError saying so.
    const stuck = new KeyvStore("stuck://", () => new Promise(() => {}), { timeoutMs: 50 });
    const error = await stuck.get("k").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).operation).toBe("get");
    expect((error as StoreError).message).toContain("timed out after 50 ms");
    await stuck.close(); // does not wait for the open forever either
  });
});
