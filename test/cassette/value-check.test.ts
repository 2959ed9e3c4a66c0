/**
 * A cassette's stored values are checked the first time the store serves
 * them, not on load (src/cassette/owed-checks.ts): an entry whose envelope
 * is malformed, or a `values:` item that is not JSON, does not stop the
 * other entries from being served; its own `get`, any `list` that includes
 * it and every write fail with the CassetteError the whole-file check gives
 * (same message, line and column); the whole-file readers (`readCassette`,
 * the CLI) still refuse the file; the parsed-form cache never turns a bad
 * value into a good one.
 */
import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  cassetteStore,
  emitCassette,
  parseCassette,
  readCassette,
} from "../../src/cassette/index.js";
import { parseCassetteOwingChecks } from "../../src/cassette/parse.js";
import { parseCachePath } from "../../src/cassette/parse-cache.js";
import { CassetteError } from "../../src/errors.js";
import { createRecorder } from "../../src/index.js";
import { entryPrefix } from "../../src/store/envelope.js";
import type { JsonValue } from "../../src/store/types.js";
import { BUILD_TIMEOUT, buildCli, cli } from "../cli/helpers.js";
import { upstream } from "../helpers/upstream.js";
import { MACHINE, makeEntry, tempDir } from "./helpers.js";

const dir = tempDir("cassette-value-check");
let n = 0;
const fresh = (label: string) => join(dir, `${label}-${n++}.yaml`);

async function failure(p: Promise<unknown>): Promise<CassetteError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CassetteError);
  return error as CassetteError;
}

/** The error of a deferred check is the one the whole-file check gives, in every detail a caller sees. */
function expectSame(error: CassetteError, eager: CassetteError): void {
  expect(error).toBeInstanceOf(CassetteError);
  expect(error.message).toBe(eager.message);
  expect([error.line, error.column]).toStrictEqual([eager.line, eager.column]);
  expect(error.file).toBe(eager.file);
  expect(error.operation).toBe(eager.operation);
  expect(error.code).toBe(eager.code);
  expect((error.cause as object | undefined)?.constructor).toBe(
    (eager.cause as object | undefined)?.constructor,
  );
}

async function listAll(store: ReturnType<typeof cassetteStore>, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const [key] of store.list(prefix)) keys.push(key);
  return keys;
}

const entryA = makeEntry("what is two plus two", { text: "four", n: 4 });
const entryB = makeEntry("name a prime", { text: "seven", n: 7 });
const entryC = makeEntry("what colour is the sky", { text: "blue", n: 0 });
const item = (e: ReturnType<typeof makeEntry>) => ({
  key: e.key,
  value: e.entry as unknown as JsonValue,
});

