/**
 * `ls` and `prune` on a real SQLite store too large to hold in a small heap:
 * the CLI runs with `--max-old-space-size` far below what keeping one row
 * per entry needs, so it only completes when it streams (ls: the store sorts
 * by recording time, rows print as they come; prune: deletes in batches as
 * it scans). 40,000 entries by default; INVOCACHE_BIG=1 runs 300,000.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION, openStore } from "../../src/index.js";
import { SQLITE_VALUES_TABLE } from "../../src/store/backends/sqlite.js";
import { type Entry, entryKey } from "../../src/store/index.js";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, cli } from "./helpers.js";

const BIG = process.env.INVOCACHE_BIG === "1";
const N = BIG ? 300_000 : 40_000;
/**
 * Far below the ~1.5 KB per entry that holding every row (or a few hundred
 * bytes per key to delete) takes: before streaming, ls and prune ran out of it.
 */
const HEAP_MB = 16;
const cwd = tempDir("cli-scale");
const file = join(cwd, "big.sqlite");
/** 1,100 copies whose key and entry id differ: every one a problem. */
const badFile = join(cwd, "bad.sqlite");
const url = `sqlite://${file}`;
const capped = { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` };

const TEMPLATE_ID = "ab".repeat(32);
const TEMPLATE_AT = "2001-01-01T00:00:00.000Z";

type Db = {
  exec(sql: string, cb: (e: Error | null) => void): void;
  all(sql: string, cb: (e: Error | null, rows: Array<Record<string, unknown>>) => void): void;
  close(cb: () => void): void;
};
const sqlite3 = createRequire(createRequire(import.meta.url).resolve("@keyv/sqlite"))(
  "sqlite3",
) as { Database: new (path: string, cb: (e: Error | null) => void) => Db };

async function withDb<T>(run: (db: Db) => Promise<T>, path = file): Promise<T> {
  const db = await new Promise<Db>((resolve, reject) => {
    const d = new sqlite3.Database(path, (e) => (e ? reject(e) : resolve(d)));
  });
  try {
    return await run(db);
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

function sql(db: Db, text: string): Promise<Array<Record<string, unknown>>> {
  return new Promise((resolve, reject) =>
    db.all(text, (e, rows) => (e ? reject(e) : resolve(rows))),
  );
}

function template(): Entry {
  return {
    v: 1,
    id: TEMPLATE_ID,
    manifest: { attempt: 0, inputs: [], model: "gpt-5", prompt: "p", role: "builder", task: "" },
    response: { text: "r" },
    meta: {
      recordedAt: TEMPLATE_AT,
      durationMs: 12,
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

beforeAll(async () => {
  await buildCli();
  // One real entry written by the library, then N copies by one SQL
  // statement under random ids: entry i was recorded i seconds after a base,
  // the first half in 2020 (old), the second half yesterday. Ids are random,
  // so the store's key order is not the recording order.
  const store = openStore(url);
  await store.set(entryKey("default", TEMPLATE_ID, 0), template() as never);
  await store.close();
  await withDb(async (db) => {
    await sql(
      db,
      `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ${N - 1}),
       ids AS MATERIALIZED (SELECT i, lower(hex(randomblob(32))) AS id FROM c)
       INSERT INTO ${SQLITE_VALUES_TABLE} (key, value)
       SELECT 'default:e:' || id || ':0',
         replace(replace(t.value, '${TEMPLATE_ID}', id), '${TEMPLATE_AT}', at)
       FROM (SELECT id,
               CASE WHEN i < ${N / 2}
                 THEN strftime('%Y-%m-%dT%H:%M:%fZ', '2020-01-01', '+' || i || ' seconds')
                 ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 day', '+' || (i - ${N / 2}) || ' seconds')
               END AS at FROM ids),
         (SELECT value FROM ${SQLITE_VALUES_TABLE}) t`,
    );
    await sql(
      db,
      `DELETE FROM ${SQLITE_VALUES_TABLE} WHERE key = '${entryKey("default", TEMPLATE_ID, 0)}'`,
    );
  });
  const bad = openStore(`sqlite://${badFile}`);
  await bad.set(entryKey("default", TEMPLATE_ID, 0), template() as never);
  await bad.close();
  await withDb(async (db) => {
    // Not materialized: SQLite draws the random id once per reference.
    await sql(
      db,
      `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1100),
       ids(id) AS (SELECT lower(hex(randomblob(32))) FROM c)
       INSERT INTO ${SQLITE_VALUES_TABLE} (key, value)
       SELECT 'default:e:' || ids.id || ':0', replace(t.value, '${TEMPLATE_ID}', ids.id)
       FROM ids, (SELECT value FROM ${SQLITE_VALUES_TABLE}) t`,
    );
  }, badFile);
}, BUILD_TIMEOUT);

