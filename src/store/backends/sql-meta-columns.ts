/**
 * The metadata fields `stats` groups and sums, and `prune` filters on, as
 * columns of their own on SQLite and PostgreSQL, beside `m_meta` (which
 * stays the source of truth for everything else). Summing a million rows
 * from JSON cost 13-15 µs a row (json_extract / jsonb casts of six fields);
 * from columns it costs what reading the columns costs.
 *
 * One list, so the writer (`metaColumnValues`, from the metadata in JS), the
 * migration (the same fields read from `m_meta` in SQL) and the stats
 * statement's fallback (rows whose columns are not filled) spell each field
 * once, and the three agree to the digit.
 *
 * Validity: `m_cols` holds the `m_rev` the columns were written for. A
 * writer that sets the metadata but not the columns (the invocache before
 * them) bumps `m_rev` and leaves `m_cols`, so its row reads from `m_meta`
 * again; a write of the value alone (keyv) clears `m_cols` by trigger as it
 * clears `m_meta`. The columns of a row are used only when `m_cols = m_rev`.
 */
import { durationUs } from "../meta-stats.js";
import type { StoredMeta } from "../meta-types.js";

/** How a database reads one field of the metadata JSON `m` (sql-meta-stats.ts's dialects). */
export interface JsonSpelling {
  /** A text field at `path` (NULL when absent). */
  text(path: string[]): string;
  /** A number field at `path` (NULL when absent). */
  num(path: string[]): string;
  /** An integer field at `path` (NULL when absent). */
  int(path: string[]): string;
  /** `floor(x)` of a non-negative double, as an integer. */
  floor(x: string): string;
}

/** One column: its name, its type, how SQL reads it from the JSON, how JS computes it. */
export interface MetaColumn {
  name: string;
  type: "text" | "num" | "int";
  json(d: JsonSpelling): string;
  of(m: StoredMeta): string | number | null;
}

const text = (name: string, path: string[], of: MetaColumn["of"]): MetaColumn => ({
  name,
  type: "text",
  json: (d) => d.text(path),
  of,
});
const int = (name: string, path: string[], of: MetaColumn["of"]): MetaColumn => ({
  name,
  type: "int",
  json: (d) => d.int(path),
  of,
});

/**
 * The usage class of `MetaStatsKey.usage` as the SQL spells it: "none"
 * without a stored usage shape, "over" when the cache counts pass the input.
 */
function usageClassOf(m: StoredMeta): string {
  const u = m.usage;
  if (u?.shape == null) return "none";
  return (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0) > (u.inputTokens ?? 0)
    ? "over"
    : "ok";
}

function usageClassJson(d: JsonSpelling): string {
  const cr = `coalesce(${d.int(["usage", "cacheReadTokens"])}, 0)`;
  const cw = `coalesce(${d.int(["usage", "cacheWriteTokens"])}, 0)`;
  const input = `coalesce(${d.int(["usage", "inputTokens"])}, 0)`;
  return `CASE WHEN ${d.text(["usage", "shape"])} IS NULL THEN 'none'
        WHEN ${cr} + ${cw} > ${input} THEN 'over' ELSE 'ok' END`;
}

/** The columns, in the order of the statements' parameters. */
export const META_COLUMNS: readonly MetaColumn[] = [
  text("m_kind", ["kind"], (m) => m.kind),
  { name: "m_exp", type: "num", json: (d) => d.num(["expires"]), of: (m) => m.expires ?? null },
  text("m_ns", ["namespace"], (m) => m.namespace ?? null),
  text("m_id", ["id"], (m) => m.id ?? null),
  int("m_occ", ["occurrence"], (m) => m.occurrence ?? null),
  text("m_role", ["role"], (m) => m.role ?? null),
  text("m_model", ["model"], (m) => m.model ?? null),
  text("m_tsrv", ["tool", "server"], (m) => m.tool?.server ?? null),
  text("m_tname", ["tool", "name"], (m) => m.tool?.name ?? null),
  int("m_tver", ["tool", "version"], (m) => m.tool?.version ?? null),
  text("m_umodel", ["usage", "model"], (m) => m.usage?.model ?? null),
  { name: "m_uclass", type: "text", json: usageClassJson, of: usageClassOf },
  int("m_in", ["usage", "inputTokens"], (m) => m.usage?.inputTokens ?? null),
  int("m_out", ["usage", "outputTokens"], (m) => m.usage?.outputTokens ?? null),
  int("m_cr", ["usage", "cacheReadTokens"], (m) => m.usage?.cacheReadTokens ?? null),
  int("m_cw", ["usage", "cacheWriteTokens"], (m) => m.usage?.cacheWriteTokens ?? null),
  int("m_bytes", ["bytes"], (m) => m.bytes),
  {
    name: "m_dur_us",
    type: "int",
    // Whole µs rounded half up, as meta-stats.ts's durationUs.
    json: (d) => d.floor(`${d.num(["durationMs"])} * 1000 + 0.5`),
    of: (m) => (m.durationMs === undefined ? null : durationUs(m.durationMs)),
  },
  text("m_verdict", ["verdict"], (m) => m.verdict ?? null),
];

/** The column names, comma-separated, in parameter order. */
export const META_COLUMN_NAMES = META_COLUMNS.map((c) => c.name).join(", ");

/** The columns' values for `meta`, in parameter order. */
export function metaColumnValues(meta: StoredMeta): Array<string | number | null> {
  return META_COLUMNS.map((c) => c.of(meta));
}

/** The column by name (the stats statement reads some of them by their role). */
export function metaColumn(name: string): MetaColumn {
  const found = META_COLUMNS.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no metadata column ${name}`);
  return found;
}
