/**
 * The per-group summary of `stats` on SQLite and PostgreSQL, kept by the
 * database itself: triggers on the entries table add each row's
 * contribution to a small table and take it away again, in the same
 * transaction as the write, whoever writes (keyv alone included), so the
 * summary and the rows never disagree. `stats` then reads O(groups) rows
 * instead of paging through every row (sql-meta-stats.ts).
 *
 * Summed: the rows whose columns are their metadata's (`m_cols = m_rev`,
 * sql-meta-columns.ts) that are entries without an expiry ({@link summed}).
 * The rest cannot be a sum (an expiry is live or not at the reader's `now`;
 * a row without its columns is read from its JSON) and is read as before,
 * from a partial index that holds only those rows (`invocache_stats_live`):
 * none on a store written by this version without expiries.
 *
 * Kept beside the sums: the distinct ids of the summed rows, as a count per
 * (namespace, id) (`invocache_stats_ids`; a row whose count falls to 0 is
 * deleted), and two partial indexes over the summed rows: by recording
 * time (oldest and newest are its ends) and by usage class and input
 * tokens (the exact token counts `stats` asks for: cache counts past the
 * input, prompts past 128,000 tokens).
 *
 * Concurrency: SQLite has one writer at a time, so its triggers update one
 * row per group in place. On PostgreSQL eight runners writing the same
 * group would queue on that row's lock until they commit; there the
 * triggers run per statement (transition tables) and append delta rows, one
 * per group the statement touched, which no other writer locks, and the
 * reader sums them (folding them in one statement when they pile up). Only
 * writers of the same id meet on a row (its count in `invocache_stats_ids`).
 *
 * Made by `invocache migrate-store` on a table with rows (one pass to fill
 * it, in the migration's transaction), and at once on an empty table when a
 * writer opens it: never on a read. A store without it keeps the paged path.
 */
import { META_COLUMN_NAMES } from "./sql-meta-columns.js";

const T_SQLITE = "invocache_entries";
const T_PG = "public.invocache_entries";

/**
 * Whether a row is summed: its columns are its metadata's, it is an entry,
 * it has no expiry. `r`: "NEW.", "OLD." or "" (the table's own rows).
 */
export const summed = (r = "") =>
  `coalesce(${r}m_cols = ${r}m_rev AND ${r}m_kind = 'entry' AND ${r}m_exp IS NULL, FALSE)`;
/** The rows the summary leaves to the paged statement (the live index's condition, spelled alike). */
export const LIVE = `NOT ${summed()}`;

/** The group key, as the stats statement groups (sql-meta-stats.ts), and its names there. */
const GROUP = ["m_ns", "m_role", "m_model", "m_tsrv", "m_tname", "m_tver", "m_umodel", "m_uclass"];
const GROUP_AS = [
  "ns",
  "role",
  "model",
  "tool_server",
  "tool_name",
  "tool_version",
  "usage_model",
  "usage_class",
];
const GROUP_LIST = GROUP.join(", ");
/** The sums: name, and a row's contribution (the stats statement's expressions). */
const SUMS: ReadonlyArray<[string, (r: string) => string]> = [
  ["n", () => "1"],
  ["bytes", (r) => `coalesce(${r}m_bytes, 0)`],
  ["dur_us", (r) => `coalesce(${r}m_dur_us, 0)`],
  ["accepted", (r) => `CASE WHEN ${r}m_verdict = 'accepted' THEN 1 ELSE 0 END`],
  ["rejected", (r) => `CASE WHEN ${r}m_verdict = 'rejected' THEN 1 ELSE 0 END`],
  ["in_t", (r) => `coalesce(${r}m_in, 0)`],
  ["out_t", (r) => `coalesce(${r}m_out, 0)`],
  ["cr_t", (r) => `coalesce(${r}m_cr, 0)`],
  ["cw_t", (r) => `coalesce(${r}m_cw, 0)`],
];
const SUM_NAMES = SUMS.map(([n]) => n);
const SUM_LIST = SUM_NAMES.join(", ");
/** What the live index carries (as `invocache_meta_cols`: the stats statement reads it). */
const LIVE_COLS = `m_cols, m_rev, ${META_COLUMN_NAMES}, m_at`;

const SUM_TABLE = "invocache_stats_sum";
const IDS_TABLE = "invocache_stats_ids";
/** Made last: its presence says the summary is complete. */
export const SUMMARY_READY_INDEX = "invocache_stats_live";

// SQLite.

