/**
 * `redis://host:port[/db]` and `rediss://`: values through `@keyv/redis`
 * (an optional peer dependency, imported only here and only when used),
 * listing with SCAN, leases with SET NX PX semantics in Lua.
 */
import type { Backend, RawRow } from "../backend.js";
import { createKeyv } from "./keyv.js";
import { LATE } from "./late.js";
import { importOptional } from "./optional.js";
import {
  listRedisMeta,
  migrateRedisMeta,
  prepareRedisMeta,
  redisDeleteIfWithMeta,
  redisDeleteWithMeta,
  redisMetaMissing,
  redisSetWithMeta,
} from "./redis-meta.js";
import { statsRedisMeta } from "./redis-meta-stats.js";

/** Every value key is `invocache:v:<key>`: one Redis db may be shared with other apps. */
export const REDIS_VALUE_PREFIX = "invocache:v:";
/** Every lease key is `invocache:lease:<key>`, apart from values. */
export const REDIS_LEASE_PREFIX = "invocache:lease:";

/** A dead or unreachable server must fail an operation in seconds, not hang it. */
const CONNECT_TIMEOUT_MS = 2000;
/** Values fetched per MGET while listing. */
const FETCH = 64;

// Both scripts first check the server's clock against the caller's deadline
// (ARGV[last], in server milliseconds): a command that waited in a frozen
// server's socket past the caller's timeout returns -1 and changes nothing.
const FENCE = `
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[#ARGV]) then
  return -1
end`;

// Take the lease when free or ours (then renew), atomically: Redis runs a
// script without interleaving other commands. Equivalent to SET NX PX plus
// "or already mine".
const ACQUIRE = `${FENCE}
local held = redis.call('GET', KEYS[1])
if held == false or held == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

// Delete only if still ours: a holder whose lease expired and was taken by
// someone else must not release the new holder's lease.
const RELEASE = `${FENCE}
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

