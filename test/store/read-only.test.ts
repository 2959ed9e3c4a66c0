/**
 * `openStore(url, { readOnly: true })`: reads an existing SQLite file, never
 * creates one, refuses every write with a StoreError on every backend.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, StoreError } from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";

const dir = tempDir("store-ro");

async function collect(store: ReturnType<typeof openStore>, prefix: string) {
  const out: Array<[string, unknown]> = [];
  for await (const row of store.list(prefix)) out.push(row);
  return out;
}

describe("openStore(url, { readOnly: true })", () => {
  it("reads what a read-write store wrote, and refuses writes", async () => {
    const url = `sqlite://${join(dir, "a.sqlite")}`;
    const rw = openStore(url);
    await rw.set("ns:one", { n: 1 });
    await rw.set("ns:two", { n: 2 });
    await rw.close();
    const ro = openStore(url, { readOnly: true });
    expect(await ro.get("ns:one")).toEqual({ n: 1 });
    expect(await ro.get("ns:none")).toBeUndefined();
    expect(await collect(ro, "ns:")).toEqual([
      ["ns:one", { n: 1 }],
      ["ns:two", { n: 2 }],
    ]);
    for (const write of [
      () => ro.set("ns:three", 3),
      () => ro.delete("ns:one"),
      () => ro.acquireLease("ns:l", "me", 1000),
    ]) {
      const error = await write().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as Error).message).toMatch(/read-only/);
    }
    expect(await ro.get("ns:one")).toEqual({ n: 1 });
    await ro.close();
  });

  it("never creates a missing SQLite file or its folder", async () => {
    const missing = join(dir, "not", "there.sqlite");
    const ro = openStore(`sqlite://${missing}`, { readOnly: true });
    const error = await collect(ro, "").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe("ENOENT");
    await ro.close();
    expect(existsSync(join(dir, "not"))).toBe(false);
  });

  it("refuses writes on the other backends too (memory://)", async () => {
    const ro = openStore("memory://", { readOnly: true });
    await expect(ro.set("k", 1)).rejects.toThrow(StoreError);
    expect(await ro.get("k")).toBeUndefined();
    await ro.close();
  });
});