/** Apply `from` → `to` once, inside the chunk of the entry with `id` (entries are emitted one chunk each). */
function tamper(text: string, id: string, from: string, to: string): string {
  const start = text.indexOf(`  - id: ${id}\n`);
  const at = text.indexOf(from, start);
  expect(start).toBeGreaterThan(0);
  expect(at).toBeGreaterThan(start);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/** Malformed entries the envelope check refuses (each a field the loader's structure check lets through). */
const ENTRY_KINDS: Array<[string, string, string, RegExp]> = [
  [
    "a negative durationMs",
    "durationMs: 812.5",
    "durationMs: -3",
    /entries\[1\]\.meta\.durationMs must be a number >= 0/,
  ],
  [
    "an impossible recordedAt",
    "recordedAt: 2026-01-31T12:00:00.000Z",
    "recordedAt: 2026-02-31T25:00:00.000Z",
    /entries\[1\]\.meta\.recordedAt must be an ISO-8601 date-time/,
  ],
  ["a NaN in the response", "n: 7", "n: .nan", /entries\[1\]\.response is not JSON/],
  ["a manifest without its role", "      role: builder\n", "", /entries\[1\]\.manifest/],
  [
    "an unknown meta field",
    "    meta:\n",
    "    meta:\n      mood: sunny\n",
    /entries\[1\]\.meta\.mood is not a field of entry format v1/,
  ],
];

describe("a malformed entry is refused when served, not on load", () => {
  it.each(ENTRY_KINDS)(
    "%s: the other entries are served; its get, list and every write fail with the whole-file error",
    async (_what, from, to, message) => {
      const path = fresh("entry");
      const text = tamper(
        emitCassette([item(entryA), item(entryB), item(entryC)]),
        entryB.entry.id,
        from,
        to,
      );
      writeFileSync(path, text);
      const eager = await failure(readCassette(path));
      expect(eager.message).toMatch(message);
      expect(eager.line).toBeGreaterThan(3);

      const store = cassetteStore(path, { parseCache: false });
      expect(await store.get(entryA.key)).toStrictEqual(entryA.entry);
      expect(await store.get(entryC.key)).toStrictEqual(entryC.entry);
      // A list that does not include it serves; one that does fails.
      expect(await listAll(store, entryPrefix("default", entryC.entry.id))).toStrictEqual([
        entryC.key,
      ]);
      expectSame(await failure(listAll(store, "")), eager);
      for (let round = 0; round < 2; round++) {
        // The same error every time: a refused entry stays refused.
        expectSame(await failure(store.get(entryB.key)), eager);
      }
      // Writes rewrite the whole file: refused, whichever key they touch.
      expectSame(await failure(store.set("k", 1)), eager);
      expectSame(await failure(store.delete(entryA.key)), eager);
      // Re-recording the bad key itself would overwrite it: refused too.
      expectSame(await failure(store.set(entryB.key, entryB.entry as unknown as JsonValue)), eager);
      const usage = await store.usage();
      expect(usage.used.sort()).toStrictEqual([entryA.key, entryC.key].sort());
      await store.discard();
      expect(readFileSync(path, "utf8")).toBe(text);
    },
  );

  it("on-close: the buffered write fails at flush with the entry's error; the file is unchanged", async () => {
    const path = fresh("on-close");
    const text = tamper(
      emitCassette([item(entryA), item(entryB)]),
      entryB.entry.id,
      "durationMs: 812.5",
      "durationMs: -3",
    );
    writeFileSync(path, text);
    const eager = await failure(readCassette(path));
    const store = cassetteStore(path, { parseCache: false, write: "on-close" });
    expect(await store.get(entryA.key)).toStrictEqual(entryA.entry);
    await store.set("k", 1);
    expectSame(await failure(store.flush()), eager);
    await store.discard();
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("fixed by hand, the same store handle carries on", async () => {
    const path = fresh("fixed");
    const good = emitCassette([item(entryA), item(entryB)]);
    writeFileSync(path, tamper(good, entryB.entry.id, "durationMs: 812.5", "durationMs: -3"));
    const store = cassetteStore(path, { parseCache: false });
    await failure(store.set("k", 1));
    writeFileSync(path, good);
    await store.set("k", 1);
    expect(await store.get(entryB.key)).toStrictEqual(entryB.entry);
    await store.close();
    expect((await readCassette(path)).map((i) => i.key)).toStrictEqual([
      entryA.key,
      entryB.key,
      "k",
    ]);
  });
});

describe("after the file changed on disk, a refused entry names its place in the file as it is now", () => {
  /** The cassette of `items` with entryB's durationMs made negative. */
  const withBadB = (...items: ReturnType<typeof makeEntry>[]) =>
    tamper(emitCassette(items.map(item)), entryB.entry.id, "durationMs: 812.5", "durationMs: -3");

  it("an entry read before and moved by another writer (its chunk reused by the re-read)", async () => {
    const path = fresh("moved");
    writeFileSync(path, withBadB(entryA, entryB));
    const store = cassetteStore(path, { parseCache: false });
    expect(await store.get(entryA.key)).toStrictEqual(entryA.entry);
    // Another process wrote entryC before it: entryB is now entries[2], further down.
    writeFileSync(path, withBadB(entryA, entryC, entryB));
    // Not in the version read: the get re-reads the file (A's and B's chunks are known).
    expect(await store.get(entryC.key)).toStrictEqual(entryC.entry);
    const eager = await failure(readCassette(path));
    expect(eager.message).toMatch(/entries\[2\]\.meta\.durationMs/);
    expectSame(await failure(store.get(entryB.key)), eager);
    await store.discard();
  });

  it("an entry refused before it moved is refused again with its new place", async () => {
    const path = fresh("refused-then-moved");
    writeFileSync(path, withBadB(entryA, entryB));
    const store = cassetteStore(path, { parseCache: false });
    const before = await failure(store.get(entryB.key));
    expect(before.message).toMatch(/entries\[1\]/);
    writeFileSync(path, withBadB(entryA, entryC, entryB));
    expect(await store.get(entryC.key)).toStrictEqual(entryC.entry);
    const eager = await failure(readCassette(path));
    expect(eager.line).not.toBe(before.line);
    expectSame(await failure(store.get(entryB.key)), eager);
    await store.discard();
  });

  it("an entry first seen by the re-read (parsed from the new chunks alone)", async () => {
    const path = fresh("new-chunk");
    writeFileSync(path, emitCassette([item(entryA)]));
    const store = cassetteStore(path, { parseCache: false });
    expect(await store.get(entryA.key)).toStrictEqual(entryA.entry);
    writeFileSync(path, withBadB(entryA, entryC, entryB));
    expect(await store.get(entryC.key)).toStrictEqual(entryC.entry);
    const eager = await failure(readCassette(path));
    expectSame(await failure(store.get(entryB.key)), eager);
    await store.discard();
  });
});

describe("a malformed item of values: is refused when served, not on load", () => {
  it("a non-JSON value: the entries and other values are served; its get and any write fail with the whole-file error", async () => {
    const path = fresh("value");
    const text = emitCassette([
      item(entryA),
      { key: "default:run:r1", value: { calls: 3 } },
      { key: "default:run:r2", value: { calls: 4 } },
    ]).replace("calls: 4", "calls: .inf");
    writeFileSync(path, text);
    const eager = await failure(readCassette(path));
    expect(eager.message).toMatch(/values\[1\]\.value/);
    expect(eager.line).toBeGreaterThan(text.split("\n").indexOf("  - key: default:run:r2"));
    const store = cassetteStore(path, { parseCache: false });
    expect(await store.get(entryA.key)).toStrictEqual(entryA.entry);
    expect(await store.get("default:run:r1")).toStrictEqual({ calls: 3 });
    expectSame(await failure(store.get("default:run:r2")), eager);
    expectSame(await failure(store.get("default:run:r2")), eager);
    expectSame(await failure(listAll(store, "default:run:")), eager);
    expectSame(await failure(store.set("k", 1)), eager);
    await store.discard();
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});

describe("the parsed-form cache never turns a bad value into a good one", () => {
  it("a cassette with a NaN value and a malformed entry: read back through the cache, both are still refused with their place", async () => {
    // JSON has no NaN: cached as it parsed, the value would come back as null and pass.
    const base = emitCassette([
      item(entryA),
      item(entryB),
      { key: "default:run:r1", value: { calls: 3, pad: "x".repeat(70_000) } },
      { key: "default:run:r2", value: { calls: 4 } },
    ]);
    const text = tamper(base, entryB.entry.id, "durationMs: 812.5", "durationMs: -3").replace(
      "calls: 4",
      "calls: .nan",
    );
    const path = fresh("cached");
    writeFileSync(path, text);
    const committed = new Date(Date.now() - 60_000);
    utimesSync(path, committed, committed);
    const cache = join(dir, `cache-${n++}`);
    const first = cassetteStore(path, { parseCache: cache });
    expect(await first.get(entryA.key)).toStrictEqual(entryA.entry);
    const entryError = await failure(first.get(entryB.key));
    const valueError = await failure(first.get("default:run:r2"));
    expect(entryError.message).toMatch(/entries\[1\]\.meta\.durationMs/);
    expect(valueError.message).toMatch(/values\[1\]\.value/);
    await first.close(); // waits for any cache write
    const second = cassetteStore(path, { parseCache: cache });
    expect(await second.get(entryA.key)).toStrictEqual(entryA.entry);
    expect((await second.get("default:run:r1")) as { calls: number }).toMatchObject({ calls: 3 });
    expectSame(await failure(second.get(entryB.key)), entryError);
    expectSame(await failure(second.get("default:run:r2")), valueError);
    await second.discard();
  });

  it("a good big cassette is still cached, and loads from the cache", async () => {
    const path = fresh("cached-good");
    writeFileSync(
      path,
      emitCassette([item(entryA), { key: "default:run:r1", value: { pad: "x".repeat(70_000) } }]),
    );
    const committed = new Date(Date.now() - 60_000);
    utimesSync(path, committed, committed);
    const cache = join(dir, `cache-${n++}`);
    const first = cassetteStore(path, { parseCache: cache });
    expect(await first.get(entryA.key)).toStrictEqual(entryA.entry);
    await first.close();
    expect(existsSync(parseCachePath(cache, path))).toBe(true);
    const second = cassetteStore(path, { parseCache: cache });
    expect(await second.get(entryA.key)).toStrictEqual(entryA.entry);
    await second.close();
  });
});

describe("an entry that failed its id check (its value passed)", () => {
  it("does not keep the cassette out of the parsed-form cache, and is refused again from it", async () => {
    const path = fresh("cached-id");
    // entryA's manifest under entryB's id: a valid envelope whose id is not its manifest's.
    const text = emitCassette([
      item(entryA),
      { key: "default:run:r1", value: { pad: "x".repeat(70_000) } },
    ]).replace(`id: ${entryA.entry.id}`, `id: ${entryB.entry.id}`);
    writeFileSync(path, text);
    const committed = new Date(Date.now() - 60_000);
    utimesSync(path, committed, committed);
    const cache = join(dir, `cache-${n++}`);
    const tamperedKey = entryB.key; // the key follows the id line
    const first = cassetteStore(path, { parseCache: cache });
    const refused = await failure(first.get(tamperedKey));
    expect(refused.message).toMatch(/is not the identity of this entry's manifest/);
    await first.close();
    expect(existsSync(parseCachePath(cache, path))).toBe(true);
    const second = cassetteStore(path, { parseCache: cache });
    expectSame(await failure(second.get(tamperedKey)), refused);
    await second.discard();
  });
});

describe("opening a cassette checks no stored value", () => {
  /** 60 entries, all malformed in one of the ways above except the last. */
  function mostlyBroken(): { text: string; good: ReturnType<typeof makeEntry>; prompt: string } {
    const entries = Array.from({ length: 60 }, (_, i) =>
      makeEntry(`question ${i}`, { text: `answer ${i}`, n: i }),
    );
    let text = emitCassette(entries.map(item));
    for (const [i, e] of entries.slice(0, -1).entries()) {
      const [, from, to] = ENTRY_KINDS[i % ENTRY_KINDS.length]!;
      text = tamper(text, e.entry.id, from.replace("n: 7", `n: ${i}`), to);
    }
    return { text, good: entries[59]!, prompt: "question 59" };
  }

  it("parsing for the store leaves every value check to first use; the whole-file parse refuses the file", () => {
    const { text } = mostlyBroken();
    const src = { file: "/x/c.yaml", display: "c.yaml", url: "cassette:///x/c.yaml" };
    expect(() => parseCassette(text, src)).toThrow(/entries\[0\]\.meta\.durationMs/);
    expect(parseCassetteOwingChecks(text, src)).toHaveLength(60);
  });

  it("the root recorder replays the one good entry of a cassette whose other entries are all malformed", async () => {
    const { text, good, prompt } = mostlyBroken();
    const path = fresh("mostly-broken");
    writeFileSync(path, text);
    const store = cassetteStore(path, { parseCache: false });
    const recorder = createRecorder({ store, mode: "replay", identity: MACHINE });
    const live = upstream();
    const answer = await recorder.call(
      { role: "builder", model: "gpt-5", prompt, task: "T-1" },
      live.fn,
    );
    expect(live.calls).toBe(0);
    expect(answer).toStrictEqual(good.entry.response);
    await recorder.close();
    // Nothing was written, and a write would still be refused at the first bad entry.
    expect((await failure(store.set("k", 1))).message).toMatch(/entries\[0\]\.meta\.durationMs/);
    await store.discard();
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});

describe("the whole-file commands still refuse the file", () => {
  beforeAll(async () => {
    await buildCli();
  }, BUILD_TIMEOUT);

  it("ls and stats --cassette exit 1 naming the entry's field, line and column", () => {
    const text = tamper(
      emitCassette([item(entryA), item(entryB)]),
      entryB.entry.id,
      "durationMs: 812.5",
      "durationMs: -3",
    );
    const line = text.split("\n").indexOf("      durationMs: -3") + 1;
    writeFileSync(join(dir, "cli-bad.yaml"), text);
    for (const command of ["ls", "stats"]) {
      const r = cli([command, "--cassette", "cli-bad.yaml"], { cwd: dir });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(
        `cli-bad.yaml:${line}:19: entries[1].meta.durationMs must be a number >= 0`,
      );
    }
  });
});
