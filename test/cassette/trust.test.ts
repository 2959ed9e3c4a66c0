/**
 * A cassette that would say more (or other) than what was recorded is
 * refused, and a write the caller was told failed never lands later: size
 * limits, read-only files, writes that failed, the parsed-form cache, the
 * lease file, entries whose id is not their manifest's, deep nesting.
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { emitCassette, readCassette } from "../../src/cassette/index.js";
import { leasePath } from "../../src/cassette/leases.js";
import { parseCachePath } from "../../src/cassette/parse-cache.js";
import { cassetteStore, MAX_CASSETTE_BYTES } from "../../src/cassette/store.js";
import { CassetteError } from "../../src/errors.js";
import { createRecorder } from "../../src/index.js";
import { isVouched, vouch } from "../../src/store/internal.js";
import type { GetOptions, JsonValue, Store } from "../../src/store/types.js";
import { MACHINE, makeEntry, tempDir } from "./helpers.js";

const dir = tempDir("cassette-trust");
let n = 0;
const fresh = (label: string) => join(dir, `${label}-${n++}.yaml`);

async function failure(p: Promise<unknown>): Promise<Error> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe("size limit (maxFileBytes)", () => {
  it("defaults to 64 MiB", () => {
    expect(MAX_CASSETTE_BYTES).toBe(64 * 1024 * 1024);
  });

  it("a cassette over the limit is refused on load with a CassetteError saying to split it or use SQLite, before it is read", async () => {
    const path = fresh("too-big");
    const items = Array.from({ length: 20 }, (_, i) => ({
      key: `k${i}`,
      value: "x".repeat(1_000),
    }));
    writeFileSync(path, emitCassette(items));
    const store = cassetteStore(path, { parseCache: false, maxFileBytes: 10_000 });
    for (const op of [
      () => store.get("k1"),
      () => store.set("k2", 1),
      () => store.delete("k3"),
      () => store.usage(),
    ]) {
      const error = await failure(op());
      expect(error).toBeInstanceOf(CassetteError);
      expect(error.message).toMatch(/over the limit of 10000 bytes \(maxFileBytes\)/);
      expect(error.message).toMatch(/split it/);
      expect(error.message).toMatch(/SQLite/);
    }
    await store.discard();
    // The same file under the default limit loads.
    const ok = cassetteStore(path, { parseCache: false });
    expect(await ok.get("k1")).toBe("x".repeat(1_000));
    await ok.close();
  });

  it("a write that would take the cassette over the limit is refused; the file stays as it was", async () => {
    const path = fresh("grow");
    const store = cassetteStore(path, { parseCache: false, maxFileBytes: 4_000 });
    await store.set("small", "y".repeat(100));
    const before = readFileSync(path);
    const error = await failure(store.set("big", "z".repeat(5_000)));
    expect(error).toBeInstanceOf(CassetteError);
    expect(error.message).toMatch(/this write would make the cassette \d+ bytes, over the limit/);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(await store.get("big")).toBeUndefined(); // never visible, not even to this handle
    await store.close();
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("rejects a bad limit", () => {
    expect(() => cassetteStore(fresh("x"), { maxFileBytes: 0 })).toThrow(RangeError);
    expect(() => cassetteStore(fresh("x"), { maxFileBytes: 1.5 })).toThrow(RangeError);
  });
});

describe("read-only cassettes", () => {
  it("a chmod 444 cassette is never rewritten (even by root): set is a CassetteError that says so", async () => {
    const path = fresh("ro");
    const writer = cassetteStore(path, { parseCache: false });
    await writer.set("a", 1);
    await writer.close();
    chmodSync(path, 0o444);
    const before = readFileSync(path);
    const store = cassetteStore(path, { parseCache: false });
    expect(await store.get("a")).toBe(1); // replaying is fine
    const error = await failure(store.set("b", 2));
    expect(error).toBeInstanceOf(CassetteError);
    expect(error.message).toMatch(/is read-only \(mode 0444\)/);
    expect(error.message).toMatch(/chmod u\+w/);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(lstatSync(path).mode & 0o777).toBe(0o444);
    await store.close();
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

describe("a failed write is not written later", () => {
  it("after a set failed, the next successful write does not carry it into the file", async () => {
    const path = fresh("failed");
    const store = cassetteStore(path, { parseCache: false });
    await store.set("first", 1);
    chmodSync(path, 0o444);
    await expect(store.set("failed", 2)).rejects.toBeInstanceOf(CassetteError);
    await expect(store.delete("first")).rejects.toBeInstanceOf(CassetteError);
    chmodSync(path, 0o644);
    await store.set("later", 3);
    await store.close();
    const keys = (await readCassette(path)).map((i) => i.key);
    expect(keys).toStrictEqual(["first", "later"]);
    expect((await store.usage().catch(() => undefined)) ?? "closed").toBe("closed");
  });

  it("on-close: a flush that failed is not retried by close()", async () => {
    const path = fresh("failed-on-close");
    const first = cassetteStore(path, { parseCache: false });
    await first.set("first", 1);
    await first.close();
    const store = cassetteStore(path, { parseCache: false, write: "on-close" });
    await store.set("buffered", 2);
    chmodSync(path, 0o444);
    await expect(store.flush()).rejects.toBeInstanceOf(CassetteError);
    chmodSync(path, 0o644);
    await store.close();
    expect((await readCassette(path)).map((i) => i.key)).toStrictEqual(["first"]);
  });
});

describe("the parsed-form cache never says more than the YAML", () => {
  function bigCassette(path: string): { key: string } {
    const items = Array.from({ length: 200 }, (_, i) => {
      const { key, entry } = makeEntry(`prompt ${i} ${"lorem ipsum ".repeat(40)}`, {
        text: `answer ${i}`,
      });
      return { key, value: entry as unknown as JsonValue };
    });
    writeFileSync(path, emitCassette(items));
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    return { key: items[0]!.key };
  }

  async function cached(path: string, cache: string, key: string): Promise<string> {
    const cold = cassetteStore(path, { parseCache: cache });
    expect(await cold.get(key)).toMatchObject({ response: { text: "answer 0" } });
    await cold.close(); // waits for the background cache write
    const file = parseCachePath(cache, path);
    expect(existsSync(file)).toBe(true);
    return file;
  }

  async function answer(path: string, cache: string, key: string): Promise<unknown> {
    const store = cassetteStore(path, { parseCache: cache });
    const value = (await store.get(key)) as { response: { text: string } };
    await store.close();
    return value.response.text;
  }

  it("a hand-edited cache is ignored: the YAML's answer is served", async () => {
    const path = fresh("cache-edit");
    const cache = join(dir, "cache-edit");
    const { key } = bigCassette(path);
    const file = await cached(path, cache, key);
    writeFileSync(file, readFileSync(file, "utf8").replace('"answer 0"', '"planted"'));
    expect(await answer(path, cache, key)).toBe("answer 0");
  });

  it("the cache is read (a consistent one is used), but only when it is this user's own, not group/world writable", async () => {
    const path = fresh("cache-mode");
    const cache = join(dir, "cache-mode");
    const { key } = bigCassette(path);
    const file = await cached(path, cache, key);
    // Rewrite it consistently (item hash recomputed), as only its owner could: it is used...
    const [head, line] = readFileSync(file, "utf8").split(/\n(.*)/s) as [string, string];
    const edited = line.replace('"answer 0"', '"from cache"');
    const header = JSON.parse(head) as { rows: string };
    header.rows = createHash("sha256").update(edited).digest("hex");
    writeFileSync(file, `${JSON.stringify(header)}\n${edited}`, { mode: 0o600 });
    chmodSync(file, 0o600);
    expect(await answer(path, cache, key)).toBe("from cache");
    // ...but not once others may write it.
    chmodSync(file, 0o666);
    expect(await answer(path, cache, key)).toBe("answer 0");
  });

  it("a cache for other YAML bytes (same stat data is not enough) is ignored", async () => {
    const path = fresh("cache-bytes");
    const cache = join(dir, "cache-bytes");
    const { key } = bigCassette(path);
    const file = await cached(path, cache, key);
    const header = JSON.parse(readFileSync(file, "utf8").split("\n")[0]!) as { sha256: string };
    expect(header.sha256).toBe(createHash("sha256").update(readFileSync(path)).digest("hex"));
    const rest = readFileSync(file, "utf8").slice(readFileSync(file, "utf8").indexOf("\n"));
    writeFileSync(file, JSON.stringify({ ...header, sha256: "0".repeat(64) }) + rest, {
      mode: 0o600,
    });
    const store = cassetteStore(path, { parseCache: cache });
    expect(await store.get(key)).toMatchObject({ response: { text: "answer 0" } });
    await store.close();
  });

  it("a symlink planted at the cache path is replaced, its target never written", async () => {
    const path = fresh("cache-link");
    const cache = join(dir, "cache-link");
    const { key } = bigCassette(path);
    const file = await cached(path, cache, key);
    const victim = join(dir, "victim-cache.txt");
    writeFileSync(victim, "precious");
    writeFileSync(file, "");
    const { rmSync } = await import("node:fs");
    rmSync(file);
    symlinkSync(victim, file);
    // The link is not followed on read (the YAML is parsed), and the rewrite replaces the link.
    utimesSync(path, new Date(Date.now() - 30_000), new Date(Date.now() - 30_000));
    expect(await answer(path, cache, key)).toBe("answer 0");
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
  });
});

describe("the lease file", () => {
  it("a symlink planted at the lease path is replaced, its target never written", async () => {
    const path = fresh("lease-link");
    const victim = join(dir, "victim-lease.txt");
    writeFileSync(victim, "precious");
    symlinkSync(victim, leasePath(path));
    const store = cassetteStore(path, { parseCache: false });
    expect(await store.acquireLease("ns:lease:x", "me", 10_000)).toBe(true);
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(lstatSync(leasePath(path)).isSymbolicLink()).toBe(false);
    expect(lstatSync(leasePath(path)).mode & 0o077).toBe(0);
    expect(await store.acquireLease("ns:lease:x", "other", 10_000)).toBe(false);
    await store.releaseLease("ns:lease:x", "me");
    expect(existsSync(leasePath(path))).toBe(false);
    await store.close();
  });
});

describe("entries whose id is not their manifest's identity", () => {
  function swappedCassette(label: string) {
    const a = makeEntry("what is two plus two", { text: "4" });
    const b = makeEntry("what is the capital of France", { text: "Paris" });
    const text = emitCassette([
      { key: a.key, value: a.entry as unknown as JsonValue },
      { key: b.key, value: b.entry as unknown as JsonValue },
    ]);
    const swapped = text
      .replace(`id: ${a.entry.id}`, "id: SWAP")
      .replace(`id: ${b.entry.id}`, `id: ${a.entry.id}`)
      .replace("id: SWAP", `id: ${b.entry.id}`);
    const path = fresh(label);
    writeFileSync(path, swapped);
    // After the swap, entries[0] (line 3) holds b's id over a's manifest, entries[1] the reverse.
    const line1 = swapped.split("\n").indexOf(`  - id: ${a.entry.id}`) + 1;
    expect(line1).toBeGreaterThan(3);
    return { a, b, path, swapped, line1 };
  }

  function expectRefused(error: CassetteError, path: string, line: number, index: number) {
    expect(error).toBeInstanceOf(CassetteError);
    expect(error.line).toBe(line);
    expect(error.message).toContain(`${path}:${line}:`);
    expect(error.message).toContain(`entries[${index}].id`);
    expect(error.message).toMatch(/is not the identity of this entry's manifest/);
  }

  it("swapped id lines: each entry is refused when served, and any write, with a CassetteError naming the file, line and entry", async () => {
    const { a, b, path, swapped, line1 } = swappedCassette("swapped");
    const store = cassetteStore(path, { parseCache: false });
    for (let round = 0; round < 2; round++) {
      // The same error every time: a refused entry stays refused.
      expectRefused((await failure(store.get(b.key))) as CassetteError, path, 3, 0);
      expectRefused((await failure(store.get(a.key))) as CassetteError, path, line1, 1);
    }
    // A write rewrites every entry, so it checks them all first, in file order.
    expectRefused((await failure(store.set("k", 1))) as CassetteError, path, 3, 0);
    expectRefused((await failure(store.delete(a.key))) as CassetteError, path, 3, 0);
    // Listing serves every entry it lists.
    expectRefused(
      (await failure(
        (async () => {
          for await (const _ of store.list("")) {
            // nothing is yielded before the check
          }
        })(),
      )) as CassetteError,
      path,
      3,
      0,
    );
    await store.discard();
    expect(readFileSync(path, "utf8")).toBe(swapped);
  });

  it("a get told the manifest and id (GetOptions.expect) passes the check by comparing, for that get only", async () => {
    const { a, b, path, line1 } = swappedCassette("expect-hint");
    const store = cassetteStore(path, { parseCache: false });
    // entries[1] holds a's id over b's manifest. A caller whose word matches
    // what is stored (here a wrong word: b's manifest does not hash to a's id)
    // is served: the check compares instead of hashing.
    const stored = { id: a.entry.id, manifest: b.entry.manifest as unknown as JsonValue };
    const hinted = await store.get(a.key, { expect: stored });
    expect((hinted as { id: string }).id).toBe(a.entry.id);
    // Not remembered: without the hint, and with a hint that differs, the
    // stored manifest is hashed and the entry refused.
    expectRefused((await failure(store.get(a.key))) as CassetteError, path, line1, 1);
    expectRefused(
      (await failure(
        store.get(a.key, {
          expect: { id: a.entry.id, manifest: a.entry.manifest as unknown as JsonValue },
        }),
      )) as CassetteError,
      path,
      line1,
      1,
    );
    await store.discard();
  });

  it("a pass by a hint the recorder vouches for is remembered; only the recorder's own hints are vouched", async () => {
    // A vouched hint is taken as a proof that its id is its manifest's
    // identity. Vouching for a lie (only code inside invocache can) shows
    // the pass is remembered: later gets, without a hint, are served.
    const { a, b, path } = swappedCassette("expect-vouched");
    const store = cassetteStore(path, { parseCache: false });
    const lie = vouch({ id: a.entry.id, manifest: b.entry.manifest as unknown as JsonValue });
    expect((await store.get(a.key, { expect: lie })) as { id: string }).toMatchObject({
      id: a.entry.id,
    });
    expect((await store.get(a.key)) as { id: string }).toMatchObject({ id: a.entry.id });
    await store.discard();
    // The recorder's hints are vouched: its id is its own hash of that manifest.
    const seen: GetOptions[] = [];
    const good = makeEntry("what is two plus two", { text: "4" });
    const goodPath = fresh("expect-recorder");
    writeFileSync(
      goodPath,
      emitCassette([{ key: good.key, value: good.entry as unknown as JsonValue }]),
    );
    const inner = cassetteStore(goodPath, { parseCache: false });
    // The real store, its getHit watched (a Proxy: its methods use private fields).
    const watching = new Proxy(inner, {
      get(target, name) {
        if (name === "getHit") {
          return (key: string, options?: GetOptions) => {
            if (options !== undefined) seen.push(options);
            return target.getHit!(key, options);
          };
        }
        const v: unknown = Reflect.get(target, name, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) as Store;
    const r = createRecorder({ store: watching, mode: "replay", identity: MACHINE });
    const answer = await r.call(
      { role: "builder", model: "gpt-5", prompt: "what is two plus two", task: "T-1" },
      async () => ({ text: "live" }),
    );
    expect(answer).toStrictEqual({ text: "4" });
    expect(seen.length).toBe(1);
    expect(isVouched(seen[0]!.expect)).toBe(true);
    expect(isVouched({ ...seen[0]!.expect! })).toBe(false);
    await r.close();
  });

  it("a tampered entry that is never read does not fail the load: the other entries are served, its own get fails", async () => {
    const good = makeEntry("list the files", { text: "a.txt" });
    const { a, b, path, line1 } = swappedCassette("tampered-unread");
    const text = emitCassette([{ key: good.key, value: good.entry as unknown as JsonValue }]);
    // One more, untampered entry after the two swapped ones.
    writeFileSync(path, readFileSync(path, "utf8") + text.slice(text.indexOf("  - id:")));
    const goodLine = readFileSync(path, "utf8").split("\n").indexOf(`  - id: ${good.entry.id}`) + 1;
    expect(goodLine).toBeGreaterThan(line1);
    const store = cassetteStore(path, { parseCache: false });
    expect(await store.get(good.key)).toStrictEqual(good.entry);
    expect(await store.get("no:such:key")).toBeUndefined();
    const usage = await store.usage();
    expect(usage.used).toStrictEqual([good.key]);
    expectRefused((await failure(store.get(a.key))) as CassetteError, path, line1, 1);
    expectRefused((await failure(store.get(b.key))) as CassetteError, path, 3, 0);
    await store.discard();
  });

  it("read from the parsed-form cache, a tampered entry still owes its check and is refused with its place", async () => {
    const { a, b, path, line1 } = swappedCassette("tampered-cached");
    // Big enough to be cached: one large value beside the swapped entries.
    const big = `${readFileSync(path, "utf8")}values:\n  - key: pad\n    value: ${"x".repeat(70_000)}\n`;
    writeFileSync(path, big);
    const committed = new Date(Date.now() - 60_000);
    utimesSync(path, committed, committed);
    const cache = join(dir, `cache-${n++}`);
    const first = cassetteStore(path, { parseCache: cache });
    expect(await first.get("pad")).toBe("x".repeat(70_000));
    await first.close(); // waits for the cache write
    expect(existsSync(parseCachePath(cache, path))).toBe(true);
    const second = cassetteStore(path, { parseCache: cache });
    expect(await second.get("pad")).toBe("x".repeat(70_000));
    expectRefused((await failure(second.get(a.key))) as CassetteError, path, line1, 1);
    expectRefused((await failure(second.get(b.key))) as CassetteError, path, 3, 0);
    await second.discard();
  });

  it("a hand-edited prompt under an unchanged id is refused", async () => {
    const a = makeEntry("summarize the report", { text: "summary" });
    const text = emitCassette([{ key: a.key, value: a.entry as unknown as JsonValue }]);
    const path = fresh("edited");
    writeFileSync(path, text.replace("summarize the report", "delete the report"));
    await expect(readCassette(path)).rejects.toThrow(
      /is not the identity of this entry's manifest/,
    );
  });
});

describe("deep nesting", () => {
  it("deeply nested block YAML is a CassetteError with line and column from every operation, never a stack error", async () => {
    for (const depth of [300, 1_000, 5_000]) {
      let text = "invocache: 1\nentries: []\nvalues:\n  - key: k\n    value:\n";
      for (let i = 0; i < depth; i++) text += `${" ".repeat(6 + i)}a:\n`;
      text += `${" ".repeat(6 + depth)}b: 1\n`;
      const path = fresh(`deep-${depth}`);
      writeFileSync(path, text);
      const store = cassetteStore(path, { parseCache: false });
      for (const op of [() => store.get("k"), () => store.set("z", 1), () => store.delete("k")]) {
        const error = (await failure(op())) as CassetteError;
        expect(error, `${depth}: ${error.message}`).toBeInstanceOf(CassetteError);
        expect(error.message).toMatch(/nests deeper than 256 levels/);
        expect(error.line).toBeGreaterThan(0);
        expect(error.column).toBeGreaterThan(0);
      }
      await store.discard();
      expect(readFileSync(path, "utf8")).toBe(text);
    }
  });

  it("a value nested deeper than the limit is refused on set, not written and then unreadable", async () => {
    const path = fresh("deep-set");
    const store = cassetteStore(path, { parseCache: false });
    let deep: JsonValue = 1;
    for (let i = 0; i < 300; i++) deep = { a: deep };
    await expect(store.set("deep", deep)).rejects.toThrow(/nests deeper than 256 levels/);
    let ok: JsonValue = 1;
    for (let i = 0; i < 200; i++) ok = [ok];
    await store.set("ok", ok);
    await store.close();
    expect((await readCassette(path)).map((i) => i.key)).toStrictEqual(["ok"]);
  });
});
