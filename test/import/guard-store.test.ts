/**
 * The importer's guard over the destination: a write never replaces a value
 * already there (whatever the recorder concluded from a failed read), and a
 * dry run keeps its writes in memory.
 */
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { guardStore } from "../../src/import/guard-store.js";
import { openStore } from "../../src/store/index.js";

describe("guardStore", () => {
  it("refuses to overwrite a key the destination holds, and keeps the value there", async () => {
    const store = openStore("memory://");
    await store.set("ns:e:abc:0", { kept: true });
    const guarded = guardStore(store, false);
    await expect(guarded.set("ns:e:abc:0", { kept: false })).rejects.toThrow(StoreError);
    await expect(guarded.set("ns:e:abc:0", { kept: false })).rejects.toThrow(
      /kept, never overwritten/,
    );
    expect(await store.get("ns:e:abc:0")).toEqual({ kept: true });
    await guarded.set("ns:e:def:0", { new: 1 });
    expect(await store.get("ns:e:def:0")).toEqual({ new: 1 });
    await expect(guarded.delete("ns:e:def:0")).rejects.toThrow(/never deletes/);
    await store.close();
  });

  it("under a dry run, writes are read back but never reach the destination", async () => {
    const store = openStore("memory://");
    const guarded = guardStore(store, true);
    await guarded.set("ns:e:abc:0", { v: 1 });
    expect(await guarded.get("ns:e:abc:0")).toEqual({ v: 1 });
    expect(await store.get("ns:e:abc:0")).toBeUndefined();
    await expect(guarded.set("ns:e:abc:0", { v: 2 })).rejects.toThrow(/already holds/);
    await store.close();
  });

  it("keeps the destination's policy, so a cassette's secret options apply to an import", () => {
    const memory = openStore("memory://");
    const policy = { maxAge: "30d", secrets: {} };
    const store = Object.assign(Object.create(memory) as typeof memory, { policy });
    expect(guardStore(store, false).policy).toBe(policy);
  });
});
