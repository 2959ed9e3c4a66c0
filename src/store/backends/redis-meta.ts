/**
 * Stored metadata on Redis (src/store/meta.ts): beside each value
 * `invocache:v:<key>`, written by the same Lua script as the value (Redis
 * runs a script without interleaving other commands, and replicates and
 * persists it whole), so the value and its metadata never disagree:
 *
 * - `invocache:meta:v:<key>`: a small hash, `m` the metadata (`encodeMeta`),
 *   `len` the stored record's length in bytes, `at` its time-order member
 *   (entries and problems only); it expires with the value (same PX).
 * - `invocache:meta:keys`: a sorted set of every key (score 0, so members
 *   sort bytewise): key order and prefix ranges with ZRANGEBYLEX.
 * - `invocache:meta:at`: a sorted set of `recordedAt NUL key` (`""` for a
 *   problem, as on SQL): the time orders with ZRANGEBYLEX / ZREVRANGEBYLEX.
 * - `invocache:meta:layout`: present once every value has metadata (an
 *   empty store on open, or after `migrateRedisMeta`).
 *
 * Writes always carry metadata, even before a migration (it costs the same
 * script), so migrating only fills what older writers left. A value an
 * older invocache rewrote without metadata keeps its old hash: a listing
 * compares the hash's `len` with the value's STRLEN (O(1)) and reports the
 * store as needing `invocache migrate-store` instead of serving stale
 * metadata. (An older writer's rewrite of exactly the same length, or a key
 * it created, stays unseen until the next migration: docs/cli.md, `invocache migrate-store`.)
 *
 * The scripts touch keys they compute (one key per value) and are meant for
 * a single Redis server or a primary with replicas, not Redis Cluster (as
 * the rest of the Redis backend).
 */
import { deserializeRecord } from "../json.js";
import {
  decodeMeta,
  encodeMeta,
  type MetaQuery,
  metaMatches,
  type StoredMeta,
  storedMetaOf,
} from "../meta.js";

/** What these functions need of a node-redis client. */
export interface RedisMetaClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  scan(
    cursor: string,
    options: { MATCH: string; COUNT: number },
  ): Promise<{ cursor: unknown; keys: unknown[] }>;
  mGet(keys: string[]): Promise<Array<unknown>>;
  exists(key: string): Promise<number>;
  set(key: string, value: string): Promise<unknown>;
}

const VALUE_PREFIX = "invocache:v:";
/** The per-value metadata hash: `invocache:meta:v:<key>`. */
export const REDIS_META_PREFIX = "invocache:meta:v:";
export const REDIS_META_KEYS = "invocache:meta:keys";
export const REDIS_META_AT = "invocache:meta:at";
export const REDIS_META_LAYOUT = "invocache:meta:layout";
/** Members of the time set: recordedAt, NUL, key (NUL sorts before every character of a time). */
const SEP = "\u0000";
const META_PAGE = 500;
const SCAN_COUNT = 500;
const MIGRATE_FETCH = 64;

// The server's clock against the caller's deadline (redis.ts's FENCE).
const FENCE = `
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[#ARGV]) then
  return -1
end`;

// Drop the metadata of KEYS[1]'s logical key ARGV[1]: its hash and both set members.
const DROP_META = `
local function drop_meta(key)
  local hash = '${REDIS_META_PREFIX}' .. key
  local at = redis.call('HGET', hash, 'at')
  if at then redis.call('ZREM', '${REDIS_META_AT}', at .. string.char(0) .. key) end
  redis.call('DEL', hash)
  redis.call('ZREM', '${REDIS_META_KEYS}', key)
end`;

