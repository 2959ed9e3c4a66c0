/**
 * The embedded store must never load the optional drivers: @keyv/redis alone
 * costs ~190 ms to import, and neither may be installed.
 */
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { openStore } from "../../src/store/open.js";
import { freePort } from "../helpers/free-port.js";
import { tempDir } from "../helpers/tmp.js";

const loaded = vi.hoisted(() => new Set<string>());
vi.mock("@keyv/redis", async (importOriginal) => {
  loaded.add("@keyv/redis");
  return importOriginal();
});
vi.mock("@keyv/postgres", async (importOriginal) => {
  loaded.add("@keyv/postgres");
  return importOriginal();
});

const dir = tempDir("lazy");

describe("openStore imports drivers lazily", () => {
  it("sqlite:// and memory:// never load @keyv/redis or @keyv/postgres", async () => {
    for (const url of [`sqlite://${join(dir, "c.sqlite")}`, "memory://"]) {
      const store = openStore(url);
      await store.set("k", 1);
      await store.get("k");
      for await (const _ of store.list("")) {
        // drain
      }
      await store.acquireLease("l", "o", 1000);
      await store.close();
    }
    expect([...loaded]).toStrictEqual([]);
  });

  it("redis:// loads @keyv/redis only when first used (the control)", async () => {
    const store = openStore(`redis://127.0.0.1:${await freePort()}`);
    expect(loaded.has("@keyv/redis")).toBe(false);
    await store.get("k").catch(() => {});
    expect(loaded.has("@keyv/redis")).toBe(true);
    expect(loaded.has("@keyv/postgres")).toBe(false);
    await store.close();
  });
});
