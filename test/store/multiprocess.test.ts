/**
 * Several processes on one SQLite file at once, as parallel test runners and
 * agent workers use it: no errors (SQLITE_BUSY), no false misses, no lost
 * rows, and a lease has exactly one winner. (The same lease race runs against
 * Redis and Postgres in their own test files, on their servers.)
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import { leaseRace, PROCESSES, workers } from "../helpers/store-workers.js";
import { tempDir } from "../helpers/tmp.js";

const dir = tempDir("mp");

describe("sqlite:// shared by several processes", () => {
  it(`${PROCESSES} processes x 1,000 writes and reads: no errors, no false misses, all rows`, async () => {
    const url = `sqlite://${join(dir, "shared", "cache.sqlite")}`;
    const count = 1000;
    const reports = await workers((w) => ["rw", url, String(w), String(count), String(PROCESSES)]);
    expect(reports.flatMap((r) => r.errors)).toStrictEqual([]);
    expect(reports.map((r) => r.misses)).toStrictEqual(Array(PROCESSES).fill(0));
    expect(reports.map((r) => r.mismatches)).toStrictEqual(Array(PROCESSES).fill(0));
    // Rows written by one process were read by the others while they wrote
    // (the leading worker may see none: the others trail it).
    expect(reports.reduce((sum, r) => sum + (r.foreignHits ?? 0), 0)).toBeGreaterThan(0);
    const store = openStore(url);
    let rows = 0;
    for await (const [key, value] of store.list("mp:")) {
      const match = /^mp:w(\d+):(\d+)$/.exec(key);
      expect(match).not.toBeNull();
      expect(value).toMatchObject({ w: Number(match?.[1]), i: Number(match?.[2]) });
      rows++;
    }
    await store.close();
    expect(rows).toBe(PROCESSES * count);
  });

  it(`only one of ${PROCESSES} processes wins each lease`, async () => {
    await leaseRace(`sqlite://${join(dir, "leases.sqlite")}`, 50);
  });
});
