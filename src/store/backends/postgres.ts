/**
 * `postgres://…` / `postgresql://…`: values through `@keyv/postgres` (an
 * optional peer dependency, imported only here), listing and leases as SQL
 * on the same pool.
 */
import { createRequire } from "node:module";
import type { Backend, RawRow } from "../backend.js";
import { MAX_KEY_LENGTH } from "../keys.js";
import { SORT_REFUSED } from "../sort-refused.js";
import { keysetPages } from "./keyset.js";
import { prepareKeyv } from "./keyv.js";
import { LATE } from "./late.js";
import { importOptional } from "./optional.js";
import {
  listPgMeta,
  migratePgMeta,
  type PgMetaLayout,
  pgFencedSetMeta,
  pgMetaMissing,
  pgMetaParams,
  preparePgMeta,
} from "./postgres-meta.js";
import { PG_DIALECT, PG_STATS_PAGE, statsSqlMeta } from "./sql-meta-stats.js";

/** Table of values (keyv's `key`/`value` layout), in schema `public`. */
export const PG_VALUES_TABLE = "invocache_entries";
/** Table of leases: `key`, `owner`, `expires_at timestamptz`, in schema `public`. */
export const PG_LEASES_TABLE = "invocache_leases";

const CONNECT_TIMEOUT_MS = 3000;
/** Rows per query while listing: entries may be megabytes each. */
const PAGE = 64;
/** Rows of the store read per step while building the order (one statement each). */
const ORDER_CHUNK = 5000;

/** The part of `pg` we use (pg ships no types; @types/pg is not a dependency). */
interface PgPool {
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): unknown;
}
/** One connection of the pool, checked out (a temp table lives on one connection). */
interface PgClient {
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  /** Back to the pool; with an error, the connection is closed instead. */
  release(error?: Error | boolean): void;
}
interface PgModule {
  Pool: new (config: Record<string, unknown>) => PgPool;
}
type Query = (sql: string, values?: unknown[]) => Promise<Array<Record<string, unknown>>>;

/**
 * Connect lazily to the Postgres database at `connectUrl` (credentials included).
 *
 * @example
 * const backend = await createPostgresBackend("postgres://u:p@127.0.0.1/db", "postgres://127.0.0.1/db");
 */
