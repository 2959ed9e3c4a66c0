/**
 * The viewer at a size, on a real SQLite store of 20,000 entries (built by
 * one SQL statement copying a real entry with its stored metadata, as
 * bench/scale.ts does): it starts, serves its first page, the next page and
 * a search without reading a single stored value (counted on the real
 * store's `get` and `list`: the whole-store read is `list`), and opening an
 * entry reads that entry. The same store without stored metadata (as made
 * before it) still opens, by the full read, and says how to migrate. Then
 * in real Chromium: first page, next page, a search, an entry's detail.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION, openStore } from "../../src/index.js";
import { SQLITE_VALUES_TABLE } from "../../src/store/backends/sqlite.js";
import { type Entry, entryKey } from "../../src/store/index.js";
import { KeyvStore } from "../../src/store/keyv-store.js";
import { startViewer, type Viewer } from "../../src/viewer/index.js";
import { tempDir } from "../helpers/tmp.js";
import { HAVE_CHROMIUM, launch } from "./browser.js";
import { get } from "./fixtures.js";

const N = 20_000;
const dir = tempDir("view-scale");
const file = join(dir, "big.sqlite");
const legacyFile = join(dir, "legacy.sqlite");
const TEMPLATE_ID = "ab".repeat(32);
const TEMPLATE_AT = "2001-01-01T00:00:00.000Z";
/** One entry among the copies, recorded in the middle of them, that only search finds on page 1. */
const NEEDLE_ID = "cd".repeat(32);
const NEEDLE_TASK = "summarize-the-needle-report";

type Db = {
  exec(sql: string, cb: (e: Error | null) => void): void;
  close(cb: () => void): void;
};
const sqlite3 = createRequire(createRequire(import.meta.url).resolve("@keyv/sqlite"))(
  "sqlite3",
) as { Database: new (path: string, cb: (e: Error | null) => void) => Db };

