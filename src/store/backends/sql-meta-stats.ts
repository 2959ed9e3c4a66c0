/**
 * `Store.statsMeta` on SQLite and PostgreSQL (src/store/meta-stats.ts):
 * the stored metadata (`m_meta`, sqlite-meta.ts / postgres-meta.ts) summed
 * by SQL GROUP BY, a page of rows at a time in key order (keyset paging:
 * no statement holds more than a page, and a page answers in well under
 * the store's timeout at any size). Only each page's groups (a few dozen
 * rows) cross to the caller, never the rows. One statement per page gives
 * the groups, the exact token counts asked for, the other kinds of rows,
 * and the page's distinct ids. An id's entries are adjacent in key order
 * (`ns:e:<64 hex>:<n>`, no ":" in a namespace: every key between two of
 * them starts with the same `ns:e:<id>:`), so the distinct ids of a page
 * are its runs of one id, and only a run cut by a page boundary is
 * counted twice, which the sum joins (`MetaStatsSum.addIds`). Counted
 * DISTINCT rather than by comparing each entry with the one before it
 * (a window in key order): that sorted every page again.
 */
import { StoreError } from "../../errors.js";
import { decodeMeta } from "../meta.js";
import { MetaStatsSum, statsKeyFromColumns } from "../meta-stats.js";
import type { MetaStats, MetaStatsQuery } from "../meta-types.js";
import { META_COLUMNS, metaColumn } from "./sql-meta-columns.js";
import {
  LIVE,
  PG_COMPACT_ABOVE,
  PG_SUMMARY,
  SQLITE_SUMMARY,
  SUMMARY_READY_INDEX,
  type SummarySpelling,
} from "./sql-meta-summary.js";

/** Rows summed per statement on SQLite (it walks the covering key index in order). */
export const STATS_PAGE = 50_000;
/**
 * Rows per statement on PostgreSQL: its planner reads a page of 50,000 in
 * key order with a scan and sort of the whole table once the rows left are
 * near the page's size (`EXPLAIN` at 300,000 rows); a smaller page keeps
 * the index to the end. 2,000 to 50,000 summed 300,000 rows alike.
 */
export const PG_STATS_PAGE = 10_000;

type Rows = Array<Record<string, unknown>>;

/** How the two databases spell what the statement needs. */
interface Dialect {
  /**
   * The page of rows (`key`, `m` the metadata as the dialect reads JSON)
   * after `after`, under `prefix`, below `upper` when given (the first key
   * past the prefix's range: the scan stops there instead of at the table's end).
   */
  page(limit: string, after: string, prefix?: string, upper?: string): string;
  /** A text field at `path` of the metadata `m`. */
  text(path: string[]): string;
  /** A number field at `path` (NULL when absent). */
  num(path: string[]): string;
  /** An integer field at `path` (NULL when absent). */
  int(path: string[]): string;
  /** `floor(x)` of a non-negative double, as an integer. */
  floor(x: string): string;
  /** Null-safe "differs from". */
  differs: string;
  /** The binary collation of keys and times (PostgreSQL's text is compared in the locale's). */
  binary: string;
  /** Bind named parameters (`@name` in the text): the statement and its values in order. */
  bind(sql: string, values: Record<string, unknown>): { sql: string; params: unknown[] };
  /** The first problem's metadata, by key. */
  metaOf: string;
  /**
   * One row when the store has its metadata columns, filled and indexed
   * (sql-meta-columns.ts: the index is made last, by the migration).
   */
  colsReady: string;
  /**
   * As `page`, from the columns: `ok` whether the row's columns are its
   * metadata's, the columns, and `m` the metadata JSON only where they are not.
   */
  pageCols(limit: string, after: string, prefix?: string, upper?: string, live?: boolean): string;
  /** The summary's statements (sql-meta-summary.ts). */
  summary: SummarySpelling;
}

/** The columns the stats statement reads, as `pageCols` selects them. */
const COLS = `m_cols = m_rev AS ok, ${META_COLUMNS.map((c) => c.name).join(", ")}, m_at`;

const T_SQLITE = "invocache_entries";
const T_PG = "public.invocache_entries";

