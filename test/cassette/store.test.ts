import { createHash } from "node:crypto";
/**
 * The cassette store's own behaviour: lazy I/O, validation with file, line
 * and column, never overwriting what it cannot read, the parse cache,
 * staleness, usage and pruning, buffered writes, binary values.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type CassetteStore,
  cassetteStore,
  decodeBinary,
  emitCassette,
  encodeBinary,
  pruneCassette,
  readCassette,
} from "../../src/cassette/index.js";
import { parseCachePath } from "../../src/cassette/parse-cache.js";
import { CassetteError, StoreError } from "../../src/errors.js";
import { createRecorder, StaleEntryError } from "../../src/index.js";
import type { JsonValue } from "../../src/store/types.js";
import { MACHINE, makeEntry, tempDir } from "./helpers.js";

const dir = tempDir("cassette-store");
let n = 0;
const fresh = (name = "c") => join(dir, `${name}-${n++}.yaml`);
const open = (path: string, opts: Parameters<typeof cassetteStore>[1] = {}) =>
  cassetteStore(path, { parseCache: false, ...opts });

async function error(p: Promise<unknown>): Promise<CassetteError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(CassetteError);
  return e as CassetteError;
}

describe("cassetteStore", () => {
  it("touches nothing until used, creates folders on the first write", async () => {
    const path = join(dir, "lazy", "deep", "c.yaml");
    const store = open(path);
    expect(existsSync(join(dir, "lazy"))).toBe(false);
    expect(await store.get("k")).toBeUndefined();
    expect(existsSync(join(dir, "lazy"))).toBe(false);
    await store.set("k", { v: 1 });
    expect(readFileSync(path, "utf8")).toBe(
      "invocache: 1\nentries: []\nvalues:\n  - key: k\n    value:\n      v: 1\n",
    );
    await store.close();
  });

  it("writes entries to `entries:` and everything else to `values:`, in recording order", async () => {
    const path = fresh();
    const store = open(path);
    const a = makeEntry("first prompt", { text: "a" });
    const b = makeEntry("second prompt", { text: "b" }, { namespace: "team-x", occurrence: 2 });
    await store.set(b.key, b.entry as never);
    await store.set("default:run:r1", { v: 1, runId: "r1" });
    await store.set(a.key, a.entry as never);
    await store.close();
    const text = readFileSync(path, "utf8");
    expect(text.indexOf(`id: ${b.entry.id}`)).toBeLessThan(text.indexOf(`id: ${a.entry.id}`));
    expect(text).toMatch(/occurrence: 2\n {4}namespace: team-x\n/);
    expect(text).toMatch(/values:\n {2}- key: default:run:r1\n/);
    const items = await readCassette(path);
    expect(items.map((i) => i.key)).toStrictEqual([b.key, a.key, "default:run:r1"]);
    const again = open(path);
    expect(await again.get(b.key)).toStrictEqual(b.entry);
    await again.close();
  });

  it("keeps a value whose key looks like an entry but is not one in `values:`", async () => {
    const path = fresh();
    const { key, entry } = makeEntry("p", { x: 1 });
    const store = open(path);
    await store.set(key, { ...entry, id: "f".repeat(64) } as never); // id does not match the key
    await store.close();
    expect(readFileSync(path, "utf8")).toContain(`values:\n  - key: ${key}\n`);
    const again = open(path);
    expect(await again.get(key)).toStrictEqual({ ...entry, id: "f".repeat(64) });
    await again.close();
  });

  it("two handles on one file, writing at once, both land; each sees the other's after a miss", async () => {
    const path = fresh("handles");
    const a = open(path);
    const b = open(path);
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => a.set(`a:${i}`, i)),
      ...Array.from({ length: 20 }, (_, i) => b.set(`b:${i}`, i)),
    ]);
    expect(await a.get("b:19")).toBe(19);
    expect(await b.get("a:0")).toBe(0);
    await a.close();
    await b.close();
    expect(await readCassette(path)).toHaveLength(40);
  });

  it("buffers writes with write: on-close, and discard() drops them", async () => {
    const path = fresh();
    const store = open(path, { write: "on-close" });
    await store.set("k", 1);
    expect(existsSync(path)).toBe(false);
    expect(await store.get("k")).toBe(1);
    await store.flush();
    expect(existsSync(path)).toBe(true);
    await store.set("k2", 2);
    await store.discard();
    const again = open(path);
    expect(await again.get("k")).toBe(1);
    expect(await again.get("k2")).toBeUndefined();
    await again.close();
  });

  it("is a StoreError with code ERR_CASSETTE", async () => {
    const path = fresh();
    writeFileSync(path, "invocache: 1\nentries: {}\n");
    const e = await error(open(path).get("k"));
    expect(e).toBeInstanceOf(StoreError);
    expect(e.code).toBe("ERR_CASSETTE");
    expect(e.operation).toBe("load");
  });
});

describe("a malformed cassette", () => {
  const broken: Array<[string, string, RegExp, number, number]> = [
    ["YAML syntax", "invocache: 1\nentries:\n  - id: [unclosed\n", /not a valid cassette/, 4, 1],
    ["a tab indent", "invocache: 1\nentries:\n\t- id: x\n", /not a valid cassette/, 3, 1],
    ["a duplicate key", "invocache: 1\ninvocache: 1\nentries: []\n", /unique|duplicate/i, 2, 1],
    [
      "a custom tag",
      "invocache: 1\nentries: []\nvalues:\n  - key: k\n    value: !binary aGk=\n",
      /not a valid cassette/,
      5,
      12,
    ],
    ["no header", "entries: []\n", /header "invocache: 1"/, 1, 1],
    ["a newer format", "invocache: 2\nentries: []\n", /newer invocache/, 1, 12],
    [
      "an unknown section",
      "invocache: 1\nentries: []\nrecordings: []\n",
      /unknown top-level field "recordings"/,
      3,
      1,
    ],
    ["an empty file", "\n", /empty/, 1, 1],
    ["entries not a list", "invocache: 1\nentries: {}\n", /entries must be a list/, 2, 10],
    [
      "a value without key",
      "invocache: 1\nentries: []\nvalues:\n  - value: 1\n",
      /must have "key" and "value"/,
      4,
      5,
    ],
    [
      "a NaN",
      "invocache: 1\nentries: []\nvalues:\n  - key: k\n    value: .nan\n",
      /values\[0\]\.value/,
      5,
      12,
    ],
    // 1 and "1" would become one JavaScript key, the last silently winning.
    [
      "a number as a key",
      "invocache: 1\nentries: []\nvalues:\n  - key: k\n    value: { 1: a, '1': b }\n",
      /a mapping key is the number "1"/,
      5,
      14,
    ],
    [
      "a collection as a key",
      "invocache: 1\nentries: []\nvalues:\n  - key: k\n    value: { ? [a, b] : 1 }\n",
      /a collection or alias/,
      5,
      16,
    ],
  ];
  it.each(broken)(
    "%s is a CassetteError with file, line and column",
    async (_what, text, message, line, column) => {
      const path = fresh("broken");
      writeFileSync(path, text);
      const e = await error(open(path).get("k"));
      expect(e.message).toMatch(message);
      expect(e.file).toBe(path);
      expect([e.line, e.column]).toStrictEqual([line, column]);
      expect(e.message.startsWith(`${path}:${line}:${column}: `)).toBe(true);
      expect(e.message).toMatch(/never overwrites/);
    },
  );

  it("a hand-broken entry points at the field's line", async () => {
    const path = fresh("entry");
    const { key, entry } = makeEntry("a prompt", { text: "x" });
    const text = emitCassette([{ key, value: entry as never }]).replace(
      "durationMs: 812.5",
      "durationMs: -3",
    );
    writeFileSync(path, text);
    const line = text.split("\n").findIndex((l) => l.includes("durationMs: -3")) + 1;
    const e = await error(open(path).get(key));
    expect(e.line).toBe(line);
    expect(e.column).toBe(19);
    expect(e.message).toContain("entries[0].meta.durationMs must be a number >= 0");
  });

  it("a derived field in meta, or a repeated key, is refused with its place", async () => {
    const { key, entry } = makeEntry("a prompt", { text: "x" });
    const good = emitCassette([{ key, value: entry as never }]);
    const withOccurrence = good.replace("    meta:\n", "    meta:\n      occurrence: 0\n");
    const path = fresh("derived");
    writeFileSync(path, withOccurrence);
    expect((await error(open(path).get(key))).message).toMatch(
      /meta\.occurrence is not written in cassettes/,
    );
    const twice = good + good.slice(good.indexOf("  - id:")); // the same entry listed twice
    writeFileSync(path, twice);
    const repeated = await error(open(path).get(key));
    expect(repeated.message).toMatch(/entries\[1\] repeats the key .* of entries\[0\]/);
    expect(repeated.line).toBe(good.split("\n").length);
  });

  it("a leading byte order mark is fine", async () => {
    const path = fresh("bom");
    writeFileSync(path, "\ufeffinvocache: 1\nentries: []\nvalues:\n  - key: k\n    value: 1\n");
    const store = open(path);
    expect(await store.get("k")).toBe(1);
    await store.close();
  });

  it("invalid UTF-8 is refused, not turned into U+FFFD", async () => {
    const path = fresh("utf8");
    writeFileSync(
      path,
      Buffer.concat([
        Buffer.from('invocache: 1\nentries: []\nvalues:\n  - key: k\n    value: "'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"\n'),
      ]),
    );
    expect((await error(open(path).get("k"))).message).toMatch(/not valid UTF-8/);
  });

  it("is never overwritten: writes fail until the file is fixed, then merge", async () => {
    const path = fresh("never");
    const text = "invocache: 1\nentries:\n  - id: [\n";
    writeFileSync(path, text);
    const store = open(path);
    await error(store.set("k", 1));
    await error(store.get("k"));
    expect(readFileSync(path, "utf8")).toBe(text);
    writeFileSync(path, "invocache: 1\nentries: []\nvalues:\n  - key: fixed\n    value: true\n");
    await store.set("k", 1);
    expect(await store.get("fixed")).toBe(true);
    await store.close();
    expect((await readCassette(path)).map((i) => i.key)).toStrictEqual(["fixed", "k"]);
  });
});

describe("parse cache", () => {
  function bigCassette(path: string, entries: number): void {
    const items = Array.from({ length: entries }, (_, i) => {
      const { key, entry } = makeEntry(`prompt ${i} ${"lorem ipsum ".repeat(40)}`, {
        text: `answer ${i}`,
      });
      return { key, value: entry as unknown as JsonValue };
    });
    writeFileSync(path, emitCassette(items));
    const old = new Date(Date.now() - 60_000); // a committed cassette: not modified just now
    utimesSync(path, old, old);
  }

  it("writes the parsed form after the first answer, not before it: at close (or later, for a store left open)", async () => {
    const path = fresh("big-deferred");
    const cache = join(dir, "parse-cache-deferred");
    bigCassette(path, 200);
    const cold = cassetteStore(path, { parseCache: cache });
    const first = makeEntry(`prompt 0 ${"lorem ipsum ".repeat(40)}`, {});
    expect(await cold.get(first.key)).toMatchObject({ response: { text: "answer 0" } });
    // Serializing and hashing the whole file is not the first caller's wait,
    // nor the next calls': a second of the store answering passes and no
    // cache file is written (it used to be, one event-loop turn after the load).
    const cacheFile = parseCachePath(cache, path);
    for (let i = 0; i < 20 && !existsSync(cacheFile); i++) {
      await new Promise((r) => setTimeout(r, 50));
      expect(await cold.get(first.key)).toMatchObject({ response: { text: "answer 0" } });
    }
    expect(existsSync(cacheFile)).toBe(false);
    await cold.close();
    expect(existsSync(cacheFile)).toBe(true);
  });

  it("loads an unchanged big cassette from its parsed form, and re-parses once it changes", async () => {
    const path = fresh("big");
    const cache = join(dir, "parse-cache");
    bigCassette(path, 200);
    const cold = cassetteStore(path, { parseCache: cache });
    const first = makeEntry(`prompt 0 ${"lorem ipsum ".repeat(40)}`, {});
    expect(await cold.get(first.key)).toMatchObject({ response: { text: "answer 0" } });
    await cold.close(); // waits for the background cache write
    const cacheFile = parseCachePath(cache, path);
    expect(existsSync(cacheFile)).toBe(true);

    // Prove the warm load reads the cache: rewrite the cached answer
    // consistently (item hash recomputed, as only the cache's owner can; a
    // plain hand edit is ignored, test/cassette/trust.test.ts).
    const [head, line] = readFileSync(cacheFile, "utf8").split(/\n(.*)/s) as [string, string];
    const edited = line.replace('"answer 0"', '"from cache"');
    const header = JSON.parse(head) as { rows: string };
    header.rows = createHash("sha256").update(edited).digest("hex");
    writeFileSync(cacheFile, `${JSON.stringify(header)}\n${edited}`);
    const warm = cassetteStore(path, { parseCache: cache });
    expect(await warm.get(first.key)).toMatchObject({ response: { text: "from cache" } });
    await warm.close();

    // Any change to the cassette (here: touched, same bytes) invalidates it.
    const now = new Date();
    utimesSync(path, now, now);
    const changed = cassetteStore(path, { parseCache: cache });
    expect(await changed.get(first.key)).toMatchObject({ response: { text: "answer 0" } });
    await changed.close();
  });

  it("ignores a torn cache file", async () => {
    const path = fresh("torn");
    const cache = join(dir, "parse-cache-torn");
    bigCassette(path, 150);
    const key = makeEntry(`prompt 1 ${"lorem ipsum ".repeat(40)}`, {}).key;
    const s1 = cassetteStore(path, { parseCache: cache });
    await s1.get(key);
    await s1.close();
    const cacheFile = parseCachePath(cache, path);
    const text = readFileSync(cacheFile, "utf8");
    writeFileSync(cacheFile, text.slice(0, text.length / 2));
    const s2 = cassetteStore(path, { parseCache: cache });
    expect(await s2.get(key)).toMatchObject({ response: { text: "answer 1" } });
    await s2.close();
  });

  it("is not written for small cassettes", async () => {
    const path = fresh("small");
    const cache = join(dir, "parse-cache-small");
    const store = cassetteStore(path, { parseCache: cache });
    await store.set("k", 1);
    await store.close();
    const again = cassetteStore(path, { parseCache: cache });
    await again.get("k");
    await again.close();
    expect(existsSync(cache)).toBe(false);
  });
});

describe("staleness (maxAge): cassette options, the recorder's policy", () => {
  const old = makeEntry("old prompt", { text: "old" }, { recordedAt: "2020-01-01T00:00:00.000Z" });
  const recent = makeEntry(
    "recent prompt",
    { text: "recent" },
    { recordedAt: new Date().toISOString() },
  );
  const oldRequest = { role: "builder", model: "gpt-5", prompt: "old prompt", task: "T-1" };
  function seed(): string {
    const path = fresh("stale");
    writeFileSync(
      path,
      emitCassette([old, recent].map(({ key, entry }) => ({ key, value: entry as never }))),
    );
    return path;
  }

  it("the cassette itself serves a stale entry as it is: the options are the recorder's defaults", async () => {
    const store = open(seed(), { maxAge: "1d", onStale: "error" });
    expect(store.policy).toStrictEqual({ maxAge: "1d", onStale: "error" });
    expect(await store.get(old.key)).toMatchObject({ response: { text: "old" } });
    expect((await store.usage()).stale).toStrictEqual([old.key]);
    await store.close();
  });

  it("warn: the recorder replays it and warns once per entry", async () => {
    const warnings: string[] = [];
    const store = open(seed(), { maxAge: "30d", onWarning: (m) => warnings.push(m) });
    const recorder = createRecorder({ store, mode: "replay", identity: MACHINE });
    const events: string[] = [];
    recorder.on("warning", (w) => events.push(w.message));
    expect(await recorder.call(oldRequest, async () => ({ text: "live" }))).toStrictEqual({
      text: "old",
    });
    await recorder.run(async () => {
      await recorder.call(oldRequest, async () => ({ text: "live" }));
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /recorded at 2020-01-01T00:00:00.000Z, more than maxAge \(30d\) ago/,
    );
    expect(events).toHaveLength(2);
    expect((await store.usage()).stale).toStrictEqual([old.key]);
    await store.close();
  });

  it("error: reading it through the recorder is a StaleEntryError naming the fix, in auto mode too", async () => {
    const store = open(seed(), { maxAge: 86_400_000, onStale: "error" });
    const recorder = createRecorder({ store, mode: "auto", identity: MACHINE });
    let calls = 0;
    const e = await recorder
      .call(oldRequest, async () => {
        calls++;
        return { text: "live" };
      })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StaleEntryError);
    expect((e as StaleEntryError).message).toMatch(/INVOCACHE_MODE=record/);
    expect((e as StaleEntryError).key).toBe(old.key);
    expect(calls).toBe(0);
    await store.close();
  });

  it("rerecord: it is a miss, so auto mode records it anew (and its age starts over)", async () => {
    const path = seed();
    const store = open(path, { maxAge: "1d", onStale: "rerecord" });
    const recorder = createRecorder({ store, mode: "auto", identity: MACHINE });
    let calls = 0;
    const out = await recorder.call(oldRequest, async () => {
      calls++;
      return { text: "fresh" };
    });
    expect([out, calls]).toStrictEqual([{ text: "fresh" }, 1]);
    await store.close();
    const items = await readCassette(path);
    const refreshed = items.find((i) => i.key === old.key)!.value as {
      meta: { recordedAt: string };
    };
    expect(Date.parse(refreshed.meta.recordedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(items.map((i) => i.key)).toStrictEqual([old.key, recent.key]); // kept its place
  });

  it("rerecord: an equal answer still refreshes the entry (stable re-records do not keep a stale one)", async () => {
    const path = seed();
    const store = open(path, { maxAge: "1d", onStale: "rerecord" });
    const recorder = createRecorder({ store, mode: "auto", identity: MACHINE });
    await recorder.call(oldRequest, async () => ({ text: "old" }));
    await store.close();
    const items = await readCassette(path);
    const again = items.find((i) => i.key === old.key)!.value as { meta: { recordedAt: string } };
    expect(Date.parse(again.meta.recordedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("record mode refreshes a stale entry re-recorded equal, with no warning or error", async () => {
    const path = seed();
    const store = open(path, { maxAge: "1d", onStale: "error" });
    const recorder = createRecorder({ store, mode: "record", identity: MACHINE });
    await recorder.call(oldRequest, async () => ({ text: "old" }));
    await store.close();
    const items = await readCassette(path);
    const again = items.find((i) => i.key === old.key)!.value as { meta: { recordedAt: string } };
    expect(Date.parse(again.meta.recordedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("refuses a maxAge that is not a duration", () => {
    expect(() => cassetteStore("x.yaml", { maxAge: "soon" })).toThrow(RangeError);
    expect(() => cassetteStore("x.yaml", { maxAge: -1 })).toThrow(RangeError);
    expect(() => cassetteStore("x.yaml", { onStale: "later" as never })).toThrow(TypeError);
  });
});

describe("usage and pruning", () => {
  it("reports which recorded entries were used, and prunes the rest", async () => {
    const path = fresh("usage");
    const a = makeEntry("prompt a", { text: "a" });
    const b = makeEntry("prompt b", { text: "b" });
    const c = makeEntry("prompt c", { text: "c" });
    writeFileSync(
      path,
      emitCassette([
        ...[a, b, c].map(({ key, entry }) => ({ key, value: entry as never })),
        { key: "default:run:test", value: { v: 1 } },
      ]),
    );
    const store: CassetteStore = open(path);
    await store.get(a.key);
    const d = makeEntry("prompt d", { text: "d" });
    await store.set(d.key, d.entry as never);
    await store.set(c.key, c.entry as never); // rewritten: not unused
    const usage = await store.usage();
    expect(usage).toStrictEqual({
      used: [a.key],
      unused: [b.key],
      recorded: [d.key, c.key],
      stale: [],
    });
    await store.close();
    const report = await pruneCassette(path, (key) => !usage.unused.includes(key));
    expect(report.removed).toStrictEqual([b.key]);
    expect((await readCassette(path)).map((i) => i.key)).toStrictEqual([
      a.key,
      c.key,
      d.key,
      "default:run:test",
    ]);
    expect((await pruneCassette(path, [a.key, c.key, d.key])).removed).toStrictEqual([]);
  });
});

describe("binary values", () => {
  it("round-trip as base64 with their media type", async () => {
    const bytes = new Uint8Array(Array.from({ length: 300 }, (_, i) => (i * 37) % 256));
    const path = fresh("binary");
    const store = open(path);
    await store.set("img", { image: encodeBinary(bytes, "image/png") } as unknown as JsonValue);
    await store.close();
    expect(readFileSync(path, "utf8")).toMatch(
      /\$binary:\n {10}mediaType: image\/png\n {10}base64: AC..+\n/,
    );
    const again = open(path);
    const got = (await again.get("img")) as { image: unknown };
    expect(decodeBinary(got.image)).toStrictEqual({ bytes, mediaType: "image/png" });
    await again.close();
    expect(() => decodeBinary({ $binary: { mediaType: "x/y", base64: "!!" } })).toThrow(TypeError);
  });
});

describe("temp files", () => {
  it("a dead writer's temp file is removed by the next write; a live one's is kept", async () => {
    const path = fresh("orphans");
    mkdirSync(dir, { recursive: true });
    const base = path.split("/").pop();
    const dead = join(dir, `.${base}.999999999-deadbeef.tmp`);
    const alive = join(dir, `.${base}.${process.ppid}-cafecafe.tmp`);
    writeFileSync(dead, "torn");
    writeFileSync(alive, "in progress");
    const store = open(path);
    await store.set("k", 1);
    await store.close();
    const names = readdirSync(dir);
    expect(names).not.toContain(dead.split("/").pop());
    expect(names).toContain(alive.split("/").pop());
    expect(statSync(path).isFile()).toBe(true);
  });
});
