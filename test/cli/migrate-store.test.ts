/**
 * `invocache migrate-store` and the commands on a store made before stored
 * metadata: a real SQLite file in the old layout. `stats` still answers
 * (reading the values) and says how to migrate; after `migrate-store` it
 * answers from the metadata, with the same numbers, and says nothing more.
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

const dir = tempDir("cli-migrate-store");
function entry(prompt: string, role: string, recordedAt: string): Entry {
  const manifest = invocationManifest(
    { role, model: "gpt-4o", prompt },
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
      usage: { shape: "openai.chat", inputTokens: 10, outputTokens: 20 },
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

describe("invocache migrate-store", () => {
  it("stats answers on an old store (saying how to migrate), and the same after migrate-store", async () => {
    const path = join(dir, "old.sqlite");
    const url = `sqlite://${path}`;
    await sql(path, "CREATE TABLE invocache_entries(key VARCHAR(255) PRIMARY KEY, value TEXT )");
    for (const [i, role] of ["planner", "planner", "builder"].entries()) {
      const e = entry(`p${i}`, role, `2026-01-0${i + 1}T00:00:00.000Z`);
      await sql(path, "INSERT INTO invocache_entries (key, value) VALUES (?, ?)", [
        entryKey("ns", e.id, 0),
        JSON.stringify({ value: e }),
      ]);
    }
    await sql(path, "INSERT INTO invocache_entries (key, value) VALUES (?, ?)", [
      entryKey("ns", "ab".repeat(32), 0),
      JSON.stringify({ value: { v: 1, not: "an entry" } }),
    ]);
    await sql(path, "INSERT INTO invocache_entries (key, value) VALUES (?, ?)", [
      "ns:run:r1",
      JSON.stringify({ value: { runId: "r1" } }),
    ]);

    const before = await cli(["stats", "--store", url, "--json"]);
    expect(before.code, before.err).toBe(0);
    expect(before.err).toMatch(/invocache migrate-store --store sqlite:/);
    const lsBefore = await cli(["ls", "--store", url, "--json"]);
    const pruneArgs = ["prune", "--older-than", "1d", "--dry-run", "--store", url, "--json"];
    const pruneBefore = await cli(pruneArgs);
    expect(pruneBefore.err).toMatch(/invocache migrate-store --store sqlite:/);
    expect(lsBefore.err).toMatch(/invocache migrate-store --store sqlite:/);

    const migrated = await cli(["migrate-store", "--store", url, "--json"]);
    expect(migrated.code, migrated.err).toBe(0);
    expect(JSON.parse(migrated.out)).toMatchObject({ filled: 5, supported: true });
    const lsAfter = await cli(["ls", "--store", url, "--json"]);
    expect(lsAfter.err).toBe("");
    expect(JSON.parse(lsAfter.out)).toStrictEqual(JSON.parse(lsBefore.out));
    expect(JSON.parse(lsAfter.out).entries).toHaveLength(3);
    const pruneAfter = await cli(pruneArgs);
    expect(pruneAfter.err).toBe("");
    expect(JSON.parse(pruneAfter.out)).toStrictEqual(JSON.parse(pruneBefore.out));
    expect(JSON.parse(pruneAfter.out)).toMatchObject({ dryRun: true, kept: 0 });
    expect(JSON.parse(pruneAfter.out).removed).toHaveLength(3);

    const after = await cli(["stats", "--store", url, "--json"]);
    expect(after.code, after.err).toBe(0);
    expect(after.err).toBe("");
    expect(JSON.parse(after.out)).toStrictEqual(JSON.parse(before.out));
    expect(JSON.parse(after.out)).toMatchObject({
      entries: 3,
      ids: 3,
      runs: 1,
      byRole: { planner: { entries: 2 }, builder: { entries: 1 } },
      recorded: { inputTokens: 30, outputTokens: 60 },
    });
  });

  it("refuses a cassette", async () => {
    const r = await cli(["migrate-store", "--cassette", "x.yaml"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cassette needs no migration/);
  });
});
