/**
 * A team cache: two proxies opened at the same moment on one real
 * PostgreSQL store, many concurrent clients through both. One upstream call
 * per identity, every client gets the same answer for it, nothing lost.
 */
import { createRequire } from "node:module";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProxy, type InvocacheProxy } from "../../src/proxy/index.js";
import { entryPrefix, openStore } from "../../src/store/index.js";
import { startFakeProvider } from "../fake-provider/index.js";
import {
  type PostgresServer,
  postgresAvailable,
  startPostgresServer,
} from "../helpers/postgres-server.js";

let pg: PostgresServer | undefined;
beforeAll(async () => {
  if (postgresAvailable) pg = await startPostgresServer();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});

/** An empty database on the server, by name; its URL. pg is @keyv/postgres's own dependency. */
async function freshDatabase(serverUrl: string, name: string): Promise<string> {
  const require = createRequire(createRequire(import.meta.url).resolve("@keyv/postgres"));
  const pgModule = require("pg") as {
    Client: new (o: {
      connectionString: string;
    }) => {
      connect(): Promise<void>;
      query(sql: string): Promise<unknown>;
      end(): Promise<void>;
    };
  };
  const client = new pgModule.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name}`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return serverUrl.replace(/\/[^/]*$/, `/${name}`);
}

const ROUNDS = Number(process.env.INVOCACHE_TEAM_ROUNDS ?? 1);

describe.skipIf(!postgresAvailable)("two proxies on one Postgres store", () => {
  for (let round = 0; round < ROUNDS; round++) {
    it(`serves concurrent clients with one upstream call per identity, nothing lost (round ${round + 1})`, async () => {
      // A fresh database per round: each round races the first schema creation again.
      const url = await freshDatabase(pg!.url, `team_${round}_${process.pid}`);
      const namespace = "team";
      const provider = await startFakeProvider({ chunkDelayMs: 5 });
      // Opened at the same moment: the first store open of both races.
      const [a, b] = (await Promise.all(
        [0, 1].map(() =>
          createProxy({
            store: url,
            mode: "auto",
            env: {},
            namespace,
            upstreams: { openai: provider.url },
          }),
        ),
      )) as [InvocacheProxy, InvocacheProxy];
      try {
        const identities = 8;
        const clientsPerIdentity = 6;
        const jobs: Promise<[number, string]>[] = [];
        for (let c = 0; c < clientsPerIdentity; c++) {
          for (let i = 0; i < identities; i++) {
            const via: InvocacheProxy = (c + i) % 2 === 0 ? a : b;
            const client = new OpenAI({
              apiKey: "sk-team",
              baseURL: `${via.url}/openai/v1`,
              maxRetries: 0,
            });
            jobs.push(
              client.chat.completions
                .create({
                  model: "gpt-fake",
                  messages: [{ role: "user", content: `task ${i}` }],
                })
                .then((r) => [i, r.choices[0]?.message.content ?? ""]),
            );
          }
        }
        const answers = await Promise.all(jobs);
        expect(provider.calls).toBe(identities);
        const byIdentity = new Map<number, Set<string>>();
        for (const [i, text] of answers) {
          const set = byIdentity.get(i) ?? new Set();
          set.add(text);
          byIdentity.set(i, set);
        }
        for (const set of byIdentity.values()) expect(set.size).toBe(1);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await provider.close();
      }
      // Nothing lost: every identity is in the store once.
      const store = openStore(url);
      let stored = 0;
      for await (const _ of store.list(entryPrefix(namespace))) stored++;
      await store.close();
      expect(stored).toBe(8);
    }, 60_000);
  }
});
