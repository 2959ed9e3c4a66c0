import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { openStore } from "../../src/store/open.js";
import { storeConformance } from "../../src/testing/store-conformance.js";
import { freePort } from "../helpers/free-port.js";
import {
  type PostgresServer,
  postgresAvailable,
  startPostgresServer,
} from "../helpers/postgres-server.js";
import { skipUnless } from "../helpers/service.js";
import { leaseRace, PROCESSES } from "../helpers/store-workers.js";

const skip = skipUnless(postgresAvailable, "postgres (initdb)", "apt-get install postgresql");

let server: PostgresServer | undefined;
beforeAll(async () => {
  if (!skip) server = await startPostgresServer();
});
afterAll(async () => {
  await server?.stop();
});

const url = () => {
  if (server === undefined) throw new Error("postgres not started");
  return server.url;
};

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
    const store = openStore(`postgres://u:pw@127.0.0.1:${server?.port}/postgres?password=pw`);
    expect(store.url).toBe(`postgres://127.0.0.1:${server?.port}/postgres`);
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