async function exec(path: string, sql: string): Promise<void> {
  const db = await new Promise<Db>((resolve, reject) => {
    const d = new sqlite3.Database(path, (e) => (e ? reject(e) : resolve(d)));
  });
  try {
    await new Promise<void>((resolve, reject) => db.exec(sql, (e) => (e ? reject(e) : resolve())));
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

function entry(id: string, task: string, recordedAt: string, role = "builder"): Entry {
  return {
    v: 1,
    id,
    manifest: { attempt: 0, inputs: [], model: "gpt-5", prompt: "p", role, task },
    response: { text: "r" },
    meta: {
      recordedAt,
      durationMs: 12,
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

/**
 * `n` copies of the template under random ids, entry i recorded i seconds
 * after 2026-01-01; with `meta`, their stored metadata copied too (else the
 * rows have none, as a store written before stored metadata).
 */
async function build(path: string, n: number, meta: boolean): Promise<void> {
  const store = openStore(`sqlite://${path}`);
  await store.set(
    entryKey("default", TEMPLATE_ID, 0),
    entry(TEMPLATE_ID, "", TEMPLATE_AT) as never,
  );
  await store.close();
  const at = `strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds')`;
  await exec(
    path,
    `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ${n - 1}),
     ids AS MATERIALIZED (SELECT i, lower(hex(randomblob(32))) AS id, ${at} AS at FROM c)
     INSERT INTO ${SQLITE_VALUES_TABLE} (key, value${meta ? ", m_meta, m_at, m_rev" : ""})
     SELECT 'default:e:' || id || ':0',
       replace(replace(t.value, '${TEMPLATE_ID}', id), '${TEMPLATE_AT}', at)
       ${meta ? `, replace(replace(t.m_meta, '${TEMPLATE_ID}', id), '${TEMPLATE_AT}', at), at, 1` : ""}
     FROM ids, (SELECT value, m_meta FROM ${SQLITE_VALUES_TABLE}) t;
     DELETE FROM ${SQLITE_VALUES_TABLE} WHERE key = '${entryKey("default", TEMPLATE_ID, 0)}';`,
  );
  if (meta) {
    // Through the store: its metadata written with it, as the recorder writes.
    const s = openStore(`sqlite://${path}`);
    const middle = new Date(Date.parse("2026-01-01") + (n / 2) * 1000 + 500).toISOString();
    await s.set(
      entryKey("default", NEEDLE_ID, 0),
      entry(NEEDLE_ID, NEEDLE_TASK, middle, "reviewer") as never,
    );
    await s.close();
  }
}

/** Value reads on every real store: one per `get`, and the whole-store read (`list`). */
function countReads(): { gets: () => number; lists: () => number } {
  const gets = vi.spyOn(KeyvStore.prototype, "get");
  const lists = vi.spyOn(KeyvStore.prototype, "list");
  return { gets: () => gets.mock.calls.length, lists: () => lists.mock.calls.length };
}

async function session(viewer: Viewer) {
  const host = `127.0.0.1:${viewer.port}`;
  const first = await get(viewer.port, `/?token=${viewer.token}`, { host });
  const cookie = String(first.headers["set-cookie"]).split(";")[0]!;
  return (path: string) => get(viewer.port, path, { host, cookie });
}

const rows = (body: string) => body.match(/<tr data-href="\/entry\//g)?.length ?? 0;

beforeAll(async () => {
  await build(file, N, true);
  await build(legacyFile, 30, false);
}, 120_000);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the viewer on a 20,000-entry SQLite store with stored metadata", () => {
  it("serves its first page, the next one and a search reading no stored value; an entry reads one", async () => {
    const reads = countReads();
    const viewer = await startViewer({ store: `sqlite://${file}` });
    try {
      const page = await session(viewer);
      const overview = await page("/");
      expect(overview.status).toBe(200);
      expect(rows(overview.body)).toBe(50);
      // Newest first: the last copy was recorded 19,999 s after the base.
      expect(overview.body).toContain("2026-01-01 05:33:19 UTC");
      const next = await page("/?offset=50");
      expect(rows(next.body)).toBe(50);
      expect(next.body).toContain('rel="prev"');
      expect(next.body).toContain("2026-01-01 05:32:29 UTC");
      const found = await page("/?q=needle");
      expect(rows(found.body)).toBe(1);
      expect(found.body).toContain(`/entry/default%3Ae%3A${NEEDLE_ID}%3A0`);
      expect(found.body).toContain('id="search-covers"');
      const byId = await page(`/?q=${NEEDLE_ID.slice(0, 10)}`);
      expect(rows(byId.body)).toBe(1);
      // The totals, counted from the metadata (the first page may have gone out before them).
      await expect
        .poll(async () => (await page("/")).body, { timeout: 30_000 })
        .toContain(`${(N + 1).toLocaleString("en")}</div><div class="l">entries`);
      // The last page, read from the oldest end once the count is known.
      const last = await page(`/?offset=${N + 1 - 50}`);
      expect(rows(last.body)).toBe(50);
      expect(last.body).toContain("2026-01-01 00:00:00 UTC");
      expect(last.body).toContain(`19,952–20,001 of 20,001`);
      expect(last.body).not.toContain('rel="next"');
      expect(reads.lists()).toBe(0);
      expect(reads.gets()).toBe(0);

      const opened = await page(`/entry/${encodeURIComponent(`default:e:${NEEDLE_ID}:0`)}`);
      expect(opened.status).toBe(200);
      expect(opened.body).toContain(NEEDLE_TASK);
      expect(reads.gets()).toBe(1);
      expect(reads.lists()).toBe(0);
    } finally {
      await viewer.close();
    }
  }, 120_000);
});

describe("a store without stored metadata", () => {
  it("still opens by reading every value, and says how to migrate", async () => {
    const reads = countReads();
    const viewer = await startViewer({ store: `sqlite://${legacyFile}` });
    try {
      const page = await session(viewer);
      const overview = await page("/");
      expect(rows(overview.body)).toBe(30);
      expect(overview.body).toContain('id="full-read"');
      expect(overview.body).toContain("invocache migrate-store --store sqlite://");
      // The slow path: the whole store was read once.
      expect(reads.lists()).toBeGreaterThan(0);
    } finally {
      await viewer.close();
    }
  }, 60_000);
});

describe.skipIf(!HAVE_CHROMIUM)("the viewer at a size in Chromium", () => {
  let viewer: Viewer;
  let browser: BrowserContext;
  beforeAll(async () => {
    viewer = await startViewer({ store: `sqlite://${file}` });
    browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
  });

  it("renders the first page, loads the next, finds an entry by search and opens it", async () => {
    const page = await browser.newPage();
    await page.goto(viewer.url);
    await expect.poll(() => page.locator("h1").textContent()).toBe("Overview");
    const entries = page.locator("#entries tbody tr");
    expect(await entries.count()).toBe(50);
    const firstId = await entries.first().locator("a.id").textContent();
    await page.locator('.pager a[rel="next"]').first().click();
    await expect.poll(() => page.locator(".pager span").first().textContent()).toMatch(/^51–100/);
    expect(await entries.count()).toBe(50);
    expect(await entries.first().locator("a.id").textContent()).not.toBe(firstId);

    await page.locator('input[name="q"]').fill("needle");
    await page.locator('form.search button[type="submit"]').click();
    await expect.poll(() => entries.count()).toBe(1);
    expect(await entries.first().locator("a.id").textContent()).toBe(NEEDLE_ID.slice(0, 12));

    await entries.first().locator("a.id").click();
    await expect.poll(() => page.locator("h1").textContent()).toMatch(/^reviewer cdcdcdcdcdcd/);
    expect(await page.locator("body").textContent()).toContain(NEEDLE_TASK);
  }, 120_000);
});