// Write the metadata of `key` for a record of `len` bytes: ARGV m, hasAt ('1'/'0'), at, ttl ('' none).
const PUT_META = `${DROP_META}
local function put_meta(key, len, m, has_at, at, ttl)
  drop_meta(key)
  local hash = '${REDIS_META_PREFIX}' .. key
  redis.call('HSET', hash, 'm', m, 'len', len)
  if has_at == '1' then
    redis.call('HSET', hash, 'at', at)
    redis.call('ZADD', '${REDIS_META_AT}', 0, at .. string.char(0) .. key)
  end
  if ttl ~= '' then redis.call('PEXPIRE', hash, ttl) end
  redis.call('ZADD', '${REDIS_META_KEYS}', 0, key)
end`;

/** KEYS[1] value key; ARGV record, ttl, key, m, hasAt, at, deadline. */
const SET_WITH_META = `${FENCE}${PUT_META}
if ARGV[2] == '' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
put_meta(ARGV[3], #ARGV[1], ARGV[4], ARGV[5], ARGV[6], ARGV[2])
return 1`;

/** KEYS[1] value key; ARGV key, deadline. */
const DEL_WITH_META = `${FENCE}${DROP_META}
local n = redis.call('DEL', KEYS[1])
drop_meta(ARGV[1])
return n`;

/** KEYS[1] value key; ARGV record read, key, deadline: delete only while unchanged. */
const DEL_IF_WITH_META = `${FENCE}${DROP_META}
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  drop_meta(ARGV[2])
  return 1
end
return 0`;

/**
 * KEYS[1] value key; ARGV record read, key, m, hasAt, at: fill the metadata
 * while the value is still the one read and its hash is missing or stale.
 */
const FILL_META = `${PUT_META}
local text = redis.call('GET', KEYS[1])
if text ~= ARGV[1] then return 0 end
local len = redis.call('HGET', '${REDIS_META_PREFIX}' .. ARGV[2], 'len')
if len and tonumber(len) == #text then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
put_meta(ARGV[2], #text, ARGV[3], ARGV[4], ARGV[5], ttl > 0 and tostring(ttl) or '')
return 1`;

/**
 * KEYS[1] the set; ARGV min, max, count, rev ('1'/'0'), timed ('1': members
 * are `at NUL key`). Each member with its hash's m and len and its value's
 * STRLEN (0: the value is gone), in one step.
 */
const PAGE = `
local members
if ARGV[4] == '1' then
  members = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[2], ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
else
  members = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
end
local out = {}
for _, member in ipairs(members) do
  local key = member
  if ARGV[5] == '1' then key = string.sub(member, string.find(member, string.char(0), 1, true) + 1) end
  local h = redis.call('HMGET', '${REDIS_META_PREFIX}' .. key, 'm', 'len')
  out[#out + 1] = member
  out[#out + 1] = h[1]
  out[#out + 1] = h[2]
  out[#out + 1] = redis.call('STRLEN', '${VALUE_PREFIX}' .. key)
end
return out`;

/** Thrown (as a plain Error, wrapped by the store) when a script ran past the caller's deadline. */
function checkLate(reply: unknown, late: string): void {
  if (reply === -1) throw new Error(late);
}

/** The script arguments that describe `meta`: m, hasAt, at (time order as sqlite-meta.ts's m_at). */
function metaArgs(meta: StoredMeta): [string, string, string] {
  const at = meta.kind === "entry" ? meta.recordedAt! : meta.kind === "problem" ? "" : undefined;
  return [encodeMeta(meta), at === undefined ? "0" : "1", at ?? ""];
}

/**
 * Write keyv's `record` under the prefixed `valueKey` and its `meta`, in one
 * fenced script (`deadline` on the server's clock; `late` the error text).
 */
export async function redisSetWithMeta(
  client: RedisMetaClient,
  valueKey: string,
  record: string,
  ttlMs: number | undefined,
  meta: StoredMeta,
  deadline: string,
  late: string,
): Promise<void> {
  const reply = await client.eval(SET_WITH_META, {
    keys: [valueKey],
    arguments: [
      record,
      ttlMs === undefined ? "" : String(ttlMs),
      valueKey.slice(VALUE_PREFIX.length),
      ...metaArgs(meta),
      deadline,
    ],
  });
  checkLate(reply, late);
}