export const SQLITE_DIALECT: Dialect = {
  page: (limit, after, prefix, upper) => `SELECT key, m_meta AS m FROM ${T_SQLITE}
    INDEXED BY invocache_meta_key
    WHERE key > ${after}${
      prefix === undefined
        ? ""
        : ` AND key >= ${prefix} AND ${upper === undefined ? `substr(key, 1, length(${prefix})) = ${prefix}` : `key < ${upper}`}`
    }
    ORDER BY key LIMIT ${limit}`,
  text: (path) => `json_extract(m, '$.${path.join(".")}')`,
  num: (path) => `json_extract(m, '$.${path.join(".")}')`,
  int: (path) => `json_extract(m, '$.${path.join(".")}')`,
  // No floor() in every SQLite build: CAST truncates, which is floor for x >= 0.
  floor: (x) => `CAST(${x} AS INTEGER)`,
  differs: "IS NOT",
  binary: "",
  // One "?" per use (better-sqlite3 binds no numbered parameter from a list).
  bind: (sql, values) => {
    const params: unknown[] = [];
    const text = sql.replace(/@([a-z]\w*)/g, (_, name: string) => {
      params.push(values[name]);
      return "?";
    });
    return { sql: text, params };
  },
  metaOf: `SELECT m_meta FROM ${T_SQLITE} WHERE key = @key`,
  colsReady: `SELECT 1 AS one FROM sqlite_master WHERE type = 'index' AND name = 'invocache_meta_cols'`,
  // The index covers the columns; `m_meta` is read from the table only for
  // a row whose columns are not filled (SQLite defers the table's seek
  // until a CASE asks for it).
  // `live`: only the rows the summary leaves out, from their own index.
  pageCols: (limit, after, prefix, upper, live) => `SELECT key, ${COLS},
      CASE WHEN m_cols = m_rev THEN NULL ELSE m_meta END AS m FROM ${T_SQLITE}
    INDEXED BY ${live === true ? SUMMARY_READY_INDEX : "invocache_meta_cols"}
    WHERE ${live === true ? `${LIVE} AND ` : ""}key > ${after}${
      prefix === undefined
        ? ""
        : ` AND key >= ${prefix} AND ${upper === undefined ? `substr(key, 1, length(${prefix})) = ${prefix}` : `key < ${upper}`}`
    }
    ORDER BY key LIMIT ${limit}`,
  summary: SQLITE_SUMMARY,
};

export const PG_DIALECT: Dialect = {
  // Ranges only where it can (no left(): the planner then misjudges how
  // many rows match, and scans and sorts the whole table for each page).
  page: (limit, after, prefix, upper) => `SELECT key, m_meta::jsonb AS m FROM ${T_PG}
    WHERE key COLLATE "C" > ${after}${
      prefix === undefined
        ? ""
        : ` AND key COLLATE "C" >= ${prefix} AND ${upper === undefined ? `left(key, char_length(${prefix})) = ${prefix}` : `key COLLATE "C" < ${upper}`}`
    }
    ORDER BY key COLLATE "C" LIMIT ${limit}`,
  text: (path) => `(m #>> '{${path.join(",")}}')`,
  num: (path) => `(m #>> '{${path.join(",")}}')::float8`,
  int: (path) => `(m #>> '{${path.join(",")}}')::bigint`,
  floor: (x) => `floor(${x})::bigint`,
  differs: "IS DISTINCT FROM",
  binary: ' COLLATE "C"',
  bind: (sql, values) => {
    const names = Object.keys(values);
    const text = sql.replace(/@([a-z]\w*)/g, (_, name: string) => `$${names.indexOf(name) + 1}`);
    return { sql: text, params: Object.values(values) };
  },
  metaOf: `SELECT m_meta FROM ${T_PG} WHERE key = @key`,
  colsReady: `SELECT 1 AS one FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'invocache_entries' AND indexname = 'invocache_meta_cols'`,
  // The JSON is cast only for a row whose columns are not filled.
  pageCols: (limit, after, prefix, upper, live) => `SELECT key, ${COLS},
      CASE WHEN m_cols = m_rev THEN NULL ELSE m_meta::jsonb END AS m FROM ${T_PG}
    WHERE ${live === true ? `${LIVE} AND ` : ""}key COLLATE "C" > ${after}${
      prefix === undefined
        ? ""
        : ` AND key COLLATE "C" >= ${prefix} AND ${upper === undefined ? `left(key, char_length(${prefix})) = ${prefix}` : `key COLLATE "C" < ${upper}`}`
    }
    ORDER BY key COLLATE "C" LIMIT ${limit}`,
  summary: PG_SUMMARY,
};