/** One row's contribution added (1) or taken away (-1): a SQLite trigger's body. */
function sqliteApply(r: "NEW." | "OLD.", sign: 1 | -1): string {
  const minus = sign === 1 ? "" : "-";
  const group = GROUP.map((c) => `${r}${c}`).join(", ");
  const ids = `INSERT INTO ${IDS_TABLE} (ns, id, n) SELECT ${r}m_ns, ${r}m_id, ${sign}
      WHERE ${r}m_ns IS NOT NULL AND ${r}m_id IS NOT NULL
      ON CONFLICT (ns, id) DO UPDATE SET n = n + excluded.n;`;
  const gone =
    sign === 1 ? "" : `DELETE FROM ${IDS_TABLE} WHERE ns = ${r}m_ns AND id = ${r}m_id AND n <= 0;`;
  // `g`: the group key as one value (a UNIQUE of nullable columns would let NULLs differ).
  return `INSERT INTO ${SUM_TABLE} (g, ${GROUP_LIST}, ${SUM_LIST})
      VALUES (json_array(${group}), ${group}, ${SUMS.map(([, of]) => `${minus}(${of(r)})`).join(", ")})
      ON CONFLICT (g) DO UPDATE SET ${SUM_NAMES.map((n) => `${n} = ${n} + excluded.${n}`).join(", ")};
    ${ids} ${gone}`;
}

/** The SQLite summary's tables and triggers (after the columns and `invocache_meta_cols`). */
export const SQLITE_SUMMARY_TABLES = [
  `CREATE TABLE IF NOT EXISTS ${SUM_TABLE} (g TEXT PRIMARY KEY, ${GROUP_LIST}, ${SUM_NAMES.map((n) => `${n} INTEGER NOT NULL`).join(", ")})`,
  `CREATE TABLE IF NOT EXISTS ${IDS_TABLE} (ns TEXT NOT NULL, id TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (ns, id)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS invocache_stats_ins AFTER INSERT ON ${T_SQLITE}
     WHEN ${summed("NEW.")} BEGIN ${sqliteApply("NEW.", 1)} END`,
  `CREATE TRIGGER IF NOT EXISTS invocache_stats_del AFTER DELETE ON ${T_SQLITE}
     WHEN ${summed("OLD.")} BEGIN ${sqliteApply("OLD.", -1)} END`,
  // An update takes the old row's part away and adds the new one's (two
  // triggers: either side may be summed or not).
  `CREATE TRIGGER IF NOT EXISTS invocache_stats_upd_old AFTER UPDATE ON ${T_SQLITE}
     WHEN ${summed("OLD.")} BEGIN ${sqliteApply("OLD.", -1)} END`,
  `CREATE TRIGGER IF NOT EXISTS invocache_stats_upd_new AFTER UPDATE ON ${T_SQLITE}
     WHEN ${summed("NEW.")} BEGIN ${sqliteApply("NEW.", 1)} END`,
];

/** Fill the summary from the rows there are (after the triggers, in one transaction with them). */
export const SQLITE_SUMMARY_FILL = [
  `DELETE FROM ${SUM_TABLE}`,
  `DELETE FROM ${IDS_TABLE}`,
  `INSERT INTO ${SUM_TABLE} (g, ${GROUP_LIST}, ${SUM_LIST})
     SELECT json_array(${GROUP_LIST}), ${GROUP_LIST}, ${SUMS.map(([, of]) => `sum(${of("")})`).join(", ")}
     FROM ${T_SQLITE} WHERE ${summed()} GROUP BY ${GROUP_LIST}`,
  `INSERT INTO ${IDS_TABLE} (ns, id, n) SELECT m_ns, m_id, count(*) FROM ${T_SQLITE}
     WHERE ${summed()} AND m_ns IS NOT NULL AND m_id IS NOT NULL GROUP BY m_ns, m_id`,
];

/** The summary's indexes; the live one last (its presence: the summary is ready). */
export const SQLITE_SUMMARY_INDEXES = [
  `CREATE INDEX IF NOT EXISTS invocache_stats_at ON ${T_SQLITE} (m_at) WHERE ${summed()}`,
  `CREATE INDEX IF NOT EXISTS invocache_stats_usage ON ${T_SQLITE} (m_uclass, m_in) WHERE ${summed()}`,
  `CREATE INDEX IF NOT EXISTS ${SUMMARY_READY_INDEX} ON ${T_SQLITE} (key, ${LIVE_COLS}) WHERE ${LIVE}`,
];

// PostgreSQL.

