import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { openStore } from "../../src/store/open.js";
import { storeConformance } from "../../src/testing/store-conformance.js";
import { freePort } from "../helpers/free-port.js";
import { startRedisServer } from "../helpers/redis-server.js";
import { useRedisServer } from "../helpers/servers.js";
import { leaseRace, PROCESSES } from "../helpers/store-workers.js";

const redis = useRedisServer();
const skip = redis.skip;
const url = () => redis.url();

storeConformance("redis://", () => openStore(url()), { skip });

describe.skipIf(skip)("redis://", () => {
  it("selects the database from the path and keeps databases apart", async () => {
    const db0 = openStore(`${url()}/0`);
    const db3 = openStore(`${url()}/3`);
    expect(db3.url).toBe(`${url()}/3`);
    await db3.set("only-in-3", true);
    expect(await db3.get("only-in-3")).toBe(true);
    expect(await db0.get("only-in-3")).toBeUndefined();
    await Promise.all([db0.close(), db3.close()]);
  });

  it(`lets only one of ${PROCESSES} processes win each lease`, async () => {
    await leaseRace(url(), 50);
  });

  it("hides the password in store.url", () => {
    const store = openStore(`redis://user:s3cret@127.0.0.1:${redis.server?.port}/1`);
    expect(store.url).toBe(`redis://127.0.0.1:${redis.server?.port}/1`);
  });
});

// Runs without a server at all: a dead port must fail fast, never miss.
describe("redis:// on a dead port", () => {
  it("rejects get with StoreError (not undefined), within a second or two", async () => {
    const port = await freePort(); // nothing listens there
    const store = openStore(`redis://127.0.0.1:${port}`);
    const start = Date.now();
    const error = await store.get("k").then(
      (value) => ({ value }),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).operation).toBe("get");
    expect((error as StoreError).store).toBe(`redis://127.0.0.1:${port}`);
    expect((error as StoreError).message).toMatch(/ECONNREFUSED/);
    expect((error as Error).cause).toBeDefined();
    expect(Date.now() - start).toBeLessThan(2_500);
    await expect(store.set("k", 1)).rejects.toBeInstanceOf(StoreError);
    await expect(store.acquireLease("k", "o", 1000)).rejects.toBeInstanceOf(StoreError);
    await store.close();
  });
});

describe.skipIf(skip)("redis:// when the server goes away and comes back", () => {
  it("fails with StoreError while down, and works again after", async () => {
    const own = await startRedisServer();
    const store = openStore(own.url);
    await store.set("k", 1);
    await own.stop();
    await expect(store.get("k")).rejects.toBeInstanceOf(StoreError);
    const again = await startRedisServer(own.port);
    try {
      expect(await store.get("k")).toBeUndefined(); // a new, empty server
      await store.set("k", 2);
      expect(await store.get("k")).toBe(2);
    } finally {
      await store.close();
      await again.stop();
    }
  });
});
