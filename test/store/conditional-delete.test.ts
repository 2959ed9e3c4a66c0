/**
 * Each backend's conditional delete (`Backend.deleteRecordIf`), the atomic
 * step under `Store.deleteIfUnchanged`: given the stored text it read, it
 * removes the key only while that text is still what is stored. Another
 * connection rewrites the key between the read and the delete; the delete
 * must then remove nothing. Real SQLite file, redis-server, PostgreSQL.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Backend } from "../../src/store/backend.js";
import { createBetterSqliteBackend } from "../../src/store/backends/better-sqlite3.js";
import { createMemoryBackend } from "../../src/store/backends/memory.js";
import { createPostgresBackend } from "../../src/store/backends/postgres.js";
import { createRedisBackend } from "../../src/store/backends/redis.js";
import { createSqliteBackend } from "../../src/store/backends/sqlite.js";
import { KeyvStore } from "../../src/store/keyv-store.js";
import { openStore } from "../../src/store/open.js";
import type { JsonValue, Store } from "../../src/store/types.js";
import { usePostgresServer, useRedisServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";

const LATER = () => Date.now() + 10_000;

/**
 * `backend` reads the key, `write` (another connection) replaces it, and the
 * conditional delete with the text read must leave the new value.
 */
async function raceOnce(
  backend: Backend,
  key: string,
  write: (value: JsonValue) => Promise<void>,
  read: () => Promise<JsonValue | undefined>,
): Promise<void> {
  const full = backend.keyPrefix + key;
  await write({ text: "old", recordedAt: "2020-01-01T00:00:00.000Z" });
  const seen = await backend.getRecord(full);
  expect(seen).toBeTypeOf("string");
  await write({ text: "new", recordedAt: "2026-01-01T00:00:00.000Z" });
  expect(await backend.deleteRecordIf(full, seen!, LATER())).toBe(false);
  expect(await read()).toStrictEqual({ text: "new", recordedAt: "2026-01-01T00:00:00.000Z" });
  const now = await backend.getRecord(full);
  expect(await backend.deleteRecordIf(full, now!, LATER())).toBe(true);
  expect(await read()).toBeUndefined();
  expect(await backend.getRecord(full)).toBeUndefined();
  expect(await backend.deleteRecordIf(full, now!, LATER())).toBe(false);
}

/** The race against the store at `url`, written through a second connection (`other`). */
async function raceAt(url: string, backend: Backend, other: Store = openStore(url)): Promise<void> {
  const key = `cond-${Math.random().toString(36).slice(2)}`;
  try {
    await raceOnce(
      backend,
      key,
      (value) => other.set(key, value),
      () => other.get(key),
    );
  } finally {
    await other.close();
    await backend.close();
  }
}

describe("deleteRecordIf", () => {
  it("memory://", async () => {
    const backend = await createMemoryBackend();
    await raceOnce(
      backend,
      "k",
      async (value) => {
        await backend.keyv.set("k", value);
      },
      async () => (await backend.keyv.get("k")) as JsonValue | undefined,
    );
    await backend.close();
  });

  it("sqlite:// (a file, two connections)", async () => {
    const file = join(tempDir("cond-delete"), "cache.sqlite");
    await raceAt(`sqlite://${file}`, await createSqliteBackend(file));
  });

  // Opt in with INVOCACHE_BETTER_SQLITE3=<a better-sqlite3 12.x package folder>
  // (see better-sqlite3.test.ts). The other connection uses the same driver:
  // two copies of SQLite in one process do not see each other's locks.
  const betterBuild = process.env.INVOCACHE_BETTER_SQLITE3;
  it.skipIf(betterBuild === undefined)("sqlite:// through better-sqlite3", async () => {
    const file = join(tempDir("cond-delete-better"), "cache.sqlite");
    const load = () => createRequire(import.meta.url)(betterBuild!);
    const url = `sqlite://${file}`;
    const other = new KeyvStore(url, () => createBetterSqliteBackend(file, load), {
      timeoutMs: 30_000,
    });
    await raceAt(url, await createBetterSqliteBackend(file, load), other);
  });

  const redis = useRedisServer();
  it.skipIf(redis.skip)("redis://", async () => {
    await raceAt(redis.url(), await createRedisBackend(redis.url(), redis.url()));
  });

  const postgres = usePostgresServer();
  it.skipIf(postgres.skip)("postgres://", async () => {
    await raceAt(postgres.url(), await createPostgresBackend(postgres.url(), postgres.url()));
  });
});
