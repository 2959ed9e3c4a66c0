/**
 * `invocache prune --dry-run --older-than` answered by the store (its sums
 * for the counts, its `m_at` for the entries near or past the cutoff):
 * the same report as reading every value, on a real SQLite file before and
 * after `migrate-store`, with recording times in other offsets on both
 * sides of the cutoff (their text sorts up to a day away from their instant).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run.js";
import { invocationManifest, manifestIdentity } from "../../src/identity/index.js";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION } from "../../src/index.js";
import { type Entry, entryKey } from "../../src/store/index.js";
import { rawSql as sql } from "../helpers/raw-sqlite.js";
import { tempDir } from "../helpers/tmp.js";
import { fakeIo } from "./in-process.js";

const dir = tempDir("cli-prune-meta");
const DAY = 86_400_000;

/** `ms` as ISO-8601 text in an offset of `minutes` east of UTC. */
function inOffset(ms: number, minutes: number): string {
  if (minutes === 0) return new Date(ms).toISOString();
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, 23);
  const a = Math.abs(minutes);
  const hhmm = `${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
  return `${local}${minutes < 0 ? "-" : "+"}${hhmm}`;
}

function entry(prompt: string, recordedAt: string): Entry {
  const manifest = invocationManifest(
    { role: "r", model: "gpt-4o", prompt },
    { homeDir: "/h", tmpDirs: [] },
  );
  return {
    v: 1,
    id: manifestIdentity(manifest),
    manifest,
    response: { text: prompt },
    meta: {
      recordedAt,
      durationMs: 5,
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIo(dir);
  const code = await runCli(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

describe("prune --dry-run from stored metadata", () => {
  it("reports what reading every value reports, times in any offset on either side of the cutoff", async () => {
    const path = join(dir, "old.sqlite");
    const url = `sqlite://${path}`;
    await sql(path, "CREATE TABLE invocache_entries(key VARCHAR(255) PRIMARY KEY, value TEXT )");
    const now = Date.now();
    const cut = now - 30 * DAY;
    // [instant, offset in minutes]: past the cutoff or not, whatever the text says.
    const times: Array<[number, number]> = [
      [cut - DAY, 0],
      [cut + DAY, 0],
      [cut - 6 * 3_600_000, 12 * 60], // text 6 h after the cutoff, instant before: removed
      [cut + 6 * 3_600_000, -11 * 60], // text 5 h before the cutoff, instant after: kept
      [cut - 3_600_000, -30],
      [cut + 3_600_000, 13 * 60 + 45],
      [cut - 400 * DAY, 5 * 60 + 30],
      [now, 0],
    ];
    for (const ns of ["ns", "other"]) {
      for (const [i, [ms, offset]] of times.entries()) {
        const e = entry(`${ns}${i}`, inOffset(ms, offset));
        await sql(path, "INSERT INTO invocache_entries (key, value) VALUES (?, ?)", [
          entryKey(ns, e.id, 0),
          JSON.stringify({ value: e }),
        ]);
      }
    }
    await sql(path, "INSERT INTO invocache_entries (key, value) VALUES (?, ?)", [
      entryKey("ns", "ab".repeat(32), 0),
      JSON.stringify({ value: { v: 1, not: "an entry" } }),
    ]);
    await sql(path, "INSERT INTO invocache_entries (key, value) VALUES (?, ?)", [
      "ns:run:r1",
      JSON.stringify({ value: { runId: "r1" } }),
    ]);
    const runs = [
      ["prune", "--older-than", "30d", "--dry-run", "--store", url, "--json"],
      ["prune", "--older-than", "30d", "--dry-run", "--store", url, "--namespace", "ns", "--json"],
      ["prune", "--older-than", "30d", "--dry-run", "--store", url],
    ];
    const before = [];
    for (const args of runs) {
      const r = await cli(args);
      expect(r.code, r.err).toBe(0);
      // Read from the values: the store says how to migrate.
      expect(r.err).toMatch(/invocache migrate-store --store sqlite:/);
      before.push(r.out);
    }
    const removed = JSON.parse(before[0]!).removed as Array<{ recordedAt: string }>;
    expect(removed.map((r) => Date.parse(r.recordedAt) < cut)).toStrictEqual(
      removed.map(() => true),
    );
    expect(removed).toHaveLength(8);
    expect(JSON.parse(before[0]!)).toMatchObject({ kept: 8 });

    const migrated = await cli(["migrate-store", "--store", url, "--json"]);
    expect(migrated.code, migrated.err).toBe(0);
    for (const [i, args] of runs.entries()) {
      const r = await cli(args);
      expect(r.code, r.err).toBe(0);
      // The first problem is warned about on stderr without --json, as before.
      if (args.includes("--json")) expect(r.err).toBe("");
      const strip = (text: string) => text.replace(/\d+(\.\d+)? ?(m|h|d)\b ago/g, "");
      expect(strip(r.out)).toBe(strip(before[i]!));
    }
  });
});