describe("a store of malformed entries", () => {
  const badUrl = () => `sqlite://${badFile}`;
  it("ls --json lists the first 1,000 problems and counts the rest", { timeout: 60_000 }, () => {
    const r = cli(["ls", "--store", badUrl(), "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    const out = r.json<{ entries: unknown[]; problems: unknown[]; problemsOmitted?: number }>();
    expect(out.entries).toHaveLength(1);
    expect(out.problems).toHaveLength(1000);
    expect(out.problemsOmitted).toBe(100);
  });

  it("ls and prune warn with the count of all of them", { timeout: 60_000 }, () => {
    for (const args of [["ls"], ["prune", "--older-than", "3650d", "--dry-run"]]) {
      const r = cli([...args, "--store", badUrl()], { cwd });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/skipped 1100 malformed entries; first: .*the key says otherwise/);
    }
  });
});

describe(`a ${N.toLocaleString("en")}-entry SQLite store, the CLI capped at a ${HEAP_MB} MB heap`, () => {
  it("ls --json lists every entry, oldest first", { timeout: 120_000 }, () => {
    const r = cli(["ls", "--store", url, "--json"], { cwd, env: capped });
    expect(r.status, r.stderr).toBe(0);
    const { entries } = r.json<{ entries: Array<{ key: string; recordedAt: string }> }>();
    expect(entries).toHaveLength(N);
    for (let i = 1; i < entries.length; i++) {
      const a = entries[i - 1]!;
      const b = entries[i]!;
      if (!(a.recordedAt < b.recordedAt)) {
        throw new Error(`row ${i}: ${b.recordedAt} (${b.key}) after ${a.recordedAt} (${a.key})`);
      }
    }
    expect(entries[0]!.recordedAt).toBe("2020-01-01T00:00:00.000Z");
  });

  it("ls prints a row per entry and counts them", { timeout: 120_000 }, () => {
    const r = cli(["ls", "--store", url], { cwd, env: capped });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(N + 2);
    expect(lines[0]).toMatch(/^id\s+occ\s+namespace\s+role/);
    expect(lines[1]).toMatch(/^[0-9a-f]{12}\s+0\s+default\s+builder\s+gpt-5\s/);
    expect(lines.at(-1)).toBe(`${N} entries (in namespace default) in ${url}`);
  });

  it("prune --dry-run names the old half and changes nothing; prune removes exactly it", {
    timeout: 180_000,
  }, async () => {
    const dry = cli(["prune", "--store", url, "--older-than", "365d", "--dry-run"], {
      cwd,
      env: capped,
    });
    expect(dry.status, dry.stderr).toBe(0);
    const lines = dry.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(N / 2 + 2);
    expect(
      lines.slice(1, -1).every((l) => /^[0-9a-f]{12}\s+0\s+default\s+builder\s+2020-/.test(l)),
    ).toBe(true);
    expect(lines.at(-1)).toBe(
      `Would remove ${N / 2} entries from ${url}; ${N / 2} kept. (dry run: nothing changed)`,
    );
    const count = () =>
      withDb(async (db) => {
        const [row] = await sql(
          db,
          `SELECT count(*) AS n, sum(value LIKE '%"recordedAt":"2020-%') AS old FROM ${SQLITE_VALUES_TABLE}`,
        );
        return { n: Number(row!.n), old: Number(row!.old) };
      });
    expect(await count()).toEqual({ n: N, old: N / 2 });

    const r = cli(["prune", "--store", url, "--older-than", "365d", "--json"], {
      cwd,
      env: capped,
    });
    expect(r.status, r.stderr).toBe(0);
    const done = r.json<{
      removed: Array<{ key: string; recordedAt: string }>;
      kept: number;
      dryRun: boolean;
    }>();
    expect(done.dryRun).toBe(false);
    expect(done.kept).toBe(N / 2);
    // The keys reported removed are the old half, each once.
    expect(new Set(done.removed.map((x) => x.key)).size).toBe(N / 2);
    expect(done.removed.every((x) => x.recordedAt.startsWith("2020-"))).toBe(true);
    // Every old entry is gone and every new one is still there.
    expect(await count()).toEqual({ n: N / 2, old: 0 });
  });
});
