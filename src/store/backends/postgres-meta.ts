/**
 * Stored metadata on PostgreSQL (src/store/meta.ts), as on SQLite
 * (sqlite-meta.ts): `m_meta`, `m_at`, `m_rev` columns on @keyv/postgres's
 * own table, written by the same fenced INSERT as the value; a trigger
 * clears the metadata of a row whose value is rewritten without it (an older
 * invocache), so stale metadata is never served. Large values live in
 * TOAST, so the columns are read without the values; the indexes keep the
 * listings ordered (`COLLATE "C"`, binary, as `listRaw`) and find rows
 * without metadata at once. A table that has rows gains all this only
 * through `migratePgMeta` (`invocache migrate-store`).
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
import { META_COLUMN_NAMES, META_COLUMNS, metaColumnValues } from "./sql-meta-columns.js";
import { PG_DIALECT } from "./sql-meta-stats.js";
import { PG_SUMMARY_FILL, PG_SUMMARY_INDEXES, PG_SUMMARY_TABLES } from "./sql-meta-summary.js";

/** One statement with `$n` parameters (postgres.ts's `Query`). */
type Query = (sql: string, values?: unknown[]) => Promise<Array<Record<string, unknown>>>;

const T = "public.invocache_entries";
const META_PAGE = 500;
const MIGRATE_BATCH = 500;

const COLUMNS = [
  `ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS m_meta TEXT`,
  `ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS m_at TEXT COLLATE "C"`,
  `ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS m_rev BIGINT`,
];
/** Which metadata a table keeps (sqlite-meta.ts's `SqliteMetaLayout`). */
export type PgMetaLayout = "none" | "meta" | "cols";

const PG_TYPE = { text: "TEXT", num: "FLOAT8", int: "BIGINT" } as const;
/** The columns of sql-meta-columns.ts, and `m_cols` (the `m_rev` they were written for). */
const META_COLS = [
  `ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS m_cols BIGINT`,
  ...META_COLUMNS.map(
    (c) => `ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS ${c.name} ${PG_TYPE[c.type]}`,
  ),
];
/**
 * Made after the columns are filled: the trigger's function also clears
 * `m_cols` (replaced in place: no moment without it), and an index in key
 * order that carries what `stats` reads.
 */
const COLS_SCHEMA = [
  `CREATE OR REPLACE FUNCTION public.invocache_meta_stale() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.m_rev IS NOT DISTINCT FROM OLD.m_rev THEN
       NEW.m_meta := NULL; NEW.m_at := NULL; NEW.m_cols := NULL;
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE INDEX IF NOT EXISTS invocache_meta_cols ON ${T} (key COLLATE "C")
   INCLUDE (m_cols, m_rev, ${META_COLUMN_NAMES}, m_at)`,
];
/** Rows per statement while the columns are filled from `m_meta`. */
const FILL_BATCH = 5000;

const SCHEMA = [
  `CREATE INDEX IF NOT EXISTS invocache_meta_key ON ${T} (key COLLATE "C") INCLUDE (m_meta)`,
  `CREATE INDEX IF NOT EXISTS invocache_meta_at ON ${T} (m_at, key COLLATE "C") INCLUDE (m_meta) WHERE m_at IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS invocache_meta_missing ON ${T} (key) WHERE m_meta IS NULL`,
  `CREATE OR REPLACE FUNCTION public.invocache_meta_stale() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.m_rev IS NOT DISTINCT FROM OLD.m_rev THEN NEW.m_meta := NULL; NEW.m_at := NULL; END IF;
     RETURN NEW;
   END $$`,
  `CREATE OR REPLACE TRIGGER invocache_meta_stale BEFORE UPDATE OF value ON ${T}
   FOR EACH ROW EXECUTE FUNCTION public.invocache_meta_stale()`,
];
const INDEXES = ["invocache_meta_key", "invocache_meta_at", "invocache_meta_missing"];