/** Delete the prefixed `valueKey` and its metadata, fenced; true when the value was there. */
export async function redisDeleteWithMeta(
  client: RedisMetaClient,
  valueKey: string,
  deadline: string,
  late: string,
): Promise<boolean> {
  const reply = await client.eval(DEL_WITH_META, {
    keys: [valueKey],
    arguments: [valueKey.slice(VALUE_PREFIX.length), deadline],
  });
  checkLate(reply, late);
  return reply === 1;
}

/** Delete the prefixed `valueKey` and its metadata only while its record is `record`. */
export async function redisDeleteIfWithMeta(
  client: RedisMetaClient,
  valueKey: string,
  record: string,
  deadline: string,
  late: string,
): Promise<boolean> {
  const reply = await client.eval(DEL_IF_WITH_META, {
    keys: [valueKey],
    arguments: [record, valueKey.slice(VALUE_PREFIX.length), deadline],
  });
  checkLate(reply, late);
  return reply === 1;
}

/**
 * The first value key under our prefix for which `test` holds, scanning the
 * keyspace; `null` when `maxPages` SCAN pages ran out before the end.
 */
async function findValueKey(
  client: RedisMetaClient,
  test: (keys: string[]) => Promise<string | undefined>,
  maxPages = Number.POSITIVE_INFINITY,
): Promise<string | undefined | null> {
  let cursor = "0";
  let pages = 0;
  do {
    if (pages++ >= maxPages) return null;
    const page = await client.scan(cursor, { MATCH: `${VALUE_PREFIX}*`, COUNT: SCAN_COUNT });
    cursor = String(page.cursor);
    const found = await test(page.keys.map(String));
    if (found !== undefined) return found;
  } while (cursor !== "0");
  return undefined;
}

/**
 * Why `listMeta` cannot answer, or undefined. Without the layout marker the
 * keyspace is scanned for a value without metadata: an older store stops at
 * its first value; a store whose every value has metadata (an empty one, or
 * one restarted without persistence and written since) gains the marker.
 */
export async function redisMetaMissing(client: RedisMetaClient): Promise<string | undefined> {
  if ((await client.exists(REDIS_META_LAYOUT)) === 1) return undefined;
  const bare = await findValueKey(client, async (keys) => {
    for (const key of keys) {
      if ((await client.exists(REDIS_META_PREFIX + key.slice(VALUE_PREFIX.length))) === 0) {
        return key;
      }
    }
    return undefined;
  });
  if (typeof bare === "string") {
    return `it was written before stored metadata, e.g. ${JSON.stringify(bare.slice(VALUE_PREFIX.length))}`;
  }
  await client.set(REDIS_META_LAYOUT, "1");
  return undefined;
}

