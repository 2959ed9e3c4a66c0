/**
 * `deleteIfUnchanged` on a cassette, against another handle (standing in
 * for another process) that re-records the key after this one read it: the
 * condition is checked under the file lock against the file as it is then,
 * so the re-record survives. Real files.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { valueDigest } from "../../src/store/index.js";
import { makeEntry, tempDir } from "./helpers.js";

describe("cassette deleteIfUnchanged", () => {
  it("keeps an entry another handle re-recorded after this one read it", async () => {
    const file = join(tempDir("cassette-cond"), "c.yaml");
    const old = makeEntry(
      "the prompt",
      { text: "old" },
      { recordedAt: "2025-01-01T00:00:00.000Z" },
    );
    const kept = makeEntry("other prompt", { text: "kept" });
    const mine = cassetteStore(file);
    await mine.set(old.key, old.entry as never);
    await mine.set(kept.key, kept.entry as never);
    const read = await mine.get(old.key);
    const digest = valueDigest(read!);

    const other = cassetteStore(file);
    const fresh = makeEntry(
      "the prompt",
      { text: "fresh" },
      { recordedAt: "2026-06-01T00:00:00.000Z" },
    );
    await other.set(fresh.key, fresh.entry as never);
    await other.close();

    // `mine` still holds the old version in memory: only the write's merge,
    // against the file re-read under the lock, can see the re-record.
    expect(await mine.deleteIfUnchanged!(old.key, digest)).toBe(false);
    expect(await mine.get(old.key)).toStrictEqual(fresh.entry);
    await mine.close();
    const after = cassetteStore(file);
    expect(await after.get(old.key)).toStrictEqual(fresh.entry);
    expect(await after.get(kept.key)).toStrictEqual(kept.entry);
    // Unchanged since read: removed, and the file says so.
    expect(await after.deleteIfUnchanged!(old.key, valueDigest(fresh.entry as never))).toBe(true);
    await after.close();
    const last = cassetteStore(file);
    expect(await last.get(old.key)).toBeUndefined();
    expect(await last.get(kept.key)).toStrictEqual(kept.entry);
    await last.close();
  });

  it("with write: on-close, decides again when the write is made", async () => {
    const file = join(tempDir("cassette-cond-buffered"), "c.yaml");
    const old = makeEntry("p", { text: "old" }, { recordedAt: "2025-01-01T00:00:00.000Z" });
    const seed = cassetteStore(file);
    await seed.set(old.key, old.entry as never);
    await seed.close();
    const buffered = cassetteStore(file, { write: "on-close" });
    const digest = valueDigest((await buffered.get(old.key))!);
    // The handle's own view: unchanged, so it answers true (nothing written yet).
    expect(await buffered.deleteIfUnchanged!(old.key, digest)).toBe(true);
    expect(await buffered.get(old.key)).toBeUndefined();
    const other = cassetteStore(file);
    const fresh = makeEntry("p", { text: "fresh" }, { recordedAt: "2026-06-01T00:00:00.000Z" });
    await other.set(fresh.key, fresh.entry as never);
    await other.close();
    await buffered.close();
    const after = cassetteStore(file);
    expect(await after.get(old.key)).toStrictEqual(fresh.entry);
    await after.close();
  });
});