/** The fenced write of a value and its metadata: $1 key, $2 value, $3 deadline, $4 m_meta, $5 m_at. */
export const PG_FENCED_SET_META = `WITH fence AS (SELECT clock_timestamp() <= to_timestamp($3::float8 / 1000) AS ok),
  up AS (
    INSERT INTO ${T} (key, value, m_meta, m_at, m_rev)
    SELECT $1, $2, $4, $5, 1 FROM fence WHERE fence.ok
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, m_meta = excluded.m_meta,
      m_at = excluded.m_at, m_rev = coalesce(invocache_entries.m_rev, 0) + 1)
  SELECT (SELECT ok FROM fence) AS ok`;

/**
 * The fenced write with the metadata's columns too: $6 on, the columns of
 * sql-meta-columns.ts; `m_cols` is set to the row's new `m_rev`.
 */
export const PG_FENCED_SET_COLS = `WITH fence AS (SELECT clock_timestamp() <= to_timestamp($3::float8 / 1000) AS ok),
  up AS (
    INSERT INTO ${T} (key, value, m_meta, m_at, m_rev, m_cols, ${META_COLUMN_NAMES})
    SELECT $1, $2, $4, $5, 1, 1, ${META_COLUMNS.map((c, i) => `$${i + 6}::${PG_TYPE[c.type]}`).join(", ")} FROM fence WHERE fence.ok
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, m_meta = excluded.m_meta,
      m_at = excluded.m_at, m_rev = coalesce(invocache_entries.m_rev, 0) + 1,
      m_cols = coalesce(invocache_entries.m_rev, 0) + 1,
      ${META_COLUMNS.map((c) => `${c.name} = excluded.${c.name}`).join(", ")})
  SELECT (SELECT ok FROM fence) AS ok`;

/** The fenced write of `layout` ("meta" or "cols"). */
export function pgFencedSetMeta(layout: PgMetaLayout): string {
  return layout === "cols" ? PG_FENCED_SET_COLS : PG_FENCED_SET_META;
}

/** $4 and $5 of `PG_FENCED_SET_META`; on "cols", the columns' values after them. */
export function pgMetaParams(
  meta: StoredMeta,
  layout: PgMetaLayout = "meta",
): Array<string | number | null> {
  // Problems sort first in the time order (sqlite-meta.ts's m_at): "" before every time.
  const at = meta.kind === "entry" ? meta.recordedAt! : meta.kind === "problem" ? "" : null;
  const params = [encodeMeta(meta), at];
  return layout === "cols" ? [...params, ...metaColumnValues(meta)] : params;
}