/**
 * The statement for one page. Parameters: after, prefix, limit, now, then
 * the `detail` model names. Every output row has the same columns; `part`
 * says what it is: `g` a group, `u` a group's exact token counts, `o` the
 * rows of another kind (`kind`: run, problem, other, expired, missing).
 */
function pageStatement(
  d: Dialect,
  details: number,
  prefixed: boolean,
  bounded: boolean,
  cols: boolean,
  liveOnly = false,
): string {
  const c = d.binary;
  // A field from its column where the row's columns are filled, else from
  // the JSON (the expression the migration fills the column with).
  const col = (name: string) => {
    const json = metaColumn(name).json(d);
    return cols ? `(CASE WHEN ok THEN ${name} ELSE ${json} END)` : json;
  };
  const live = `CASE WHEN ${col("m_exp")} < @now THEN 'expired' ELSE ${col("m_kind")} END`;
  const kind = cols
    ? `CASE WHEN ok THEN ${live} WHEN m IS NULL OR ${d.int(["mv"])} ${d.differs} 1 THEN 'missing' ELSE ${live} END`
    : `CASE WHEN m IS NULL OR ${d.int(["mv"])} ${d.differs} 1 THEN 'missing' ELSE ${live} END`;
  const at = cols
    ? `(CASE WHEN ok THEN m_at${c} ELSE ${d.text(["recordedAt"])}${c} END)`
    : `${d.text(["recordedAt"])}${c}`;
  // The page is a subquery of the one materialized CTE, not a CTE of its
  // own: SQLite materialized it too, a copy of every row more (a fifth of
  // the statement's time at 57,000 rows).
  const page = (cols ? d.pageCols : d.page)(
    "@limit",
    "@after",
    prefixed ? "@prefix" : undefined,
    bounded ? "@upper" : undefined,
    liveOnly,
  );
  // Every field read once per row, into narrow rows (the JSON goes no further).
  const fields = `SELECT key, ${kind} AS kind,
      ${col("m_ns")} AS ns, ${col("m_id")} AS id, ${col("m_role")} AS role,
      ${col("m_model")} AS model, ${col("m_tsrv")} AS tool_server,
      ${col("m_tname")} AS tool_name, ${col("m_tver")} AS tool_version,
      ${col("m_umodel")} AS usage_model, ${col("m_uclass")} AS usage_class,
      ${col("m_bytes")} AS bytes, ${col("m_dur_us")} AS dur_us, ${col("m_verdict")} AS verdict,
      coalesce(${col("m_in")}, 0) AS in_t, coalesce(${col("m_out")}, 0) AS out_t,
      coalesce(${col("m_cr")}, 0) AS cr_t, coalesce(${col("m_cw")}, 0) AS cw_t,
      ${at} AS at
    FROM (${page}) AS page`;
  const key = `ns, role, model, tool_server, tool_name, tool_version, usage_model, usage_class`;
  const none = `NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL`;
  const detailIn = Array.from({ length: details }, (_, i) => `@d${i}`).join(", ");
  const byModel = details === 0 ? "" : ` OR model IN (${detailIn}) OR usage_model IN (${detailIn})`;
  const detail = `UNION ALL
    SELECT 'u', 'entry', ${key}, count(*), 0, 0, 0, 0, in_t, out_t, cr_t, cw_t, 0, NULL, NULL, NULL, NULL
    FROM e WHERE usage_class = 'over' OR (usage_class = 'ok' AND (in_t > @above${byModel}))
    GROUP BY ${key}, in_t, out_t, cr_t, cw_t`;
  return `WITH r AS MATERIALIZED (${fields}),
    e AS NOT MATERIALIZED (SELECT * FROM r WHERE kind = 'entry')
    SELECT 'g' AS part, 'entry' AS kind, ${key}, count(*) AS n, sum(bytes) AS bytes,
      sum(dur_us) AS dur_us,
      sum(CASE WHEN verdict = 'accepted' THEN 1 ELSE 0 END) AS accepted,
      sum(CASE WHEN verdict = 'rejected' THEN 1 ELSE 0 END) AS rejected,
      sum(in_t) AS in_t, sum(out_t) AS out_t, sum(cr_t) AS cr_t, sum(cw_t) AS cw_t,
      0 AS new_ids, min(key${c}) AS first_key, max(key${c}) AS last_key,
      min(at) AS oldest, max(at) AS newest
    FROM e GROUP BY ${key}
    ${detail}
    UNION ALL
    SELECT 'o', kind, ${none}, count(*), 0, 0, 0, 0, 0, 0, 0, 0, 0,
      min(key${c}), max(key${c}), NULL, NULL
    FROM r WHERE kind ${d.differs} 'entry' GROUP BY kind
    UNION ALL
    SELECT 'i', 'entry', ${none}, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      count(DISTINCT ns || ':' || id), min(key${c}), max(key${c}), NULL, NULL
    FROM e${
      // Beside the summary: only the ids it does not hold (it counts its own).
      liveOnly
        ? " WHERE NOT EXISTS (SELECT 1 FROM invocache_stats_ids s WHERE s.ns = e.ns AND s.id = e.id)"
        : ""
    }`;
}

