/**
 * The part of the store conformance suite (store-conformance.ts) about
 * stored metadata (`Store.listMeta`, src/store/meta.ts): every store that
 * has `listMeta` answers what `storedMetaOf` says of each live value, with
 * the filters, orders and keyset paging of `MetaQuery`, and never a value's
 * old metadata after it was overwritten or deleted.
 */
import { describe, expect, it } from "vitest";
import { invocationManifest, manifestIdentity } from "../identity/index.js";
import type { JsonValue } from "../json/index.js";
import { NORMALIZATION_VERSION } from "../normalize/index.js";
import {
  type Entry,
  entryKey,
  foldMetaStats,
  type MetaQuery,
  metaStatsOf,
  type Store,
  type StoredMeta,
  storedMetaOf,
  valueDigest,
} from "../store/index.js";
import { INVOCACHE_VERSION } from "../version.js";
import { mixedStatsRows } from "./stats-mixed.js";

/** A valid entry (its id its manifest's identity: a cassette checks it) recorded at `recordedAt`. */
function entryAt(prompt: string, recordedAt: string, role = "planner"): Entry {
  const manifest = invocationManifest(
    { role, model: "gpt-4o", prompt },
    { homeDir: "/home/u", tmpDirs: ["/tmp"] },
  );
  return {
    v: 1,
    id: manifestIdentity(manifest),
    manifest,
    response: { text: `answer to ${prompt}` },
    meta: {
      recordedAt,
      durationMs: 12,
      usage: { shape: "openai.chat", inputTokens: 3, outputTokens: 5 },
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

/**
 * Define the stored-metadata tests inside a store's conformance suite.
 * `store()` and `prefix()` are the suite's current store and key prefix.
 */
export function storedMetaConformance(store: () => Store, prefix: () => string): void {
  describe("stored metadata (listMeta)", () => {
    async function all(query: MetaQuery): Promise<StoredMeta[]> {
      const out: StoredMeta[] = [];
      for await (const m of store().listMeta!(query)) out.push(m);
      return out;
    }

    /** Three entries recorded a day apart, a run record and another value, under the prefix. */
    async function seed(): Promise<Array<{ key: string; value: JsonValue }>> {
      const ns = prefix().slice(0, -1);
      const rows: Array<{ key: string; value: JsonValue }> = [];
      for (const [i, at] of [
        "2026-01-03T00:00:00.000Z",
        "2026-01-01T00:00:00.000Z",
        "2026-01-02T00:00:00.000Z",
      ].entries()) {
        const e = entryAt(`${prefix()}prompt ${i}`, at, i === 0 ? "builder" : "planner");
        // cast: an Entry is an interface (no index signature) of JSON data: stored as the JSON value it is.
        rows.push({ key: entryKey(ns, e.id, 0), value: e as unknown as JsonValue });
      }
      rows.push({ key: `${ns}:run:r1`, value: { runId: "r1" } });
      rows.push({ key: `${prefix()}other`, value: [1, 2, 3] });
      for (const { key, value } of rows) await store().set(key, value);
      return rows;
    }

    it("answers what storedMetaOf says of every value, in key order", async (ctx) => {
      if (store().listMeta === undefined) return ctx.skip();
      const rows = await seed();
      const expected = rows
        .map(({ key, value }) => storedMetaOf(key, value))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      expect(await all({ prefix: prefix() })).toStrictEqual(expected);
      const kinds = expected.map((m) => m.kind).sort();
      expect(kinds).toStrictEqual(["entry", "entry", "entry", "other", "run"]);
      const entry = expected.find((m) => m.kind === "entry" && m.role === "builder")!;
      expect(entry).toMatchObject({
        model: "gpt-4o",
        usage: { shape: "openai.chat", inputTokens: 3, outputTokens: 5 },
        durationMs: 12,
      });
    });

    it("orders entries by recording time either way, filters by time, and pages by keyset", async (ctx) => {
      if (store().listMeta === undefined) return ctx.skip();
      await seed();
      const asc = await all({ prefix: prefix(), order: "recordedAt" });
      expect(asc.map((m) => m.recordedAt)).toStrictEqual([
        "2026-01-01T00:00:00.000Z",
        "2026-01-02T00:00:00.000Z",
        "2026-01-03T00:00:00.000Z",
      ]);
      const desc = await all({ prefix: prefix(), order: "recordedAtDesc" });
      expect(desc.map((m) => m.key)).toStrictEqual(asc.map((m) => m.key).reverse());
      const old = await all({ prefix: prefix(), recordedBefore: "2026-01-02T12:00:00.000Z" });
      expect(old.map((m) => m.recordedAt).sort()).toStrictEqual([
        "2026-01-01T00:00:00.000Z",
        "2026-01-02T00:00:00.000Z",
      ]);
      const first = await all({ prefix: prefix(), order: "recordedAtDesc", limit: 2 });
      expect(first.map((m) => m.key)).toStrictEqual(desc.slice(0, 2).map((m) => m.key));
      const last = first.at(-1)!;
      const next = await all({
        prefix: prefix(),
        order: "recordedAtDesc",
        limit: 2,
        after: { key: last.key, recordedAt: last.recordedAt! },
      });
      expect(next.map((m) => m.key)).toStrictEqual(desc.slice(2).map((m) => m.key));
      const keys = await all({ prefix: prefix(), limit: 2 });
      const rest = await all({ prefix: prefix(), after: { key: keys.at(-1)!.key } });
      expect([...keys, ...rest].map((m) => m.key)).toStrictEqual(
        (await all({ prefix: prefix() })).map((m) => m.key),
      );
    });

    it("follows overwrites and deletes: never a value's old metadata", async (ctx) => {
      if (store().listMeta === undefined) return ctx.skip();
      const rows = await seed();
      const [a, b] = rows;
      const newer = entryAt(`${prefix()}prompt 0`, "2026-02-01T00:00:00.000Z", "builder");
      // cast: an Entry is an interface (no index signature) of JSON data: stored as the JSON value it is.
      await store().set(a!.key, newer as unknown as JsonValue);
      await store().delete(b!.key);
      await store().deleteIfUnchanged?.(rows[2]!.key, valueDigest(rows[2]!.value));
      const entries = await all({ prefix: prefix(), entriesOnly: true });
      expect(entries.map((m) => [m.key, m.recordedAt])).toStrictEqual([
        [a!.key, "2026-02-01T00:00:00.000Z"],
      ]);
    });

    it("sums its metadata (statsMeta) to what folding listMeta gives, over a mixed set", async (ctx) => {
      if (store().listMeta === undefined) return ctx.skip();
      const ns = prefix().slice(0, -1);
      const rows = mixedStatsRows(ns);
      for (const { key, value } of rows) await store().set(key, value);
      // Gone before it is summed: not counted.
      await store().set(`${prefix()}run:gone`, { runId: "gone" });
      await store().delete(`${prefix()}run:gone`);
      const query = {
        prefix: prefix(),
        usageDetail: ["gpt-4o-2024-08-06"],
        usageDetailAbove: 100_000,
      };
      const got = await metaStatsOf(store(), query)!;
      expect(got).toStrictEqual(
        await foldMetaStats(store().listMeta!({ prefix: prefix() }), query),
      );
      // …and to the fold of what each value's metadata is.
      async function* computed() {
        for (const { key, value } of rows) yield storedMetaOf(key, value);
      }
      expect(got).toStrictEqual(await foldMetaStats(computed(), query));
      expect(got).toMatchObject({ ids: 15, runs: 1, problems: 1 });
      expect(got.groups.reduce((n, g) => n + g.entries, 0)).toBe(16);
      expect(got.groups.length).toBeGreaterThan(8);
      // The 300k-token prompt, the one answered as gpt-4o-2024-08-06, cache counts past the input.
      expect(got.usages.map((u) => [u.model, u.inputTokens])).toStrictEqual([
        ["gemini-2.5-pro", 300_000],
        ["gpt-4o", 1234],
        ["gpt-4o-mini", 10],
      ]);
      expect(got.firstProblem?.key).toBe(entryKey(ns, "ab".repeat(32), 0));
      const other = await metaStatsOf(store(), { prefix: `${prefix()}nothing-here:` })!;
      expect(other).toStrictEqual({ groups: [], usages: [], ids: 0, runs: 0, problems: 0 });
    });

    it("reports a value under an entry key that is not an entry as a problem", async (ctx) => {
      if (store().listMeta === undefined) return ctx.skip();
      const ns = prefix().slice(0, -1);
      const key = entryKey(ns, "ab".repeat(32), 0);
      await store().set(key, { not: "an entry" });
      const [row] = await all({ prefix: prefix() });
      expect(row).toMatchObject({ key, kind: "problem" });
      expect(row!.problem).toMatch(/\$/);
    });
  });
}
