/**
 * `postgres://…` / `postgresql://…`: values through `@keyv/postgres` (an
 * optional peer dependency, imported only here), listing and leases as SQL
 * on the same pool.
 */
import { createRequire } from "node:module";
import type { Backend, RawRow } from "../backend.js";
import { MAX_KEY_LENGTH } from "../keys.js";
import { prepareKeyv } from "./keyv.js";
import { importOptional } from "./optional.js";

/** Table of values (keyv's `key`/`value` layout), in schema `public`. */
export const PG_VALUES_TABLE = "invocache_entries";
/** Table of leases: `key`, `owner`, `expires_at timestamptz`, in schema `public`. */
export const PG_LEASES_TABLE = "invocache_leases";

const CONNECT_TIMEOUT_MS = 3000;
/** Rows per query while listing: entries may be megabytes each. */
const PAGE = 64;

/** The part of `pg` we use (pg ships no types; @types/pg is not a dependency). */
interface PgPool {
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): unknown;
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
      return async (sql: string, values?: unknown) =>
        (await pool.query(sql, values as unknown[] | undefined)).rows;
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
  /** The caller's deadline on the server's clock, in epoch ms. */
  const serverDeadline = (notAfter: number) => notAfter + offsetMs;

  return {
    keyv,
    keyPrefix: "",
    async *listRaw(prefix: string): AsyncIterable<RawRow> {
      // left()/char_length() match the prefix literally (LIKE would treat % and
      // _ as wildcards). COLLATE "C" gives a byte order that `>` and ORDER BY
      // agree on, whatever the database's collation, for keyset pagination.
      let after = "";
      while (true) {
        const rows = await query(
          `SELECT key, value FROM public.${PG_VALUES_TABLE}
           WHERE key COLLATE "C" > $1 AND left(key, char_length($2)) = $2
           ORDER BY key COLLATE "C" LIMIT $3`,
          [after, prefix, PAGE],
        );
        for (const row of rows) yield [String(row.key), String(row.value)];
        const last = rows.at(-1);
        if (last === undefined || rows.length < PAGE) return;
        after = String(last.key);
      }
    },
    async setRecord(key, record, _ttlMs, notAfter) {
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

const LATE = "the request reached the server after its deadline and was not applied";

/** Server clock minus ours, in ms, erring early by at most a round trip; see the Redis backend. */
async function clockOffset(query: Query): Promise<number> {
  const [row] = await query("SELECT extract(epoch FROM clock_timestamp()) * 1000 AS now");
  const after = Date.now();
  return Number(row?.now) - after;
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