/**
 * The first key past every key that starts with `prefix` (its last
 * character bumped: keys are ASCII), or undefined for no prefix.
 */
function prefixEnd(prefix: string): string | undefined {
  const last = prefix.charCodeAt(prefix.length - 1);
  if (prefix === "" || last >= 0x7f) return undefined;
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

/** The namespace and id of an entry key (`<namespace>:e:<id>:<occurrence>`). */
function pairOfKey(key: string): [string, string] {
  const parts = key.split(":");
  return [parts[0] ?? "", parts[2] ?? ""];
}

/** The group key of a `g` or `u` row. */
function statsKeyOfRow(row: Record<string, unknown>) {
  return statsKeyFromColumns({
    namespace: row.ns,
    role: row.role,
    model: row.model,
    toolServer: row.tool_server,
    toolName: row.tool_name,
    toolVersion: row.tool_version,
    usageModel: row.usage_model,
    usage: row.usage_class,
  });
}

/** The token columns of a `g` row (sums) or a `u` row (one entry's counts). */
function tokensOfRow(row: Record<string, unknown>) {
  return {
    inputTokens: Number(row.in_t),
    outputTokens: Number(row.out_t),
    cacheReadTokens: Number(row.cr_t),
    cacheWriteTokens: Number(row.cw_t),
  };
}

/** Binary order of keys, as the indexes sort them (keys are the ASCII keys we write). */
function maxKey(a: string | undefined, b: string): string {
  return a === undefined || b > a ? b : a;
}

/**
 * Sum the stored metadata of `query` with `run` (the store's statement
 * runner, positional parameters) in `dialect`, leaving out rows expired at `now`.
 *
 * @throws StoreError when a row's metadata is missing (cleared meanwhile by
 *   an older writer), as the listing does.
 */
export async function statsSqlMeta(
  run: (sql: string, params: unknown[]) => Promise<Rows>,
  dialect: Dialect,
  query: MetaStatsQuery,
  now: number,
  pageSize = STATS_PAGE,
  onProgress?: (rows: number) => void,
): Promise<MetaStats> {
  const prefix = query.prefix ?? "";
  const details = [...new Set(query.usageDetail ?? [])];
  const upper = prefixEnd(prefix);
  // Past any token count: no entry is detailed by its size.
  const above = Math.min(
    query.usageDetailAbove ?? Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER,
  );
  // The columns where the store has them; the JSON alone on a store not migrated to them.
  const cols = (await run(dialect.colsReady, [])).length > 0;
  // The whole store (no namespace), from the summary where the store keeps
  // one; the paged statement then reads only the rows it leaves out.
  const live =
    cols && prefix === "" && above >= 0 && (await run(dialect.summary.ready, [])).length > 0;
  const text = pageStatement(
    dialect,
    details.length,
    prefix !== "",
    upper !== undefined,
    cols,
    live,
  );
  const named = (after: string) => {
    const values: Record<string, unknown> = { after, limit: pageSize, now, above };
    if (prefix !== "") values.prefix = prefix;
    if (upper !== undefined) values.upper = upper;
    for (const [i, model] of details.entries()) values[`d${i}`] = model;
    return dialect.bind(text, values);
  };
  const sum = new MetaStatsSum();
  if (live) await addSummary(run, dialect, sum, details, above);
  let after = "";
  let firstProblem: string | undefined;
  let seen = 0;
  while (true) {
    const { sql, params } = named(after);
    const rows = await run(sql, params);
    let count = 0;
    let last: string | undefined;
    // Ids: the page's, joined to the pages before by its first and last entries.
    let idPage: { n: number; first: string; last: string } | undefined;
    for (const row of rows) {
      const n = Number(row.n);
      if (row.part === "i") {
        // The page's distinct ids, and its first and last entry (none: no entry).
        if (row.first_key != null) {
          idPage = {
            n: Number(row.new_ids),
            first: String(row.first_key),
            last: String(row.last_key),
          };
        }
        continue;
      }
      if (row.part === "u") {
        // Entries the `g` rows count too: not part of the page's count.
        sum.addUsage({ ...statsKeyOfRow(row), ...tokensOfRow(row), entries: n });
        continue;
      }
      count += n;
      last = maxKey(last, String(row.last_key));
      const kind = String(row.kind);
      if (row.part === "o") {
        if (kind === "missing") {
          throw new StoreError(
            "",
            "statsMeta",
            `the metadata of ${String(row.first_key)} is missing (written meanwhile by an older invocache?); run \`invocache migrate-store\``,
          );
        }
        if (kind === "run") sum.addRuns(n);
        if (kind === "problem") {
          sum.addProblems(n);
          const key = String(row.first_key);
          if (firstProblem === undefined || key < firstProblem) firstProblem = key;
        }
        continue;
      }
      sum.addGroup({
        ...statsKeyOfRow(row),
        ...tokensOfRow(row),
        entries: n,
        bytes: Number(row.bytes),
        durationUs: Number(row.dur_us),
        accepted: Number(row.accepted),
        rejected: Number(row.rejected),
      });
      sum.addTimes(String(row.oldest), String(row.newest));
    }
    if (idPage !== undefined) sum.addIds(idPage.n, pairOfKey(idPage.first), pairOfKey(idPage.last));
    seen += count;
    onProgress?.(seen);
    if (count < pageSize || last === undefined) break;
    after = last;
  }
  if (firstProblem !== undefined) {
    const one = dialect.bind(dialect.metaOf, { key: firstProblem });
    const [row] = await run(one.sql, one.params);
    const meta = row?.m_meta == null ? undefined : decodeMeta(firstProblem, String(row.m_meta));
    // Rewritten since the page was read: the key still names the problem.
    sum.addProblems(0, { key: firstProblem, problem: meta?.problem ?? firstProblem });
  }
  return sum.result();
}

/** Fold the summary's groups, ids, times and exact token counts into `sum`. */
async function addSummary(
  run: (sql: string, params: unknown[]) => Promise<Rows>,
  dialect: Dialect,
  sum: MetaStatsSum,
  details: readonly string[],
  above: number,
): Promise<void> {
  const s = dialect.summary;
  if (s.compact !== undefined) {
    const [row] = await run(s.compact.count, []);
    // A reader that may not write (a read-only role) sums the deltas as they are.
    if (Number(row?.n ?? 0) > PG_COMPACT_ABOVE) await run(s.compact.fold, []).catch(() => {});
  }
  for (const row of await run(s.groups, [])) {
    sum.addGroup({
      ...statsKeyOfRow(row),
      ...tokensOfRow(row),
      entries: Number(row.n),
      bytes: Number(row.bytes),
      durationUs: Number(row.dur_us),
      accepted: Number(row.accepted),
      rejected: Number(row.rejected),
    });
  }
  const values: Record<string, unknown> = { above };
  for (const [i, model] of details.entries()) values[`d${i}`] = model;
  const usages = dialect.bind(s.usages(details.length), values);
  for (const row of await run(usages.sql, usages.params)) {
    sum.addUsage({ ...statsKeyOfRow(row), ...tokensOfRow(row), entries: Number(row.n) });
  }
  const [ids] = await run(s.ids, []);
  sum.addDistinctIds(Number(ids?.n ?? 0));
  const [oldest] = await run(s.oldest, []);
  const [newest] = await run(s.newest, []);
  if (oldest?.at != null && newest?.at != null) sum.addTimes(String(oldest.at), String(newest.at));
}

/**
 * {@link statsSqlMeta} on a SQLite connection (either driver, read-only or
 * not): `query` takes its parameters spread, as sqlite-meta.ts's readers do.
 */
export function statsSqliteMeta(
  query: (sql: string, ...params: unknown[]) => Promise<Rows>,
  q: MetaStatsQuery,
  now: number,
  onProgress?: (rows: number) => void,
): Promise<MetaStats> {
  return statsSqlMeta(
    (sql, params) => query(sql, ...params),
    SQLITE_DIALECT,
    q,
    now,
    undefined,
    onProgress,
  );
}