/** A statement-level trigger function's body: each transition table's rows with its sign. */
function pgApply(parts: ReadonlyArray<[rows: string, sign: 1 | -1]>): string {
  const union = (select: (rows: string, sign: 1 | -1) => string) =>
    parts.map(([rows, sign]) => select(rows, sign)).join(" UNION ALL ");
  const deltas = union(
    (rows, sign) =>
      `SELECT ${GROUP_LIST}, ${SUMS.map(([n, of]) => `${sign} * (${of("")}) AS ${n}`).join(", ")} FROM ${rows} WHERE ${summed()}`,
  );
  const ids = union(
    (rows, sign) =>
      `SELECT m_ns, m_id, ${sign} AS n FROM ${rows} WHERE ${summed()} AND m_ns IS NOT NULL AND m_id IS NOT NULL`,
  );
  const removes = parts.some(([, sign]) => sign === -1);
  // Nothing summed among the statement's rows (an upsert fires the INSERT
  // and the UPDATE trigger, one of them with no rows): the one cheap check.
  const none = parts
    .map(([rows]) => `NOT EXISTS (SELECT 1 FROM ${rows} WHERE ${summed()})`)
    .join(" AND ");
  // Ids in one order, so two statements never wait on each other's rows crosswise.
  return `BEGIN
     IF ${none} THEN RETURN NULL; END IF;
     INSERT INTO public.${SUM_TABLE} (${GROUP_LIST}, ${SUM_LIST})
       SELECT ${GROUP_LIST}, ${SUM_NAMES.map((n) => `sum(${n})`).join(", ")} FROM (${deltas}) d
       GROUP BY ${GROUP_LIST} HAVING ${SUM_NAMES.map((n) => `sum(${n}) <> 0`).join(" OR ")};
     INSERT INTO public.${IDS_TABLE} AS s (ns, id, n)
       SELECT m_ns, m_id, sum(n) FROM (${ids}) i GROUP BY m_ns, m_id HAVING sum(n) <> 0
       ORDER BY m_ns, m_id
       ON CONFLICT (ns, id) DO UPDATE SET n = s.n + excluded.n;${
         removes
           ? `
     DELETE FROM public.${IDS_TABLE} s USING (${ids}) i
       WHERE s.n <= 0 AND s.ns = i.m_ns AND s.id = i.m_id;`
           : ""
       }
     RETURN NULL;
   END`;
}

const pgFunction = (name: string, parts: ReadonlyArray<[string, 1 | -1]>) =>
  `CREATE OR REPLACE FUNCTION public.${name}() RETURNS trigger LANGUAGE plpgsql AS $$ ${pgApply(parts)} $$`;

/** The PostgreSQL summary's tables, functions and triggers. */
export const PG_SUMMARY_TABLES = [
  `CREATE TABLE IF NOT EXISTS public.${SUM_TABLE} (${GROUP.map((c) => `${c} ${c === "m_tver" ? "BIGINT" : "TEXT"}`).join(", ")}, ${SUM_NAMES.map((n) => `${n} BIGINT NOT NULL`).join(", ")})`,
  `CREATE TABLE IF NOT EXISTS public.${IDS_TABLE} (ns TEXT NOT NULL, id TEXT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (ns, id))`,
  pgFunction("invocache_stats_ins", [["new_rows", 1]]),
  pgFunction("invocache_stats_del", [["old_rows", -1]]),
  pgFunction("invocache_stats_upd", [
    ["old_rows", -1],
    ["new_rows", 1],
  ]),
  `CREATE OR REPLACE TRIGGER invocache_stats_ins AFTER INSERT ON ${T_PG}
     REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.invocache_stats_ins()`,
  `CREATE OR REPLACE TRIGGER invocache_stats_del AFTER DELETE ON ${T_PG}
     REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.invocache_stats_del()`,
  `CREATE OR REPLACE TRIGGER invocache_stats_upd AFTER UPDATE ON ${T_PG}
     REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.invocache_stats_upd()`,
];

export const PG_SUMMARY_FILL = [
  `DELETE FROM public.${SUM_TABLE}`,
  `DELETE FROM public.${IDS_TABLE}`,
  `INSERT INTO public.${SUM_TABLE} (${GROUP_LIST}, ${SUM_LIST})
     SELECT ${GROUP_LIST}, ${SUMS.map(([, of]) => `sum(${of("")})`).join(", ")}
     FROM ${T_PG} WHERE ${summed()} GROUP BY ${GROUP_LIST}`,
  `INSERT INTO public.${IDS_TABLE} (ns, id, n) SELECT m_ns, m_id, count(*) FROM ${T_PG}
     WHERE ${summed()} AND m_ns IS NOT NULL AND m_id IS NOT NULL GROUP BY m_ns, m_id`,
];

export const PG_SUMMARY_INDEXES = [
  `CREATE INDEX IF NOT EXISTS invocache_stats_at ON ${T_PG} (m_at) WHERE ${summed()}`,
  `CREATE INDEX IF NOT EXISTS invocache_stats_usage ON ${T_PG} (m_uclass, m_in) WHERE ${summed()}`,
  `CREATE INDEX IF NOT EXISTS ${SUMMARY_READY_INDEX} ON ${T_PG} (key COLLATE "C") INCLUDE (${LIVE_COLS}) WHERE ${LIVE}`,
];

