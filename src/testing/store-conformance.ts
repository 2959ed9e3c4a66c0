/**
 * The store conformance suite: the behaviour every `Store` must show, run
 * against a real backend (keyv's `storageTestSuite` habit). Adding a store
 * means passing this suite, nothing else.
 *
 * Decisions it pins:
 * - Values are exact: what `get` returns deep-equals what `set` was given and
 *   is a fresh copy each time. Strings round trip exactly on every backend,
 *   lone surrogates and U+0000 included (they are stored as JSON `\u` escapes).
 * - Keys must be well-formed Unicode without U+0000, 1-512 code units: every
 *   store refuses other keys with a TypeError/RangeError, because SQLite and
 *   Redis would merge keys that differ only in a lone surrogate.
 * - `list(prefix)` matches the prefix literally and case-sensitively.
 * - `deleteIfUnchanged(key, valueDigest(value))` removes a value only while
 *   it is still the one read (a re-record since is kept), whatever key order
 *   the store gives values back in.
 * - Failures reject with `StoreError`; a closed store rejects every call.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreError } from "../errors.js";
import type { JsonValue } from "../json/index.js";
import type { Store } from "../store/index.js";
import { valueDigest } from "../store/index.js";
import { storedMetaConformance } from "./stored-meta-conformance.js";

/** Options of {@link storeConformance}. */
export interface StoreConformanceOptions {
  /** Skip the suite (say why on the console yourself). */
  skip?: boolean;
  /**
   * The store has the optional `deleteIfUnchanged` (default true: every
   * store of invocache has it). False for a store without it: its tests are
   * left out instead of failing.
   */
  deleteIfUnchanged?: boolean;
  /**
   * The store has the optional `getHit` (default true: every store of
   * invocache has it). False for a store without it: its tests are left out.
   */
  getHit?: boolean;
}

/**
 * Define the conformance suite for one store. `factory` opens a handle to the
 * store under test; handles may share data (Redis, Postgres), so every test
 * works under its own random key prefix and never assumes an empty store.
 *
 * @example
 * import { storeConformance } from "invocache/vitest";
 * storeConformance("memory", () => openStore("memory://"));
 */