async function hasColumns(query: Query, column = "m_meta"): Promise<boolean> {
  const rows = await query(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name = 'invocache_entries' AND column_name = $1`,
    [column],
  );
  return rows.length > 0;
}

/** A fresh (empty) table gets the metadata layout on open; one with rows waits for a migration. */
export async function preparePgMeta(query: Query): Promise<PgMetaLayout> {
  if (await hasColumns(query)) return (await hasColumns(query, "m_cols")) ? "cols" : "meta";
  if ((await query(`SELECT 1 FROM ${T} LIMIT 1`)).length > 0) return "none";
  // An empty table: its summary (sql-meta-summary.ts) is empty, nothing to fill.
  await addSchema(query, [
    ...COLUMNS,
    ...META_COLS,
    ...SCHEMA,
    ...COLS_SCHEMA,
    ...PG_SUMMARY_TABLES,
    ...PG_SUMMARY_INDEXES,
  ]);
  return "cols";
}

async function addSchema(query: Query, statements: readonly string[]): Promise<void> {
  for (const statement of statements) {
    try {
      await query(statement);
    } catch (error) {
      // Another process creating the same objects at once (catalog races).
      const code = (error as { code?: unknown }).code;
      if (code !== "23505" && code !== "42P07" && code !== "42710" && code !== "42701") throw error;
    }
  }
}

/** Why `listMeta` cannot answer, or undefined (see sqlite-meta.ts). */
export async function pgMetaMissing(query: Query): Promise<string | undefined> {
  if (!(await hasColumns(query))) return "it was created before stored metadata";
  const found = await query(
    `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'invocache_entries'`,
  );
  const names = new Set(found.map((r) => String(r.indexname)));
  if (!INDEXES.every((n) => names.has(n))) return "its metadata indexes are incomplete";
  const [row] = await query(`SELECT key FROM ${T} WHERE m_meta IS NULL LIMIT 1`);
  if (row !== undefined) {
    return `some rows were written without metadata (by an older invocache?), e.g. ${JSON.stringify(String(row.key))}`;
  }
  return undefined;
}

/** The statement for one page of {@link listPgMeta}: `page` rows of `q` after `after`. */
export function pgMetaPage(
  q: MetaQuery,
  after: MetaQuery["after"],
  page: number,
): { sql: string; params: unknown[] } {
  const prefix = q.prefix ?? "";
  const order = q.order ?? "key";
  if (order === "key") {
    // Entries recorded before a time (prune's dry run): passed over in the
    // database, by `m_at`, which every writer of `m_meta` writes with it.
    const before = q.recordedBefore === undefined ? "" : " AND m_at < $4";
    return {
      // `>= $2`: the first page of a prefix starts at the prefix, not at the table's first key.
      sql: `SELECT key, m_meta FROM ${T}
         WHERE key COLLATE "C" > $1 AND key COLLATE "C" >= $2 AND left(key, char_length($2)) = $2${before}
         ORDER BY key COLLATE "C" LIMIT $3`,
      params: [
        after?.key ?? "",
        prefix,
        page,
        ...(q.recordedBefore === undefined ? [] : [q.recordedBefore]),
      ],
    };
  }
  const desc = order === "recordedAtDesc";
  const params: unknown[] = [prefix];
  const where = ["m_at IS NOT NULL", "left(key, char_length($1)) = $1"];
  if (q.recordedBefore !== undefined) {
    params.push(q.recordedBefore);
    where.push(`m_at < $${params.length}`);
  }
  if (after !== undefined) {
    params.push(after.recordedAt ?? "", after.key);
    const a = `$${params.length - 1}`;
    const k = `$${params.length}`;
    // A row comparison, which PostgreSQL turns into an index range on
    // (m_at, key); the same condition spelled with OR is only a filter, and
    // each page read the index from its start (a scan of the table per page).
    where.push(`(m_at, key COLLATE "C") ${desc ? "<" : ">"} (${a}, ${k})`);
  }
  params.push(page);
  const dir = desc ? "DESC" : "ASC";
  return {
    sql: `SELECT key, m_meta FROM ${T} WHERE ${where.join(" AND ")}
         ORDER BY m_at ${dir}, key COLLATE "C" ${dir} LIMIT $${params.length}`,
    params,
  };
}

/** The stored metadata matching `q`, a page at a time (expired rows included). */
export async function* listPgMeta(query: Query, q: MetaQuery): AsyncIterable<StoredMeta> {
  let left = q.limit ?? Number.POSITIVE_INFINITY;
  let after = q.after;
  while (left > 0) {
    const page = Math.min(META_PAGE, left);
    const { sql, params } = pgMetaPage(q, after, page);
    const rows = await query(sql, params);
    for (const row of rows) {
      const key = String(row.key);
      const meta = row.m_meta == null ? undefined : decodeMeta(key, String(row.m_meta));
      if (meta === undefined) {
        throw new Error(
          `the metadata of ${key} is missing (written meanwhile by an older invocache?); run \`invocache migrate-store\``,
        );
      }
      if (!metaMatches(meta, q)) continue;
      yield meta;
      left--;
      if (left === 0) return;
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < page) return;
    const lastMeta = decodeMeta(String(last.key), String(last.m_meta));
    after = { key: String(last.key), recordedAt: lastMeta?.recordedAt ?? "" };
  }
}