// Reading.

/** Delta rows on PostgreSQL past which the reader folds them into one per group. */
export const PG_COMPACT_ABOVE = 1000;

/** How the reader spells the summary's statements in each database. */
export interface SummarySpelling {
  /** One row when the summary is complete. */
  ready: string;
  /** PostgreSQL: how many delta rows there are, and the statement folding them. */
  compact?: { count: string; fold: string };
  /** The groups' sums, named as the stats statement's `g` rows. */
  groups: string;
  /** The distinct ids of the summed rows: `n`. */
  ids: string;
  oldest: string;
  newest: string;
  /** The exact token counts asked for (`@above`, `@d0`…), as the stats statement's `u` rows. */
  usages(details: number): string;
}

const groupSelect = GROUP.map((c, i) => `${c} AS ${GROUP_AS[i]}`).join(", ");

/**
 * The exact token counts of summed rows: cache counts past the input and
 * prompts past `@above` (two ranges of `invocache_stats_usage`; `indexed`
 * SQLite's hint naming it), then the other rows of the detail models (a
 * scan of the summed rows, only when asked for: a store holding a model
 * priced in fractions of a nanodollar).
 */
function usageSelect(t: string, indexed: string, details: number): string {
  const inList = Array.from({ length: details }, (_, i) => `@d${i}`).join(", ");
  const branch = (where: string, hint: string) =>
    `SELECT ${GROUP_LIST}, coalesce(m_in, 0) AS in_t, coalesce(m_out, 0) AS out_t,
       coalesce(m_cr, 0) AS cr_t, coalesce(m_cw, 0) AS cw_t FROM ${t}${hint} WHERE ${summed()} AND ${where}`;
  const rows = [
    branch("m_uclass = 'over'", indexed),
    branch("m_uclass = 'ok' AND m_in > @above", indexed),
    ...(details === 0
      ? []
      : [
          branch(
            `m_uclass = 'ok' AND NOT (coalesce(m_in, 0) > @above) AND (m_model IN (${inList}) OR m_umodel IN (${inList}))`,
            "",
          ),
        ]),
  ].join(" UNION ALL ");
  return `SELECT ${groupSelect}, count(*) AS n, in_t, out_t, cr_t, cw_t FROM (${rows}) u
    GROUP BY ${GROUP_LIST}, in_t, out_t, cr_t, cw_t`;
}

export const SQLITE_SUMMARY: SummarySpelling = {
  ready: `SELECT 1 AS one FROM sqlite_master WHERE type = 'index' AND name = '${SUMMARY_READY_INDEX}'`,
  groups: `SELECT ${groupSelect}, ${SUM_LIST} FROM ${SUM_TABLE} WHERE n <> 0`,
  ids: `SELECT count(*) AS n FROM ${IDS_TABLE}`,
  oldest: `SELECT min(m_at) AS at FROM ${T_SQLITE} INDEXED BY invocache_stats_at WHERE ${summed()}`,
  newest: `SELECT max(m_at) AS at FROM ${T_SQLITE} INDEXED BY invocache_stats_at WHERE ${summed()}`,
  usages: (details) => usageSelect(T_SQLITE, " INDEXED BY invocache_stats_usage", details),
};

export const PG_SUMMARY: SummarySpelling = {
  ready: `SELECT 1 AS one FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'invocache_entries' AND indexname = '${SUMMARY_READY_INDEX}'`,
  compact: {
    count: `SELECT count(*) AS n FROM public.${SUM_TABLE}`,
    // One statement: the rows it deletes are the rows it sums back.
    fold: `WITH d AS (DELETE FROM public.${SUM_TABLE} RETURNING *)
      INSERT INTO public.${SUM_TABLE} (${GROUP_LIST}, ${SUM_LIST})
      SELECT ${GROUP_LIST}, ${SUM_NAMES.map((n) => `sum(${n})`).join(", ")} FROM d
      GROUP BY ${GROUP_LIST} HAVING sum(n) <> 0`,
  },
  groups: `SELECT ${groupSelect}, ${SUM_NAMES.map((n) => `sum(${n}) AS ${n}`).join(", ")}
    FROM public.${SUM_TABLE} GROUP BY ${GROUP_LIST} HAVING sum(n) <> 0`,
  ids: `SELECT count(*) AS n FROM public.${IDS_TABLE}`,
  oldest: `SELECT min(m_at) AS at FROM ${T_PG} WHERE ${summed()}`,
  newest: `SELECT max(m_at) AS at FROM ${T_PG} WHERE ${summed()}`,
  usages: (details) => usageSelect(T_PG, "", details),
};
