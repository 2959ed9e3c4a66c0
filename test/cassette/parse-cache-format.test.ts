/**
 * The parsed-form cache's file format (src/cassette/parse-cache.ts): what is
 * written is what is read back, value for value (the values are parsed on
 * first read, from one line each); a file whose lines do not match its rows
 * is no cache at all; a value that cannot be parsed (only a consistent edit
 * by the cache's owner can make one) fails its own read with the fix, not
 * the others.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FileStamp } from "../../src/cassette/files.js";
import type { CassetteItem } from "../../src/cassette/item.js";
import { oweCachedIdCheck } from "../../src/cassette/parse.js";
import {
  contentHash,
  parseCachePath,
  readParseCache,
  writeParseCache,
} from "../../src/cassette/parse-cache.js";
import type { JsonValue } from "../../src/store/types.js";
import { tempDir } from "./helpers.js";

const dir = tempDir("parse-cache-format");
const stamp: FileStamp = { size: 70_000n, mtimeNs: 1n, ctimeNs: 2n, ino: 3n, dev: 4n, mode: 0o644 };
const yaml = Buffer.from("entries: []\n");
let n = 0;

/** Write `items` as the cache of a fresh cassette path; read them back. */
async function roundTrip(items: CassetteItem[]) {
  const file = join(dir, `c${n++}.yaml`);
  await writeParseCache(dir, file, stamp, contentHash(yaml), items);
  const owed: [string, number][] = [];
  const read = await readParseCache(
    dir,
    file,
    stamp,
    async () => yaml,
    (item, index) => owed.push([item.key, index]),
  );
  return { file, read, owed };
}

/** Rewrite the cache of `file` with `edit` applied after its header, rehashed (as its owner could). */
function rewrite(file: string, edit: (body: string) => string): void {
  const path = parseCachePath(dir, file);
  const text = readFileSync(path, "utf8");
  const newline = text.indexOf("\n");
  const body = edit(text.slice(newline + 1));
  const header = JSON.parse(text.slice(0, newline)) as { rows: string };
  header.rows = createHash("sha256").update(body).digest("hex");
  writeFileSync(path, `${JSON.stringify(header)}\n${body}`, { mode: 0o600 });
}

const VALUES: JsonValue[] = [
  { response: { text: "é, 日本語, 🎉, a\nb\r\nc, \u2028 and \u2029" }, n: [1, 2.5e-7, null] },
  "a lone surrogate \ud800 and a pair \ud83c\udf89",
  [],
  {},
  0,
  null,
  true,
  "",
  `${"x".repeat(70_000)}"\\`,
];

describe("parsed-form cache format", () => {
  it("reads back every value, key and expiry as written", async () => {
    const items: CassetteItem[] = VALUES.map((value, i) =>
      i % 3 === 1
        ? { key: `k${i}`, value, expires: 1_900_000_000_000 + i }
        : { key: `k${i}`, value },
    );
    const { read } = await roundTrip(items);
    expect(read).toBeDefined();
    expect(read!.map((i) => i.key)).toEqual(items.map((i) => i.key));
    expect(read!.map((i) => i.expires)).toEqual(items.map((i) => i.expires));
    for (let i = 0; i < items.length; i++) {
      expect(read![i]!.value).toEqual(items[i]!.value);
      // Parsed once: the same object on every read, as a parsed item's is.
      expect(read![i]!.value).toBe(read![i]!.value);
      expect("expires" in read![i]!).toBe(items[i]!.expires !== undefined);
    }
  });

  it("an item that owed its id check owes it again, at the same entries: index", async () => {
    const owing: CassetteItem = { key: "owes", value: { a: 1 }, expires: 1_900_000_000_000 };
    const src = { file: join(dir, "src.yaml"), display: "src.yaml", url: "cassette://src.yaml" };
    oweCachedIdCheck(owing, 7, src);
    const { read, owed } = await roundTrip([{ key: "plain", value: 1 }, owing]);
    expect(owed).toEqual([["owes", 7]]);
    expect(read!.map((i) => [i.key, i.value, i.expires])).toEqual([
      ["plain", 1, undefined],
      ["owes", { a: 1 }, 1_900_000_000_000],
    ]);
  });

  it("reads back an empty and a one-item cache", async () => {
    expect((await roundTrip([])).read).toEqual([]);
    const one = (await roundTrip([{ key: "only", value: { a: 1 } }])).read!;
    expect(one.map((i) => [i.key, i.value])).toEqual([["only", { a: 1 }]]);
  });

  it("is no cache when its value lines do not match its rows", async () => {
    const items = [
      { key: "a", value: 1 },
      { key: "b", value: 2 },
    ];
    const cases: [string, (body: string) => string][] = [
      ["a value line missing", (b) => b.slice(0, b.lastIndexOf("\n"))],
      ["a value line too many", (b) => `${b}\n3`],
      ["no line after the rows", (b) => b.slice(0, b.indexOf("\n"))],
    ];
    for (const [what, edit] of cases) {
      const { file } = await roundTrip(items);
      rewrite(file, edit);
      const again = await readParseCache(
        dir,
        file,
        stamp,
        async () => yaml,
        () => {},
      );
      expect(again, what).toBeUndefined();
    }
  });

  it("a value that is not JSON fails its own read, naming the cache and the fix; the others are served", async () => {
    const { file } = await roundTrip([
      { key: "good", value: { text: "fine" } },
      { key: "bad", value: { text: "spoiled" } },
    ]);
    rewrite(file, (b) => b.replace('{"text":"spoiled"}', '{"text":'));
    const read = (await readParseCache(
      dir,
      file,
      stamp,
      async () => yaml,
      () => {},
    ))!;
    expect(read[0]!.value).toEqual({ text: "fine" });
    expect(() => read[1]!.value).toThrow(
      new RegExp(
        `parsed-form cache of ${file.replaceAll("/", "\\/")} holds a value that is not JSON for bad .*delete the cache folder`,
      ),
    );
  });

  it("an older format's cache is not read", async () => {
    const { file } = await roundTrip([{ key: "a", value: 1 }]);
    const path = parseCachePath(dir, file);
    const text = readFileSync(path, "utf8");
    const header = JSON.parse(text.slice(0, text.indexOf("\n"))) as { v: number };
    writeFileSync(path, JSON.stringify({ ...header, v: 3 }) + text.slice(text.indexOf("\n")), {
      mode: 0o600,
    });
    expect(
      await readParseCache(
        dir,
        file,
        stamp,
        async () => yaml,
        () => {},
      ),
    ).toBeUndefined();
  });
});