/** See sqlite-meta.ts's `migrateSqliteMeta`: the same steps on PostgreSQL. */
export async function migratePgMeta(
  query: Query,
  onProgress?: (done: number) => void,
): Promise<number> {
  for (const statement of COLUMNS) await query(statement);
  // Before any filling: writers from here on write the columns too.
  await addSchema(query, META_COLS);
  let filled = 0;
  let after = "";
  while (true) {
    const rows = await query(
      `SELECT key, value FROM ${T} WHERE key COLLATE "C" > $1 ORDER BY key COLLATE "C" LIMIT $2`,
      [after, MIGRATE_BATCH],
    );
    for (const r of rows) {
      const key = String(r.key);
      const text = String(r.value);
      after = key;
      let meta: StoredMeta;
      try {
        const record = deserializeRecord(text);
        meta = storedMetaOf(
          key,
          record.value,
          typeof record.expires === "number" ? record.expires : undefined,
        );
      } catch (error) {
        meta = { key, kind: "problem", bytes: Buffer.byteLength(text), problem: String(error) };
      }
      const [m, at] = pgMetaParams(meta);
      const done = await query(
        `UPDATE ${T} SET m_meta = $1, m_at = $2, m_rev = coalesce(m_rev, 0) + 1
         WHERE key = $3 AND value = $4 AND m_meta IS NULL RETURNING key`,
        [m, at, key, text],
      );
      filled += done.length;
    }
    onProgress?.(filled);
    if (rows.length < MIGRATE_BATCH) break;
  }
  await addSchema(query, SCHEMA);
  // Every row with metadata gains its columns: the count of rows given anything.
  const cols = await fillPgColumns(query, (done) => onProgress?.(done));
  await addSchema(query, COLS_SCHEMA);
  await addPgSummary(query);
  return cols;
}

/**
 * Give a migrated table the stats summary (sql-meta-summary.ts) in one
 * transaction: one text of several statements (PostgreSQL runs it as one
 * implicit transaction, on one connection whatever the pool), the table locked against writes from the triggers' creation to
 * the fill's end, so no write is summed twice or missed. Nothing when it has one.
 */
async function addPgSummary(query: Query): Promise<void> {
  const ready = await query(
    `SELECT 1 FROM pg_indexes WHERE schemaname = 'public' AND indexname = 'invocache_stats_live'`,
  );
  if (ready.length > 0) return;
  await query(
    [
      `LOCK TABLE ${T} IN SHARE ROW EXCLUSIVE MODE`,
      ...PG_SUMMARY_TABLES,
      ...PG_SUMMARY_FILL,
      ...PG_SUMMARY_INDEXES,
    ].join(";\n"),
  );
}

/**
 * Fill the columns from `m_meta` in SQL, a key range at a time (see
 * sqlite-meta.ts's `fillSqliteColumns`). A row rewritten between the
 * statement's read and its write (its `m_rev` moved on) is left to its
 * writer, who wrote its columns or left them for the next migration.
 */
async function fillPgColumns(query: Query, onProgress: (done: number) => void): Promise<number> {
  const set = META_COLUMNS.map((c) => `${c.name} = ${c.json(PG_DIALECT)}`).join(",\n    ");
  let filled = 0;
  let after = "";
  while (true) {
    const [end] = await query(
      `SELECT key FROM ${T} WHERE key COLLATE "C" > $1 ORDER BY key COLLATE "C" LIMIT 1 OFFSET $2`,
      [after, FILL_BATCH - 1],
    );
    const upper = end === undefined ? undefined : String(end.key);
    const done = await query(
      `UPDATE ${T} AS e SET ${set}, m_cols = s.rev
       FROM (SELECT key AS k, m_rev AS rev, m_meta::jsonb AS m FROM ${T}
         WHERE key COLLATE "C" > $1${upper === undefined ? "" : ` AND key COLLATE "C" <= $2`}
           AND m_meta IS NOT NULL AND m_cols IS DISTINCT FROM m_rev) AS s
       WHERE e.key = s.k AND e.m_rev IS NOT DISTINCT FROM s.rev
         AND ${PG_DIALECT.int(["mv"])} = 1
       RETURNING e.key`,
      upper === undefined ? [after] : [after, upper],
    );
    filled += done.length;
    onProgress(filled);
    if (upper === undefined) return filled;
    after = upper;
  }
}