export async function createPostgresBackend(
  connectUrl: string,
  storeUrl: string,
): Promise<Backend> {
  const mod = await importOptional("@keyv/postgres", storeUrl, () => import("@keyv/postgres"));
  // pg is @keyv/postgres's own dependency, not ours: resolve it from there so
  // it is found under any package manager layout (pnpm does not hoist it).
  const fromAdapter = createRequire(createRequire(import.meta.url).resolve("@keyv/postgres"));
  const pg = fromAdapter("pg") as PgModule;

  const pools = new WeakMap<object, PgPool>();
  /**
   * @keyv/postgres keeps ONE pool in a module-level variable, replaced when
   * another URL is opened, and its disconnect() ends whichever pool is current:
   * closing one store would break another and leak its own pool. Each store
   * gets a private pool instead; connect() is the adapter's hook for it.
   */
  class PrivatePoolPostgres extends mod.KeyvPostgres {
    override async connect() {
      const pool = new pg.Pool({
        connectionString: this.opts.uri,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        application_name: "invocache",
        max: 4,
        // A process that forgets close() can still exit.
        allowExitOnIdle: true,
      });
      // An idle connection dropped by the server emits 'error' on the pool;
      // unhandled, Node would crash. The next query reports the failure.
      pool.on("error", () => {});
      pools.set(this, pool);
      return async (sql: string, values?: unknown) => {
        // Schema changes, ours and @keyv/postgres's own CREATE TABLE, run one
        // at a time across every process on the database: concurrent
        // CREATE TABLE IF NOT EXISTS race in the catalog (42710 "type …
        // already exists", 23505), and a store opened beside another then
        // failed to open. See serializedDdl.
        const text = values === undefined && /^\s*CREATE\s/i.test(sql) ? serializedDdl(sql) : sql;
        const result = await pool.query(text, values as unknown[] | undefined);
        // A multi-statement query answers one result per statement.
        return Array.isArray(result) ? (result.at(-1)?.rows ?? []) : result.rows;
      };
    }

    override async disconnect() {
      await pools.get(this)?.end();
    }
  }

  const adapter = new PrivatePoolPostgres({
    uri: connectUrl,
    table: PG_VALUES_TABLE,
    keySize: MAX_KEY_LENGTH,
  });
  const query = adapter.query as Query;
  const keyv = await prepareKeyv(adapter, () => prepare(query));
  const offsetMs = await clockOffset(query);
  let layout: PgMetaLayout;
  try {
    layout = await preparePgMeta(query);
  } catch (error) {
    await adapter.disconnect().catch(() => {});
    throw error;
  }
  /** The caller's deadline on the server's clock, in epoch ms. */
  const serverDeadline = (notAfter: number) => notAfter + offsetMs;
  /** Names the temp tables of listings by recording time (one per checked-out connection). */
  let orders = 0;

  return {
    keyv,
    keyPrefix: "",
    async *listRaw(prefix: string): AsyncIterable<RawRow> {
      // left()/char_length() match the prefix literally (LIKE would treat % and
      // _ as wildcards). COLLATE "C" gives a byte order that `>` and ORDER BY
      // agree on, whatever the database's collation, for keyset pagination.
      yield* keysetPages(
        "",
        (after) =>
          query(
            `SELECT key, value FROM public.${PG_VALUES_TABLE}
             WHERE key COLLATE "C" > $1 AND left(key, char_length($2)) = $2
             ORDER BY key COLLATE "C" LIMIT $3`,
            [after, prefix, PAGE],
          ),
        (last) => String(last.key),
        PAGE,
      );
    },
    async *listRawByRecordedAt(prefix: string): AsyncIterable<RawRow | null> {
      const pool = pools.get(adapter);
      if (pool === undefined) throw new Error("the Postgres pool is not open");
      // As on SQLite (sqlite-readonly.ts): the order is built in a TEMP table
      // of (recordedAt, key), on one connection held for the listing, in
      // chunks of keys so no statement runs long; then paged out by keyset
      // on its primary key, joined with the values 64 rows at a time. The
      // server sorts (its own memory and temp files); ours holds one page.
      // Rows written after the build are not seen; rows deleted meanwhile
      // drop out of the join, and values are read as of each page.
      const client = await pool.connect();
      const order = `invocache_order_${++orders}`;
      let broken: Error | undefined;
      try {
        // COLLATE "C": byte order for the sort, whatever the database's collation.
        await client
          .query(
            `CREATE TEMP TABLE ${order} (at TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL,
               PRIMARY KEY (at, key))`,
          )
          .catch((error: unknown) => {
            throw Object.assign(
              new Error(
                `the server refused the temp table that sorts entries by recording time (${(error as Error).message}): a hot standby cannot create one, and a role needs the TEMPORARY privilege; list from the primary, or grant TEMPORARY on the database`,
                { cause: error },
              ),
              { code: SORT_REFUSED },
            );
          });
        let safe = false;
        let after = "";
        while (true) {
          // The chunk's last key from the primary key index alone (the
          // database's collation, which `>` and ORDER BY agree on), then its rows.
          const { rows } = await client.query(
            `SELECT max(key) AS last, count(*)::int AS n FROM (
               SELECT key FROM public.${PG_VALUES_TABLE}
               WHERE key > $1 AND left(key, char_length($2)) = $2
               ORDER BY key LIMIT $3) chunk`,
            [after, prefix, ORDER_CHUNK],
          );
          const n = Number(rows[0]?.n ?? 0);
          if (n === 0) break;
          const last = String(rows[0]!.last);
          const range = [after, last, prefix];
          const inRange = `key > $1 AND key <= $2 AND left(key, char_length($3)) = $3`;
          try {
            // The fast path: one cast per row, in the server.
            await client.query(
              `INSERT INTO ${order} (at, key)
               SELECT coalesce(${RECORDED_AT}, ''), key FROM public.${PG_VALUES_TABLE}
               WHERE ${inRange}`,
              range,
            );
          } catch (error) {
            // A value Postgres cannot read as JSON failed the statement: a lone
            // surrogate escape (valid for us, refused by Postgres), or text
            // that is not JSON. The chunk again, through a function that gives
            // NULL for those; they alone are then read here.
            if (!isBadText(error)) throw error;
            if (!safe) await client.query(SAFE_RECORDED_AT_FUNCTION);
            safe = true;
            await client.query(
              `INSERT INTO ${order} (at, key)
               SELECT at, key FROM (
                 SELECT ${SAFE_RECORDED_AT} AS at, key FROM public.${PG_VALUES_TABLE}
                 WHERE ${inRange}) rows
               WHERE at IS NOT NULL`,
              range,
            );
            const { rows: unread } = await client.query(
              `SELECT t.key AS key FROM public.${PG_VALUES_TABLE} t
               WHERE t.key > $1 AND t.key <= $2 AND left(t.key, char_length($3)) = $3
               AND NOT EXISTS (
                 SELECT 1 FROM ${order} o WHERE o.key = (t.key COLLATE "C"))`,
              range,
            );
            for (const { key } of unread) {
              const { rows: one } = await client.query(
                `SELECT value FROM public.${PG_VALUES_TABLE} WHERE key = $1`,
                [key],
              );
              if (one.length === 0) continue; // deleted meanwhile
              await client.query(`INSERT INTO ${order} (at, key) VALUES ($1, $2)`, [
                recordedAtOf(String(one[0]!.value)),
                key,
              ]);
            }
          }
          if (n < ORDER_CHUNK) break;
          after = last;
          yield null;
        }
        yield* keysetPages(
          ["", ""],
          async ([at, key]) =>
            (
              await client.query(
                `SELECT o.at AS at, o.key AS key, t.value AS value
                 FROM ${order} o JOIN public.${PG_VALUES_TABLE} t ON t.key = (o.key COLLATE "default")
                 WHERE (o.at, o.key) > ($1, $2) ORDER BY o.at, o.key LIMIT $3`,
                [at, key, PAGE],
              )
            ).rows,
          (last) => [String(last.at), String(last.key)],
          PAGE,
        );
      } catch (error) {
        broken = error instanceof Error ? error : new Error(String(error));
        throw error;
      } finally {
        try {
          await client.query(`DROP TABLE IF EXISTS ${order}`);
        } catch (error) {
          broken ??= error instanceof Error ? error : new Error(String(error));
        }
        // A connection that failed is closed, not handed to the next caller.
        client.release(broken);
      }
    },
    // Stored metadata (postgres-meta.ts): columns written by the same statement as the value.
    keepsMeta: () => layout !== "none",
    metaMissing: () => pgMetaMissing(query),
    listMeta: (q) => listPgMeta(query, q),
    statsMeta: (q, now, onProgress) =>
      statsSqlMeta(query, PG_DIALECT, q, now, PG_STATS_PAGE, onProgress),
    async migrateMeta(onProgress) {
      const filled = await migratePgMeta(query, onProgress);
      layout = "cols";
      return filled;
    },
    async setRecord(key, record, _ttlMs, notAfter, meta) {
      if (meta !== undefined) {
        const [row] = await query(pgFencedSetMeta(layout), [
          key,
          record,
          serverDeadline(notAfter),
          ...pgMetaParams(meta, layout),
        ]);
        if (row?.ok !== true) throw new Error(LATE);
        return;
      }
      // The expiry lives in the record (keyv's envelope), as @keyv/postgres keeps it.
      const [row] = await query(
        `WITH fence AS (SELECT clock_timestamp() <= to_timestamp($3::float8 / 1000) AS ok),
         up AS (
           INSERT INTO public.${PG_VALUES_TABLE} (key, value)
           SELECT $1, $2 FROM fence WHERE fence.ok
           ON CONFLICT (key) DO UPDATE SET value = excluded.value)
         SELECT (SELECT ok FROM fence) AS ok`,
        [key, record, serverDeadline(notAfter)],
      );
      if (row?.ok !== true) throw new Error(LATE);
    },
    async deleteRecord(key, notAfter) {
      const [row] = await query(
        `WITH fence AS (SELECT clock_timestamp() <= to_timestamp($2::float8 / 1000) AS ok),
         gone AS (
           DELETE FROM public.${PG_VALUES_TABLE} WHERE key = $1 AND (SELECT ok FROM fence)
           RETURNING 1)
         SELECT (SELECT ok FROM fence) AS ok, (SELECT count(*) FROM gone)::int AS removed`,
        [key, serverDeadline(notAfter)],
      );
      if (row?.ok !== true) throw new Error(LATE);
      return Number(row.removed) > 0;
    },
    async getRecord(key) {
      const [row] = await query(`SELECT value FROM public.${PG_VALUES_TABLE} WHERE key = $1`, [
        key,
      ]);
      return row === undefined ? undefined : String(row.value);
    },
    async deleteRecordIf(key, record, notAfter) {
      // One statement: the row is locked by the DELETE and the value compared
      // on it, so a write committed in between is never removed.
      const [row] = await query(
        `WITH fence AS (SELECT clock_timestamp() <= to_timestamp($3::float8 / 1000) AS ok),
         gone AS (
           DELETE FROM public.${PG_VALUES_TABLE}
           WHERE key = $1 AND value = $2 AND (SELECT ok FROM fence)
           RETURNING 1)
         SELECT (SELECT ok FROM fence) AS ok, (SELECT count(*) FROM gone)::int AS removed`,
        [key, record, serverDeadline(notAfter)],
      );
      if (row?.ok !== true) throw new Error(LATE);
      return Number(row.removed) > 0;
    },
    async acquireLease(key, owner, ttlMs, notAfter) {
      // INSERT … ON CONFLICT DO UPDATE is atomic in Postgres: two racing
      // callers cannot both see the lease free. Time is the server's clock,
      // so clients on different hosts agree on expiry. The fence: a statement
      // that runs after the caller's deadline (it sat in a frozen server)
      // inserts nothing and says so.
      const [row] = await query(
        `WITH fence AS (SELECT clock_timestamp() <= to_timestamp($4::float8 / 1000) AS ok),
         taken AS (
           INSERT INTO public.${PG_LEASES_TABLE} AS l (key, owner, expires_at)
           SELECT $1, $2, clock_timestamp() + $3::bigint * interval '1 millisecond'
           FROM fence WHERE fence.ok
           ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
           WHERE l.expires_at <= clock_timestamp() OR l.owner = excluded.owner
           RETURNING owner)
         SELECT (SELECT ok FROM fence) AS ok, (SELECT count(*) FROM taken)::int AS taken`,
        [key, owner, ttlMs, serverDeadline(notAfter)],
      );
      if (row?.ok !== true) throw new Error(LATE);
      return row.taken === 1;
    },
    async releaseLease(key, owner, notAfter) {
      const [row] = await query(
        `WITH fence AS (SELECT clock_timestamp() <= to_timestamp($3::float8 / 1000) AS ok),
         gone AS (
           DELETE FROM public.${PG_LEASES_TABLE}
           WHERE key = $1 AND owner = $2 AND (SELECT ok FROM fence))
         SELECT (SELECT ok FROM fence) AS ok`,
        [key, owner, serverDeadline(notAfter)],
      );
      if (row?.ok !== true) throw new Error(LATE);
    },
    async close() {
      await adapter.disconnect();
    },
  };
}

