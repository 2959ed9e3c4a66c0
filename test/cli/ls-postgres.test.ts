/**
 * `invocache ls --store postgres://…`: PostgreSQL sorts by recording time
 * itself (`Store.listByRecordedAt`), so ls prints rows in order as they come.
 * Real PostgreSQL on 127.0.0.1; the command runs in process.
 */
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run.js";
import { manifestIdentity } from "../../src/identity/identity.js";
import { invocationManifest } from "../../src/identity/manifest.js";
import { INVOCACHE_VERSION, NORMALIZATION_VERSION } from "../../src/index.js";
import type { JsonValue } from "../../src/json/index.js";
import { entryKey, openStore } from "../../src/store/index.js";
import { usePostgresServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";
import { fakeIo } from "./in-process.js";

const postgres = usePostgresServer();

/** An entry for `prompt` recorded at `recordedAt`, under namespace `ns`. */
function entryAt(
  ns: string,
  prompt: string,
  recordedAt: string,
): { key: string; entry: JsonValue } {
  const manifest = invocationManifest(
    { role: "r", model: "gpt-4o", prompt },
    { homeDir: "/home/u", tmpDirs: ["/tmp"] },
  );
  const id = manifestIdentity(manifest);
  const entry = {
    v: 1,
    id,
    manifest,
    response: { text: `answer to ${prompt}` },
    meta: {
      recordedAt,
      durationMs: 5,
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  } as unknown as JsonValue;
  return { key: entryKey(ns, id, 0), entry };
}

describe.skipIf(postgres.skip)("invocache ls --store postgres://", () => {
  it("lists entries by recording time, then key, sorted by the database", async () => {
    const ns = `ls${randomBytes(4).toString("hex")}`;
    const store = openStore(postgres.url());
    expect(store.listByRecordedAt).toBeTypeOf("function");
    const written: Array<{ key: string; recordedAt: string }> = [];
    for (let i = 0; i < 40; i++) {
      // Ten distinct times, written in an order unlike theirs: ties break by key.
      const recordedAt = new Date(Date.UTC(2026, 0, 1 + ((i * 7) % 10))).toISOString();
      const { key, entry } = entryAt(ns, `ls ${ns} ${i}`, recordedAt);
      await store.set(key, entry);
      written.push({ key, recordedAt });
    }
    await store.close();
    const io = fakeIo(tempDir("ls-postgres"));
    const code = await runCli(["ls", "--store", postgres.url(), "--namespace", ns, "--json"], io);
    expect(code, io.stderr()).toBe(0);
    const { entries } = JSON.parse(io.stdout()) as {
      entries: Array<{ key: string; recordedAt: string }>;
    };
    const expected = [...written].sort((a, b) =>
      a.recordedAt !== b.recordedAt
        ? a.recordedAt < b.recordedAt
          ? -1
          : 1
        : Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)),
    );
    expect(entries.map((e) => ({ key: e.key, recordedAt: e.recordedAt }))).toStrictEqual(expected);
  });

  it("sorts in memory, as before, where the server refuses the sort's temp table (a role without TEMPORARY)", async () => {
    // pg as @keyv/postgres resolves it (not a dependency of ours).
    const require = createRequire(createRequire(import.meta.url).resolve("@keyv/postgres"));
    const { Client } = require("pg") as {
      Client: new (
        c: object,
      ) => {
        connect(): Promise<void>;
        query(q: string): Promise<unknown>;
        end(): Promise<void>;
      };
    };
    const admin = new Client({ connectionString: postgres.url() });
    await admin.connect();
    const name = `lsnt${randomBytes(3).toString("hex")}`;
    try {
      await admin.query(`CREATE ROLE ${name} LOGIN`);
      await admin.query(`CREATE DATABASE ${name} OWNER ${name}`);
      await admin.query(`REVOKE TEMPORARY ON DATABASE ${name} FROM PUBLIC, ${name}`);
    } finally {
      await admin.end();
    }
    const url = `postgres://${name}@127.0.0.1:${new URL(postgres.url()).port}/${name}`;
    const store = openStore(url);
    const times = [
      "2026-01-03T00:00:00.000Z",
      "2026-01-01T00:00:00.000Z",
      "2026-01-02T00:00:00.000Z",
    ];
    const keys: string[] = [];
    for (const [i, recordedAt] of times.entries()) {
      const { key, entry } = entryAt("ns", `refused ${i}`, recordedAt);
      keys.push(key);
      await store.set(key, entry);
    }
    await store.close();
    const io = fakeIo(tempDir("ls-postgres-refused"));
    const code = await runCli(["ls", "--store", url, "--json"], io);
    expect(code, io.stderr()).toBe(0);
    const { entries } = JSON.parse(io.stdout()) as { entries: Array<{ key: string }> };
    expect(entries.map((e) => e.key)).toStrictEqual([keys[1], keys[2], keys[0]]);
  });
});