// Fenced writes of values, for the same reason.
const SET = `${FENCE}
if ARGV[2] == '' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1`;
const DEL = `${FENCE}
return redis.call('DEL', KEYS[1])`;
// Delete only while the stored text is the one the caller read (ARGV[1]):
// one script, so no write can land between the compare and the DEL.
const DEL_IF = `${FENCE}
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/**
 * Connect lazily to the Redis server at `connectUrl` (credentials included).
 *
 * @example
 * const backend = await createRedisBackend("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0");
 */
export async function createRedisBackend(connectUrl: string, storeUrl: string): Promise<Backend> {
  const mod = await importOptional("@keyv/redis", storeUrl, () => import("@keyv/redis"));
  const client = mod.createClient({
    url: connectUrl,
    // No offline queue and no automatic reconnect: while the server is down
    // a command fails at once (StoreError) instead of waiting in memory for a
    // server that may never come back. The next operation reconnects.
    disableOfflineQueue: true,
    socket: { connectTimeout: CONNECT_TIMEOUT_MS, reconnectStrategy: false },
  });
  // node-redis emits 'error' on connection loss; with no listener Node would
  // crash the process. Failures reach callers as rejected commands instead.
  client.on("error", () => {});

  let connecting: Promise<unknown> | undefined;
  const ready = async (): Promise<void> => {
    if (client.isReady) return;
    // One connect at a time: node-redis throws "Socket already opened" on a
    // second concurrent connect(), and @keyv/redis would then destroy the
    // first one's socket.
    connecting ??= client.connect().finally(() => {
      connecting = undefined;
    });
    await connecting;
  };
  await ready();
  const offsetMs = await clockOffset(client);
  /** The caller's deadline on the server's clock. */
  const serverDeadline = (notAfter: number) => String(Math.floor(notAfter + offsetMs));

  // @keyv/redis swallows command errors (returns undefined from get) unless
  // its own throwOnErrors is set, separately from keyv's option.
  const adapter = new mod.default(client, { throwOnErrors: true, throwOnConnectError: true });
  const keyv = await createKeyv(adapter);
  await prepareRedisMeta(client);

  return {
    keyv,
    keyPrefix: REDIS_VALUE_PREFIX,
    // Reconnect before each operation when the connection dropped.
    ready,
    async *listRaw(prefix: string): AsyncIterable<RawRow> {
      const match = `${escapeGlob(REDIS_VALUE_PREFIX + prefix)}*`;
      // SCAN may return a key twice; never yield it twice.
      const seen = new Set<string>();
      let cursor = "0";
      do {
        const page = await client.scan(cursor, { MATCH: match, COUNT: 500 });
        cursor = String(page.cursor);
        const keys = page.keys.map(String).filter((k) => !seen.has(k));
        // Entries may be megabytes each: fetch values a few at a time.
        for (let start = 0; start < keys.length; start += FETCH) {
          const batch = keys.slice(start, start + FETCH);
          const values = await client.mGet(batch);
          for (const [i, key] of batch.entries()) {
            seen.add(key);
            const value = values[i];
            // null: the key expired or was deleted between SCAN and MGET.
            if (value !== null && value !== undefined) {
              yield [key.slice(REDIS_VALUE_PREFIX.length), String(value)];
            }
          }
        }
      } while (cursor !== "0");
    },
    // Stored metadata (redis-meta.ts): a hash and two sorted-set members
    // beside each value, written by the same script. Every write carries it.
    keepsMeta: () => true,
    metaMissing: () => redisMetaMissing(client),
    listMeta: (q) => listRedisMeta(client, q),
    statsMeta: (q, now, onProgress) => statsRedisMeta(client, q, now, undefined, onProgress),
    migrateMeta: (onProgress) => migrateRedisMeta(client, onProgress),
    async setRecord(key, record, ttlMs, notAfter, meta) {
      if (meta !== undefined) {
        await redisSetWithMeta(client, key, record, ttlMs, meta, serverDeadline(notAfter), LATE);
        return;
      }
      const done = await client.eval(SET, {
        keys: [key],
        arguments: [record, ttlMs === undefined ? "" : String(ttlMs), serverDeadline(notAfter)],
      });
      if (done === -1) throw new Error(LATE);
    },
    async deleteRecord(key, notAfter) {
      if (key.startsWith(REDIS_VALUE_PREFIX)) {
        return redisDeleteWithMeta(client, key, serverDeadline(notAfter), LATE);
      }
      const removed = await client.eval(DEL, {
        keys: [key],
        arguments: [serverDeadline(notAfter)],
      });
      if (removed === -1) throw new Error(LATE);
      return removed === 1;
    },
    async getRecord(key) {
      const text = await client.get(key);
      return text === null || text === undefined ? undefined : String(text);
    },
    async deleteRecordIf(key, record, notAfter) {
      if (key.startsWith(REDIS_VALUE_PREFIX)) {
        return redisDeleteIfWithMeta(client, key, record, serverDeadline(notAfter), LATE);
      }
      const removed = await client.eval(DEL_IF, {
        keys: [key],
        arguments: [record, serverDeadline(notAfter)],
      });
      if (removed === -1) throw new Error(LATE);
      return removed === 1;
    },
    async acquireLease(key, owner, ttlMs, notAfter) {
      const taken = await client.eval(ACQUIRE, {
        keys: [REDIS_LEASE_PREFIX + key],
        arguments: [owner, String(ttlMs), serverDeadline(notAfter)],
      });
      if (taken === -1) throw new Error(LATE);
      return taken === 1;
    },
    async releaseLease(key, owner, notAfter) {
      const released = await client.eval(RELEASE, {
        keys: [REDIS_LEASE_PREFIX + key],
        arguments: [owner, serverDeadline(notAfter)],
      });
      if (released === -1) throw new Error(LATE);
    },
    async close() {
      await connecting?.catch(() => {});
      if (client.isOpen) await client.close();
    },
    destroy() {
      if (client.isOpen) client.destroy();
    },
  };
}

/**
 * Server clock minus ours, in ms, measured once per connection. Deadlines
 * are compared on the server's clock, so skew between hosts does not matter.
 * The server read its clock between sending TIME and our reading the reply
 * (`after`); taking `after` errs early by at most one round trip, so a late request is always
 * refused (one within a round trip of its deadline may be refused too).
 */
async function clockOffset(client: { sendCommand(args: string[]): Promise<unknown> }) {
  const reply = (await client.sendCommand(["TIME"])) as [string, string];
  const after = Date.now();
  const server = Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
  return server - after;
}

/** Escape Redis glob metacharacters so a prefix is matched literally. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}