/** An entry's `meta.recordedAt` from keyv's record text (`json`, not `jsonb`: it keeps lone-surrogate escapes). */
const RECORDED_AT = `value::json -> 'value' -> 'meta' ->> 'recordedAt'`;
/** The same through {@link SAFE_RECORDED_AT_FUNCTION}: "" when absent, NULL for a value Postgres cannot read. */
const SAFE_RECORDED_AT = "pg_temp.invocache_recorded_at(value)";
/**
 * A function of the connection's own temp schema (gone with the session;
 * any server version, where `pg_input_is_valid` needs 16): the exception
 * block costs a subtransaction per row, so it is used only for a chunk
 * whose fast cast failed.
 */
const SAFE_RECORDED_AT_FUNCTION = `CREATE OR REPLACE FUNCTION pg_temp.invocache_recorded_at(t text)
  RETURNS text LANGUAGE plpgsql IMMUTABLE AS $fn$
  BEGIN
    RETURN coalesce(t::json -> 'value' -> 'meta' ->> 'recordedAt', '');
  EXCEPTION WHEN others THEN
    RETURN NULL;
  END $fn$`;

/**
 * What {@link RECORDED_AT} gives, read in JS (for text Postgres refused):
 * the string, other JSON as its text (`->>`), "" when absent, null or not JSON.
 */
