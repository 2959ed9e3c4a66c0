/**
 * Append-only recording into a cassette (src/cassette/append.ts): while a
 * handle opened for recording is open, each acknowledged write is appended
 * to the file as one checked record instead of rewriting the file; close
 * rewrites it once into the normal form. Readers take the appended records;
 * a torn tail is cut off with a warning, never silently.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassetteStore, readCassette } from "../../src/cassette/index.js";
import { recordingCassetteStore } from "../../src/cassette/internal.js";
import type { JsonValue } from "../../src/json/index.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-append-"));
const MARK = "--- # invocache-append ";

/** An entry-shaped and a plain value, like a recorder writes. */
function value(i: number): JsonValue {
  return { step: i, text: `answer ${i}\nsecond line`, list: [{ t: 0, data: "x" }] };
}

async function all(store: ReturnType<typeof cassetteStore>): Promise<Map<string, JsonValue>> {
  const out = new Map<string, JsonValue>();
  for await (const [key, v] of store.list("")) out.set(key, v);
  return out;
}

describe("append-only recording", () => {
  it("appends each acknowledged write, and a reopened handle (or readCassette) sees every entry", async () => {
    const path = join(dir, "a.yaml");
    const rec = recordingCassetteStore(path, { parseCache: false });
    await rec.set("k0", value(0));
    const first = readFileSync(path, "utf8");
    expect(first).not.toContain(MARK); // a new file is written whole
    for (let i = 1; i <= 5; i++) await rec.set(`k${i}`, value(i));
    await rec.set("k2", value(22)); // a changed value: the later record wins
    const text = readFileSync(path, "utf8");
    expect(text.startsWith(first)).toBe(true); // nothing before the tail rewritten
    expect(text.split(MARK)).toHaveLength(7);

    const other = cassetteStore(path, { parseCache: false, onWarning: (m) => expect.fail(m) });
    const seen = await all(other);
    await other.close();
    expect([...seen.keys()]).toStrictEqual(["k0", "k1", "k2", "k3", "k4", "k5"]);
    expect(seen.get("k2")).toStrictEqual(value(22));
    expect(seen.get("k5")).toStrictEqual(value(5));
    const items = await readCassette(path);
    expect(items.map((i) => i.key)).toStrictEqual(["k0", "k1", "k2", "k3", "k4", "k5"]);
    await rec.close();
  });

  it("after close the file is byte-identical to what the rewriting writer makes", async () => {
    const appended = join(dir, "b-append.yaml");
    const rewritten = join(dir, "b-rewrite.yaml");
    const rec = recordingCassetteStore(appended, { parseCache: false });
    const plain = cassetteStore(rewritten, { parseCache: false });
    const keys = ["ns:e:1", "v1", "ns:e:2", "v2", "v1"];
    for (const [i, key] of keys.entries()) {
      await rec.set(key, value(i));
      await plain.set(key, value(i));
    }
    expect(readFileSync(appended, "utf8")).toContain(MARK);
    await rec.close();
    await plain.close();
    expect(readFileSync(appended, "utf8")).not.toContain(MARK);
    expect(readFileSync(appended)).toStrictEqual(readFileSync(rewritten));
  });

  it("a torn tail (cut mid-record) is cut off with a warning; nothing before it is lost", async () => {
    const path = join(dir, "c.yaml");
    const rec = recordingCassetteStore(path, { parseCache: false });
    for (let i = 0; i < 4; i++) await rec.set(`k${i}`, value(i));
    // A crash mid-append: the last record is half there. (The handle is
    // abandoned, as a killed process's would be.)
    const size = statSync(path).size;
    truncateSync(path, size - 20);

    const warnings: string[] = [];
    const reader = cassetteStore(path, { parseCache: false, onWarning: (m) => warnings.push(m) });
    expect([...(await all(reader)).keys()]).toStrictEqual(["k0", "k1", "k2"]);
    await reader.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/torn|cut off/);
    expect(warnings[0]).toContain("c.yaml");

    // The next recording cuts the torn bytes off the file before appending.
    const again = recordingCassetteStore(path, {
      parseCache: false,
      onWarning: (m) => warnings.push(m),
    });
    await again.set("k9", value(9));
    const after = cassetteStore(path, { parseCache: false, onWarning: (m) => expect.fail(m) });
    expect([...(await all(after)).keys()]).toStrictEqual(["k0", "k1", "k2", "k9"]);
    await after.close();
    await again.close();
    expect(readFileSync(path, "utf8")).not.toContain(MARK);
    expect((await readCassette(path)).map((i) => i.key)).toStrictEqual(["k0", "k1", "k2", "k9"]);
  });

  it("a record torn inside its integrity line, or with a changed byte, is cut off with a warning", async () => {
    for (const damage of ["mark", "byte"] as const) {
      const path = join(dir, `d-${damage}.yaml`);
      const rec = recordingCassetteStore(path, { parseCache: false });
      for (let i = 0; i < 3; i++) await rec.set(`k${i}`, value(i));
      const text = readFileSync(path, "utf8");
      const last = text.lastIndexOf(MARK);
      const damaged =
        damage === "mark"
          ? text.slice(0, last + 9)
          : `${text.slice(0, -3)}${text.at(-3) === "a" ? "b" : "a"}${text.slice(-2)}`;
      writeFileSync(path, damaged);
      const warnings: string[] = [];
      const reader = cassetteStore(path, { parseCache: false, onWarning: (m) => warnings.push(m) });
      expect([...(await all(reader)).keys()], damage).toStrictEqual(["k0", "k1"]);
      await reader.close();
      expect(warnings, damage).toHaveLength(1);
    }
  });

  it("a cassette deleted while a handle records: the next write makes a whole, readable file again", async () => {
    const path = join(dir, "deleted.yaml");
    const rec = recordingCassetteStore(path, { parseCache: false });
    for (let i = 0; i < 3; i++) await rec.set(`k${i}`, value(i));
    rmSync(path);
    // An append to the deleted file would leave a record with no first
    // document (or fail on the missing path): the write must start a new file.
    await rec.set("k9", value(9));
    const warnings: string[] = [];
    const other = cassetteStore(path, { parseCache: false, onWarning: (m) => warnings.push(m) });
    expect([...(await all(other)).keys()]).toStrictEqual(["k9"]);
    await other.close();
    expect(warnings).toStrictEqual([]);
    await rec.set("k10", value(10));
    expect(readFileSync(path, "utf8")).toContain(MARK); // appending again once the file exists
    await rec.close();
    expect((await readCassette(path)).map((i) => i.key)).toStrictEqual(["k9", "k10"]);
  });

  it("two recording handles on one file, writes interleaved: every acknowledged write is kept", async () => {
    const path = join(dir, "f.yaml");
    const a = recordingCassetteStore(path, { parseCache: false });
    const b = recordingCassetteStore(path, { parseCache: false });
    for (let i = 0; i < 6; i++) {
      await (i % 2 === 0 ? a : b).set(`k${i}`, value(i));
      await Promise.all([a.set(`a${i}`, i), b.set(`b${i}`, i)]);
    }
    const reader = cassetteStore(path, { parseCache: false });
    const seen = await all(reader);
    await reader.close();
    expect(seen.size).toBe(18);
    await a.close();
    expect(readFileSync(path, "utf8")).not.toContain(MARK);
    await b.set("late", 1); // after another handle's rewrite: appended to the new file
    await b.close();
    expect((await readCassette(path)).map((i) => i.key)).toHaveLength(19);
  });

  it("a hand-edited first document without a final newline gets one before the first record", async () => {
    const path = join(dir, "g.yaml");
    writeFileSync(path, "# by hand\ninvocache: 1\nentries: []\nvalues:\n  - key: a\n    value: 1");
    const rec = recordingCassetteStore(path, { parseCache: false });
    await rec.set("b", 2);
    const reader = cassetteStore(path, { parseCache: false, onWarning: (m) => expect.fail(m) });
    expect(Object.fromEntries(await all(reader))).toStrictEqual({ a: 1, b: 2 });
    await reader.close();
    await rec.close();
    expect((await readCassette(path)).map((i) => i.key)).toStrictEqual(["a", "b"]);
  });

  it("the plain store, and a handle not opened for recording, still rewrite (no append)", async () => {
    const path = join(dir, "e.yaml");
    const plain = cassetteStore(path, { parseCache: false });
    await plain.set("a", 1);
    await plain.set("b", 2);
    expect(readFileSync(path, "utf8")).not.toContain(MARK);
    await plain.close();
  });
});