/** Compare two strings bytewise (UTF-8), as Redis orders set members. */
function bytewise(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** The stored metadata matching `q`, a page at a time (expired rows included, gone ones not). */
export async function* listRedisMeta(
  client: RedisMetaClient,
  q: MetaQuery,
): AsyncIterable<StoredMeta> {
  const prefix = q.prefix ?? "";
  const order = q.order ?? "key";
  const timed = order !== "key";
  const desc = order === "recordedAtDesc";
  let left = q.limit ?? Number.POSITIVE_INFINITY;
  let cursor =
    q.after === undefined
      ? undefined
      : timed
        ? `${q.after.recordedAt ?? ""}${SEP}${q.after.key}`
        : q.after.key;
  while (left > 0) {
    let min = "-";
    let max = "+";
    if (!timed) {
      if (cursor !== undefined && bytewise(cursor, prefix) >= 0) min = `(${cursor}`;
      else if (prefix !== "") min = `[${prefix}`;
    } else if (desc) {
      if (cursor !== undefined) max = `(${cursor}`;
      else if (q.recordedBefore !== undefined) max = `(${q.recordedBefore}`;
    } else {
      if (cursor !== undefined) min = `(${cursor}`;
      if (q.recordedBefore !== undefined) max = `(${q.recordedBefore}`;
    }
    const reply = (await client.eval(PAGE, {
      keys: [timed ? REDIS_META_AT : REDIS_META_KEYS],
      arguments: [min, max, String(META_PAGE), desc ? "1" : "0", timed ? "1" : "0"],
    })) as Array<string | number | null>;
    for (let i = 0; i < reply.length; i += 4) {
      const member = String(reply[i]);
      const key = timed ? member.slice(member.indexOf(SEP) + 1) : member;
      // Key order: past the prefix's range, nothing further matches.
      if (!timed && !key.startsWith(prefix)) return;
      const stored = reply[i + 1];
      const len = reply[i + 2];
      const strlen = Number(reply[i + 3]);
      // The value expired (its hash expires with it) or was deleted by keyv's own expiry.
      if (strlen === 0) continue;
      const meta =
        stored === null || stored === undefined || Number(len) !== strlen
          ? undefined
          : decodeMeta(key, String(stored));
      if (meta === undefined) {
        throw new Error(
          `the metadata of ${key} is missing or out of date (written meanwhile by an older invocache?); run \`invocache migrate-store\``,
        );
      }
      if (!metaMatches(meta, q)) continue;
      yield meta;
      left--;
      if (left === 0) return;
    }
    if (reply.length < META_PAGE * 4) return;
    cursor = String(reply[reply.length - 4]);
  }
}

/**
 * Give every value that lacks metadata (or whose metadata an older writer
 * made stale) its metadata, a batch at a time, safe beside other writers:
 * each fill is a script that checks the value is still the one read. Then
 * mark the layout. Resolves how many values it filled.
 */
export async function migrateRedisMeta(
  client: RedisMetaClient,
  onProgress?: (done: number) => void,
): Promise<number> {
  let filled = 0;
  await findValueKey(client, async (keys) => {
    for (let start = 0; start < keys.length; start += MIGRATE_FETCH) {
      const batch = keys.slice(start, start + MIGRATE_FETCH);
      const values = await client.mGet(batch);
      for (const [i, valueKey] of batch.entries()) {
        const text = values[i];
        if (text === null || text === undefined) continue;
        const record = String(text);
        const key = valueKey.slice(VALUE_PREFIX.length);
        let meta: StoredMeta;
        try {
          const parsed = deserializeRecord(record);
          meta = storedMetaOf(
            key,
            parsed.value,
            typeof parsed.expires === "number" ? parsed.expires : undefined,
          );
        } catch (error) {
          meta = { key, kind: "problem", bytes: Buffer.byteLength(record), problem: String(error) };
        }
        const done = await client.eval(FILL_META, {
          keys: [valueKey],
          arguments: [record, key, ...metaArgs(meta)],
        });
        if (done === 1) filled++;
      }
    }
    onProgress?.(filled);
    return undefined;
  });
  await client.set(REDIS_META_LAYOUT, "1");
  return filled;
}

/** SCAN pages an open looks through at most (a db shared with another app may hold millions of keys). */
const OPEN_SCAN_PAGES = 20;

/**
 * On open: an empty store gets the layout marker at once (nothing to
 * migrate); a store with values waits for `migrateRedisMeta`. A keyspace too
 * big to look through on open is left unmarked: the first listing checks.
 */
export async function prepareRedisMeta(client: RedisMetaClient): Promise<void> {
  if ((await client.exists(REDIS_META_LAYOUT)) === 1) return;
  const any = await findValueKey(client, async (keys) => keys[0], OPEN_SCAN_PAGES);
  if (any === undefined) await client.set(REDIS_META_LAYOUT, "1");
}
