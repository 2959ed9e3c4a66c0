/**
 * Renders rows as an aligned table that is also valid Markdown, so the
 * terminal output can be pasted into docs/performance.md as it is.
 */
import type { BenchRow } from "./row.js";

function fmt(v: number | null): string {
  if (v === null) return "–";
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

/** The table, then one line per row naming its baseline and notes. */
export function renderTable(rows: readonly BenchRow[]): string {
  const head = ["measurement", "unit", "invocache", "baseline", "ratio", "target", "result"];
  const body = rows.map((r) => [
    r.measurement,
    r.unit,
    fmt(r.invocache),
    fmt(r.baseline),
    r.ratio === null ? "–" : `${r.ratio.toFixed(2)}×`,
    `${r.better === "higher" ? "≥" : "≤"} ${Number(r.target.toFixed(2))}×`,
    r.status,
  ]);
  const widths = head.map((h, c) => Math.max(h.length, ...body.map((line) => line[c]!.length)));
  const numeric = (c: number) => c >= 2 && c <= 5;
  const line = (cells: readonly string[]) =>
    `| ${cells.map((s, c) => (numeric(c) ? s.padStart(widths[c]!) : s.padEnd(widths[c]!))).join(" | ")} |`;
  const rule = `| ${widths.map((w, c) => (numeric(c) ? `${"-".repeat(w - 1)}:` : "-".repeat(w))).join(" | ")} |`;
  const notes = rows.map(
    (r) => `- ${r.measurement}: baseline = ${r.baselineName}${r.note ? `; ${r.note}` : ""}`,
  );
  return [line(head), rule, ...body.map(line), "", ...notes].join("\n");
}