function recordedAtOf(text: string): string {
  let at: unknown;
  try {
    at = (JSON.parse(text) as { value?: { meta?: { recordedAt?: unknown } } } | null)?.value?.meta
      ?.recordedAt;
  } catch {
    return "";
  }
  if (at === undefined || at === null) return "";
  return typeof at === "string" ? at : JSON.stringify(at);
}

/** Postgres failed to read text as JSON (22P02 invalid_text_representation, 22xxx data exceptions). */
function isBadText(error: unknown): boolean {
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : "";
  return typeof code === "string" && code.startsWith("22");
}

/** Server clock minus ours, in ms, erring early by at most a round trip; see the Redis backend. */
async function clockOffset(query: Query): Promise<number> {
  const [row] = await query("SELECT extract(epoch FROM clock_timestamp()) * 1000 AS now");
  const after = Date.now();
  return Number(row?.now) - after;
}

/** The advisory lock key all invocache schema changes take (an arbitrary constant, "invocach" in ASCII). */
const SCHEMA_LOCK = "7597687536469043048";

/**
 * `sql` run under a transaction-scoped advisory lock: one simple-protocol
 * query string is one implicit transaction, so the lock is held until the
 * DDL is committed. A second process waits, then finds the table there and
 * its IF NOT EXISTS does nothing, instead of racing the first in the catalog.
 */
function serializedDdl(sql: string): string {
  return `SELECT pg_advisory_xact_lock(${SCHEMA_LOCK}); ${sql}`;
}

/**
 * Create both tables. @keyv/postgres also creates the values table, but it
 * reports a failure only as an 'error' event and carries on; doing it here
 * makes a failure reject the open. Two processes creating a table at once may
 * race to the catalog (23505 unique_violation, 42P07 duplicate_table): the
 * table then exists, which is all we need.
 */
async function prepare(query: Query): Promise<void> {
  const ddl = [
    `CREATE TABLE IF NOT EXISTS public.${PG_VALUES_TABLE}
       (key VARCHAR(${MAX_KEY_LENGTH}) PRIMARY KEY, value TEXT)`,
    `CREATE TABLE IF NOT EXISTS public.${PG_LEASES_TABLE}
       (key VARCHAR(${MAX_KEY_LENGTH}) PRIMARY KEY, owner TEXT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)`,
  ];
  for (const statement of ddl) {
    try {
      await query(statement);
    } catch (error) {
      const code = typeof error === "object" && error !== null && "code" in error ? error.code : "";
      if (code !== "23505" && code !== "42P07") throw error;
    }
  }
}
