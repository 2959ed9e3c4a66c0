/**
 * What a replay hit reads (issue 32 §3): the entry without its manifest
 * (`Store.getHit`), checked against the call's own id and attempt; any entry
 * that does not say it is the one asked for is read and checked whole, as
 * before. Real memory and SQLite stores, entries edited in place the way a
 * hand edit or a bad merge would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EntryFormatError } from "../../src/errors.js";
import { createRecorder, invocationIdentity, openStore } from "../../src/index.js";
import type { JsonValue } from "../../src/store/index.js";
import { entryKey } from "../../src/store/index.js";
import { countingStore } from "../helpers/counting-store.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-hit-reads-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const stores: [string, () => string][] = [
  ["memory", () => "memory://"],
  ["sqlite", () => `sqlite://${join(dir, `${Math.random().toString(36).slice(2)}.sqlite`)}`],
];

describe.each(stores)("a hit on %s", (_name, url) => {
  async function recorded(prompt: string) {
    const counting = countingStore(openStore(url()));
    const r = createRecorder({ store: counting.store, mode: "auto", identity: machine });
    const req = { role: "builder", model: "gpt-5", prompt };
    await r.call(req, async () => ({ answer: prompt }));
    const key = entryKey("default", invocationIdentity(req, machine), 0);
    const entry = (await counting.store.get(key)) as Record<string, JsonValue>;
    counting.reset();
    return { counting, r, req, key, entry };
  }

  it("reads the entry without its manifest, once", async () => {
    const { counting, r, req } = await recorded("a long conversation");
    expect(await r.call(req, async () => ({ answer: "live" }))).toStrictEqual({
      answer: "a long conversation",
    });
    expect(counting.counts.getHit).toBe(1);
    expect(counting.counts.get).toBe(0);
    await r.close();
  });

  it("reads and checks the whole entry when its stored id is not the call's", async () => {
    const { counting, r, req, key, entry } = await recorded("edited id");
    // Under the right key, another id: the whole entry decides, as before this read existed.
    await counting.store.set(key, { ...entry, id: "f".repeat(64) });
    counting.reset();
    expect(await r.call(req, async () => ({ answer: "live" }))).toStrictEqual({
      answer: "edited id",
    });
    expect(counting.counts).toMatchObject({ getHit: 1, get: 1 });
    await r.close();
  });

  it("reads the whole entry when its meta's attempt is not the call's, and refuses it there", async () => {
    const { counting, r, req, key, entry } = await recorded("edited attempt");
    const meta = entry.meta as Record<string, JsonValue>;
    await counting.store.set(key, { ...entry, meta: { ...meta, attempt: 3 } });
    counting.reset();
    await expect(r.call(req, async () => ({ answer: "live" }))).rejects.toBeInstanceOf(
      EntryFormatError,
    );
    expect(counting.counts).toMatchObject({ getHit: 1, get: 1 });
    await r.close();
  });

  it("refuses a malformed envelope with EntryFormatError, not as a store failure", async () => {
    const { counting, r, req, key, entry } = await recorded("bad meta");
    const meta = entry.meta as Record<string, JsonValue>;
    await counting.store.set(key, { ...entry, meta: { ...meta, durationMs: -1 } });
    const warnings: unknown[] = [];
    r.on("warning", (w) => warnings.push(w));
    await expect(r.call(req, async () => ({ answer: "live" }))).rejects.toBeInstanceOf(
      EntryFormatError,
    );
    expect(warnings).toStrictEqual([]);
    await r.close();
  });
});
