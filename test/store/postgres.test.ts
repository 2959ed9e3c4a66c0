import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { openStore } from "../../src/store/open.js";
import { storeConformance } from "../../src/testing/store-conformance.js";
import { freePort } from "../helpers/free-port.js";
import { usePostgresServer } from "../helpers/servers.js";
import { leaseRace, PROCESSES } from "../helpers/store-workers.js";

const postgres = usePostgresServer();
const skip = postgres.skip;
const url = () => postgres.url();

storeConformance("postgres://", () => openStore(url()), { skip });

describe.skipIf(skip)("postgres://", () => {
  it("gives each store its own pool: closing one leaves the other working", async () => {
    // @keyv/postgres alone shares one module-level pool and ends it on any disconnect.
    const a = openStore(url());
    const b = openStore(url().replace("postgres://", "postgresql://"));
    await a.set("pool-a", 1);
    await b.set("pool-b", 2);
    await a.close();
    expect(await b.get("pool-a")).toBe(1);
    await b.close();
  });

  it(`lets only one of ${PROCESSES} processes win each lease`, async () => {
    await leaseRace(url(), 50);
  });

  it("hides the password and query in store.url", () => {
    const store = openStore(
      `postgres://u:pw@127.0.0.1:${postgres.server?.port}/postgres?password=pw`,
    );
    expect(store.url).toBe(`postgres://127.0.0.1:${postgres.server?.port}/postgres`);
  });
});

describe("postgres:// on a dead port", () => {
  it("rejects get with StoreError, not undefined", async () => {
    const port = await freePort();
    const store = openStore(`postgres://postgres@127.0.0.1:${port}/postgres`);
    const error = await store.get("k").then(
      (value) => ({ value }),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toMatch(/ECONNREFUSED/);
    await store.close();
  });
});