export function storeConformance(
  name: string,
  factory: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  describe.skipIf(options.skip === true)(`store conformance: ${name}`, () => {
    let store: Store;
    let p: string;

    /** Every `[key, value]` listed under `prefix`, by key. */
    async function listAll(prefix: string): Promise<Array<[string, JsonValue]>> {
      const out: Array<[string, JsonValue]> = [];
      for await (const row of store.list(prefix)) out.push(row);
      return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    }

    beforeEach(async () => {
      store = await factory();
      p = `conf-${Math.random().toString(36).slice(2, 10)}:`;
    });
    afterEach(async () => {
      await store.close();
    });

    describe("values", () => {
      it("answers undefined for an absent key", async () => {
        expect(await store.get(`${p}absent`)).toBeUndefined();
      });

      it("returns what was set, for every kind of JSON value", async () => {
        const values: JsonValue[] = [
          null,
          true,
          false,
          0,
          -1.5,
          2 ** 53 - 1,
          1e308,
          5e-324,
          "",
          "text",
          [],
          {},
          [1, "two", null, [3], { four: 4 }],
          { a: { b: { c: [true, false, null] } }, "": "empty key", "with space": 1 },
        ];
        for (const [i, value] of values.entries()) await store.set(`${p}${i}`, value);
        for (const [i, value] of values.entries()) {
          expect(await store.get(`${p}${i}`)).toStrictEqual(value);
        }
      });

      it("keeps null apart from absent", async () => {
        await store.set(`${p}null`, null);
        expect(await store.get(`${p}null`)).toBeNull();
        expect(await store.get(`${p}other`)).toBeUndefined();
      });

      it("overwrites", async () => {
        await store.set(`${p}k`, { v: 1 });
        await store.set(`${p}k`, [2]);
        expect(await store.get(`${p}k`)).toStrictEqual([2]);
      });

      it("takes GetOptions: the expect hint never changes what get answers", async () => {
        await store.set(`${p}k`, { v: 1 });
        const expectation = { id: "0".repeat(64), manifest: { role: "other" } };
        expect(await store.get(`${p}k`, { expect: expectation })).toStrictEqual({ v: 1 });
        expect(await store.get(`${p}absent`, { expect: expectation })).toBeUndefined();
      });

      it("deletes, and says whether something was there", async () => {
        await store.set(`${p}k`, 1);
        expect(await store.delete(`${p}k`)).toBe(true);
        expect(await store.get(`${p}k`)).toBeUndefined();
        expect(await store.delete(`${p}k`)).toBe(false);
      });

      it("returns fresh copies: mutation on either side never reaches the store", async () => {
        const value = { list: [1, 2], nested: { x: "a" } };
        await store.set(`${p}k`, value);
        value.list.push(3);
        value.nested.x = "changed";
        const pending = { n: 1 };
        const write = store.set(`${p}pending`, pending);
        pending.n = 2; // after the call, before it completes
        await write;
        expect(await store.get(`${p}pending`)).toStrictEqual({ n: 1 });
        const first = (await store.get(`${p}k`)) as { list: number[]; nested: { x: string } };
        expect(first).toStrictEqual({ list: [1, 2], nested: { x: "a" } });
        first.list.push(99);
        first.nested.x = "mutated";
        const second = await store.get(`${p}k`);
        expect(second).toStrictEqual({ list: [1, 2], nested: { x: "a" } });
        expect(second).not.toBe(first);
      });

      it("round-trips every string exactly, lone surrogates and U+0000 included", async () => {
        const strings = [
          "\uD800",
          "a\uDC00b",
          "\uDC00\uD800",
          "\uD83D\uDE00 astral",
          "\u0000nul\u0000",
          "\uFFFF\uFFFE",
          "e\u0301 vs \u00e9",
          "日本語 עברית العربية",
          ":colon-first",
          ":base64:aGVsbG8=",
          '"quotes" \\ and \n newline \t tab',
        ];
        await store.set(`${p}strings`, strings);
        await store.set(`${p}keys`, Object.fromEntries(strings.map((s, i) => [s, i])));
        expect(await store.get(`${p}strings`)).toStrictEqual(strings);
        expect(await store.get(`${p}keys`)).toStrictEqual(
          Object.fromEntries(strings.map((s, i) => [s, i])),
        );
      });

      it("stores a 1 MiB value", async () => {
        const chunk = "0123456789abcdef\u00e9\u65e5\uD83D\uDE00".repeat(1024);
        const big = { text: chunk.repeat(Math.ceil((1 << 20) / chunk.length)), n: [1, 2, 3] };
        expect(big.text.length).toBeGreaterThanOrEqual(1 << 20);
        await store.set(`${p}big`, big);
        expect(await store.get(`${p}big`)).toStrictEqual(big);
      });

      it("refuses values JSON would change, with a TypeError naming the path", async () => {
        const bad: unknown[] = [
          undefined,
          Number.NaN,
          Number.POSITIVE_INFINITY,
          new Date(0),
          new Map(),
          () => 1,
          10n,
          Symbol("s"),
          { nested: { when: new Date(0) } },
          // biome-ignore lint/suspicious/noSparseArray: the hole is the point
          [1, , 3],
        ];
        for (const value of bad) {
          await expect(store.set(`${p}bad`, value as JsonValue)).rejects.toThrow(TypeError);
        }
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        await expect(store.set(`${p}bad`, cyclic as JsonValue)).rejects.toThrow(/cycle/);
        await expect(store.set(`${p}bad`, { a: { b: Number.NaN } } as JsonValue)).rejects.toThrow(
          /value\.a\.b/,
        );
        expect(await store.get(`${p}bad`)).toBeUndefined();
      });

      it("writes from many concurrent calls all land", async () => {
        await Promise.all(Array.from({ length: 100 }, (_, i) => store.set(`${p}c${i}`, { i })));
        const got = await Promise.all(
          Array.from({ length: 100 }, (_, i) => store.get(`${p}c${i}`)),
        );
        expect(got).toStrictEqual(Array.from({ length: 100 }, (_, i) => ({ i })));
      });
    });

    describe("keys", () => {
      it("keeps unicode keys distinct (NFC and NFD are different keys)", async () => {
        const keys = ["\u00e9", "e\u0301", "\uD83D\uDE00", "日本", "עברית", "A", "a", " a", "a "];
        for (const [i, key] of keys.entries()) await store.set(p + key, i);
        for (const [i, key] of keys.entries()) expect(await store.get(p + key)).toBe(i);
      });

      it("refuses keys that are not well-formed, with TypeError or RangeError", async () => {
        const typeErrors: unknown[] = ["", "a\uD800", "\uDC00", `${p}\u0000`, 1, null, undefined];
        for (const key of typeErrors) {
          await expect(store.get(key as string)).rejects.toThrow(TypeError);
          await expect(store.set(key as string, 1)).rejects.toThrow(TypeError);
          await expect(store.delete(key as string)).rejects.toThrow(TypeError);
          await expect(store.acquireLease(key as string, "o", 1000)).rejects.toThrow(TypeError);
          await expect(store.releaseLease(key as string, "o")).rejects.toThrow(TypeError);
        }
        await expect(store.get("k".repeat(513))).rejects.toThrow(RangeError);
        await store.set(p + "k".repeat(512 - p.length), "longest key");
        expect(await store.get(p + "k".repeat(512 - p.length))).toBe("longest key");
      });
    });

    describe("list", () => {
      async function listed(prefix: string): Promise<Record<string, JsonValue>> {
        const out: Record<string, JsonValue> = {};
        for await (const [key, value] of store.list(prefix)) {
          expect(Object.hasOwn(out, key), `list yielded ${key} twice`).toBe(false);
          out[key] = value;
        }
        return out;
      }

      it("yields exactly the keys that start with the prefix", async () => {
        for (const key of ["a:1", "a:2", "a:sub:3", "b:1", "a"]) await store.set(p + key, key);
        expect(await listed(`${p}a:`)).toStrictEqual({
          [`${p}a:1`]: "a:1",
          [`${p}a:2`]: "a:2",
          [`${p}a:sub:3`]: "a:sub:3",
        });
        expect(Object.keys(await listed(p)).sort()).toStrictEqual(
          ["a", "a:1", "a:2", "a:sub:3", "b:1"].map((k) => p + k).sort(),
        );
        expect(await listed(`${p}zzz`)).toStrictEqual({});
      });

      it("matches the prefix literally: no wildcards, case-sensitive", async () => {
        const keys = ["%x", "_x", "Xx", "xx", "*x", "?x", "[x]", "\\x", "Ax", "ax"];
        for (const key of keys) await store.set(p + key, key);
        for (const key of keys) {
          const only = key.slice(0, -1);
          const expected = keys.filter((k) => k.startsWith(only)).map((k) => p + k);
          expect(Object.keys(await listed(p + only)).sort(), `prefix ${only}`).toStrictEqual(
            expected.sort(),
          );
        }
      });

      it("includes keys with unicode, and an empty prefix lists them too", async () => {
        await store.set(`${p}\u00e9`, 1);
        await store.set(`${p}e\u0301`, 2);
        expect(await listed(`${p}\u00e9`)).toStrictEqual({ [`${p}\u00e9`]: 1 });
        const all = await listed("");
        expect(all[`${p}\u00e9`]).toBe(1);
        expect(all[`${p}e\u0301`]).toBe(2);
      });

      it("pages through many keys", async () => {
        await Promise.all(Array.from({ length: 450 }, (_, i) => store.set(`${p}m:${i}`, i)));
        const got = await listed(`${p}m:`);
        expect(Object.keys(got)).toHaveLength(450);
        expect(got[`${p}m:449`]).toBe(449);
      });

      it("refuses a prefix that is not well-formed", async () => {
        const iterate = async () => {
          for await (const _ of store.list("a\uD800")) {
            // never reached
          }
        };
        await expect(iterate()).rejects.toThrow(TypeError);
      });

      it("returns fresh copies", async () => {
        await store.set(`${p}k`, { a: [1] });
        for await (const [, value] of store.list(p)) (value as { a: number[] }).a.push(2);
        expect(await store.get(`${p}k`)).toStrictEqual({ a: [1] });
      });
    });

    describe.skipIf(options.deleteIfUnchanged === false)("deleteIfUnchanged", () => {
      const deleteIf = (key: string, digest: string) => {
        expect(store.deleteIfUnchanged, "the store has deleteIfUnchanged").toBeTypeOf("function");
        return store.deleteIfUnchanged!(key, digest);
      };

      it("removes a value that is still the one read, then answers false", async () => {
        const value = { a: [1, "two"], b: { c: null } };
        await store.set(`${p}k`, value);
        await store.set(`${p}other`, value);
        const digest = valueDigest((await store.get(`${p}k`))!);
        expect(await deleteIf(`${p}k`, digest)).toBe(true);
        expect(await store.get(`${p}k`)).toBeUndefined();
        expect(await deleteIf(`${p}k`, digest)).toBe(false);
        expect(await store.get(`${p}other`)).toStrictEqual(value);
      });

      it("keeps a value replaced since it was read", async () => {
        await store.set(`${p}k`, { recordedAt: "2020-01-01T00:00:00.000Z", text: "old" });
        const [listed] = await listAll(`${p}k`);
        expect(listed?.[0]).toBe(`${p}k`);
        const read = listed![1];
        await store.set(`${p}k`, { recordedAt: "2026-01-01T00:00:00.000Z", text: "new" });
        expect(await deleteIf(`${p}k`, valueDigest(read))).toBe(false);
        expect(await store.get(`${p}k`)).toStrictEqual({
          recordedAt: "2026-01-01T00:00:00.000Z",
          text: "new",
        });
      });

      it("matches what list yielded, for values of every shape", async () => {
        const values: JsonValue[] = [
          null,
          0,
          "lone \uD800 and \u0000",
          [],
          { z: 1, a: { y: [true, { b: 2, a: 1 }] } },
        ];
        for (const [i, value] of values.entries()) await store.set(`${p}${i}`, value);
        for (const [key, value] of await listAll(p)) {
          expect(await deleteIf(key, valueDigest(value)), key).toBe(true);
        }
        expect(await listAll(p)).toStrictEqual([]);
      });

      it("answers false for an absent or expired key", async () => {
        expect(await deleteIf(`${p}absent`, valueDigest(1))).toBe(false);
        await store.set(`${p}t`, "short", { ttlMs: 200 });
        await eventually(async () => (await store.get(`${p}t`)) === undefined);
        expect(await deleteIf(`${p}t`, valueDigest("short"))).toBe(false);
      });

      it("refuses a digest that is not one, and a bad key, with TypeError", async () => {
        await store.set(`${p}k`, 1);
        // 42: a caller without types passing a number where the digest string goes.
        for (const digest of ["", "abc", valueDigest(1).toUpperCase(), 42 as unknown as string]) {
          await expect(deleteIf(`${p}k`, digest)).rejects.toThrow(TypeError);
        }
        await expect(deleteIf("a\uD800", valueDigest(1))).rejects.toThrow(TypeError);
        expect(await store.get(`${p}k`)).toBe(1);
      });

      it("rejects with StoreError once closed", async () => {
        await store.set(`${p}k`, 1);
        await store.close();
        await expect(deleteIf(`${p}k`, valueDigest(1))).rejects.toBeInstanceOf(StoreError);
      });
    });

    describe.skipIf(options.getHit === false)("getHit", () => {
      const getHit = (key: string) => {
        if (store.getHit === undefined) throw new Error("the store has no getHit");
        return store.getHit(key);
      };
      // Strings that look like JSON structure, quotes and backslashes: the
      // manifest is found by its structure, never by searching its text.
      const tricky = 'say "manifest": {"a":[1,2]} \\" } ] \\\\ , "response": 2';
      const manifest: JsonValue = {
        prompt: tricky,
        messages: [{ role: "user", content: tricky }, [], {}, [[{ manifest: "inner" }]]],
        n: -1.5e-7,
        flags: [true, false, null],
        "": "",
      };

      it("answers what get answers for values without a top-level manifest", async () => {
        const values: JsonValue[] = [
          null,
          0,
          "manifest",
          [{ manifest: 1 }],
          {},
          { response: { manifest: { nested: true } }, other: tricky },
        ];
        for (const [i, value] of values.entries()) await store.set(`${p}${i}`, value);
        for (const [i, value] of values.entries()) {
          expect(await getHit(`${p}${i}`)).toStrictEqual(value);
        }
        expect(await getHit(`${p}absent`)).toBeUndefined();
      });

      it("leaves out the manifest member, wherever it stands, and nothing else", async () => {
        const shapes: Array<Record<string, JsonValue>> = [
          { v: 1, id: "x", manifest, response: { manifest: "kept" }, meta: { a: tricky } },
          { manifest, response: [1, { manifest }] },
          { response: tricky, meta: {}, manifest },
          { manifest },
          { manifest: tricky, after: "\\" },
          { manifest: 12.5, response: null },
          {
            manifest: ["\ud800", tricky],
            response: ["\ud800x\udfff", "\u0000", "é😀", 1e308, 5e-324, 2 ** 53 - 1, -1.5],
          },
        ];
        for (const [i, value] of shapes.entries()) await store.set(`${p}${i}`, value);
        for (const [i, value] of shapes.entries()) {
          const { manifest: _left, ...rest } = value;
          expect(await getHit(`${p}${i}`)).toStrictEqual(rest);
          expect(await store.get(`${p}${i}`)).toStrictEqual(value);
        }
      });

      it("follows overwrites and deletes, and returns fresh copies", async () => {
        await store.set(`${p}k`, { manifest, response: { list: [1] } });
        await store.set(`${p}k`, { manifest: 2, response: { list: [2] } });
        const first = (await getHit(`${p}k`)) as { response: { list: number[] } };
        expect(first).toStrictEqual({ response: { list: [2] } });
        first.response.list.push(99);
        expect(await getHit(`${p}k`)).toStrictEqual({ response: { list: [2] } });
        expect(await store.get(`${p}k`)).toStrictEqual({ manifest: 2, response: { list: [2] } });
        expect(await store.delete(`${p}k`)).toBe(true);
        expect(await getHit(`${p}k`)).toBeUndefined();
      });

      it("answers undefined once a ttl passed", async () => {
        await store.set(`${p}t`, { manifest, response: "short" }, { ttlMs: 300 });
        expect(await getHit(`${p}t`)).toStrictEqual({ response: "short" });
        await eventually(async () => (await getHit(`${p}t`)) === undefined);
      });

      it("refuses a bad key with TypeError or RangeError, and rejects with StoreError once closed", async () => {
        await expect(getHit("")).rejects.toSatisfy(
          (e) => e instanceof TypeError || e instanceof RangeError,
        );
        await store.close();
        await expect(getHit(`${p}k`)).rejects.toBeInstanceOf(StoreError);
      });
    });

    describe("ttl", () => {
      it("keeps a value until its ttl passes, then answers undefined (get and list)", async () => {
        await store.set(`${p}t`, "short", { ttlMs: 300 });
        await store.set(`${p}forever`, "long");
        expect(await store.get(`${p}t`)).toBe("short");
        await eventually(async () => (await store.get(`${p}t`)) === undefined);
        const keys: string[] = [];
        for await (const [key] of store.list(p)) keys.push(key);
        expect(keys).toStrictEqual([`${p}forever`]);
      });

      it("drops the ttl when overwritten without one", async () => {
        await store.set(`${p}t`, 1, { ttlMs: 200 });
        await store.set(`${p}t`, 2);
        await sleep(300);
        expect(await store.get(`${p}t`)).toBe(2);
      });

      it("refuses a ttl that is not a positive integer", async () => {
        for (const ttlMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
          await expect(store.set(`${p}t`, 1, { ttlMs })).rejects.toThrow(RangeError);
        }
      });
    });

    describe("leases", () => {
      it("are exclusive between owners", async () => {
        expect(await store.acquireLease(`${p}L`, "alice", 10_000)).toBe(true);
        expect(await store.acquireLease(`${p}L`, "bob", 10_000)).toBe(false);
        expect(await store.acquireLease(`${p}L2`, "bob", 10_000)).toBe(true);
      });

      it("are independent of values under the same key", async () => {
        await store.set(`${p}same`, "value");
        expect(await store.acquireLease(`${p}same`, "alice", 10_000)).toBe(true);
        expect(await store.get(`${p}same`)).toBe("value");
        await store.releaseLease(`${p}same`, "alice");
        expect(await store.get(`${p}same`)).toBe("value");
        const keys: string[] = [];
        for await (const [key] of store.list(p)) keys.push(key);
        expect(keys).toStrictEqual([`${p}same`]);
      });

      it("are renewed (extended) when the holder acquires again", async () => {
        expect(await store.acquireLease(`${p}L`, "alice", 300)).toBe(true);
        await sleep(150);
        expect(await store.acquireLease(`${p}L`, "alice", 5_000)).toBe(true);
        await sleep(300); // past the first expiry
        expect(await store.acquireLease(`${p}L`, "bob", 5_000)).toBe(false);
      });

      it("can be taken by another owner once expired (a crashed holder never blocks forever)", async () => {
        const start = Date.now();
        expect(await store.acquireLease(`${p}L`, "crashed", 300)).toBe(true);
        const taken = await store.acquireLease(`${p}L`, "bob", 5_000);
        // Held while live: refused unless a busy machine let 300 ms pass in between.
        if (Date.now() - start < 300) expect(taken).toBe(false);
        await eventually(() => store.acquireLease(`${p}L`, "bob", 5_000));
        expect(Date.now() - start).toBeGreaterThanOrEqual(250);
        // The old holder lost it: its release is a no-op, its acquire fails.
        await store.releaseLease(`${p}L`, "crashed");
        expect(await store.acquireLease(`${p}L`, "crashed", 5_000)).toBe(false);
      });

      it("are released only by their owner", async () => {
        expect(await store.acquireLease(`${p}L`, "alice", 10_000)).toBe(true);
        await store.releaseLease(`${p}L`, "bob");
        expect(await store.acquireLease(`${p}L`, "bob", 10_000)).toBe(false);
        await store.releaseLease(`${p}L`, "alice");
        expect(await store.acquireLease(`${p}L`, "bob", 10_000)).toBe(true);
        await store.releaseLease(`${p}never-taken`, "alice");
      });

      it("let exactly one of many concurrent contenders win", async () => {
        const wins = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.acquireLease(`${p}race`, `owner-${i}`, 10_000),
          ),
        );
        expect(wins.filter(Boolean)).toHaveLength(1);
      });

      it("refuse a bad owner or ttl", async () => {
        await expect(store.acquireLease(`${p}L`, "", 1000)).rejects.toThrow(TypeError);
        await expect(store.acquireLease(`${p}L`, "o", 0)).rejects.toThrow(RangeError);
        await expect(store.releaseLease(`${p}L`, "")).rejects.toThrow(TypeError);
      });
    });

    describe("close", () => {
      it("is idempotent, and every later call rejects with StoreError", async () => {
        await store.set(`${p}k`, 1);
        await store.close();
        await store.close();
        const calls: Array<() => Promise<unknown>> = [
          () => store.get(`${p}k`),
          () => store.set(`${p}k`, 2),
          () => store.delete(`${p}k`),
          () => store.acquireLease(`${p}L`, "o", 1000),
          () => store.releaseLease(`${p}L`, "o"),
          async () => {
            for await (const _ of store.list(p)) {
              // never reached
            }
          },
        ];
        for (const call of calls) {
          const error = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(StoreError);
          expect((error as StoreError).message).toMatch(/closed/);
          expect((error as StoreError).store).toBe(store.url);
        }
      });

      it("lets writes already started finish", async () => {
        const write = store.set(`${p}k`, "written");
        await store.close();
        await expect(write).resolves.toBeUndefined();
      });

      it("works on a store that was never used", async () => {
        const fresh = await factory();
        await fresh.close();
        await expect(fresh.get(`${p}k`)).rejects.toBeInstanceOf(StoreError);
      });
    });

    it("has a url without a password", () => {
      expect(typeof store.url).toBe("string");
      expect(store.url).not.toMatch(/:[^/@]*@/);
    });

    storedMetaConformance(
      () => store,
      () => p,
    );
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Poll `probe` every 25 ms until it is true; fail after 5 s. */
async function eventually(probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error("condition not reached within 5 s");
    await sleep(25);
  }
}
