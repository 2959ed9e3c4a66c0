/**
 * Renders the normalization rule table (NORMALIZATION_RULES, the data) as the
 * generated section of docs/normalization.md, so the documentation cannot
 * drift from the code: test/normalize/doc.test.ts fails when it does.
 *
 *   npx tsx scripts/render-normalization-doc.ts          # rewrite the section
 *   npx tsx scripts/render-normalization-doc.ts --check  # exit 1 if stale
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  NORMALIZATION_RULES,
  NORMALIZATION_VERSION,
  type NormalizationRule,
} from "../src/normalize/index.js";

export const BEGIN_MARKER =
  "<!-- BEGIN GENERATED: normalization rules (scripts/render-normalization-doc.ts) -->";
export const END_MARKER = "<!-- END GENERATED: normalization rules -->";

export const DOC_PATH = fileURLToPath(new URL("../docs/normalization.md", import.meta.url));

/**
 * A string as a JSON literal in which every character a reader could not see
 * or tell apart (controls, combining marks, format characters, non-ASCII
 * spaces, surrogates) is a `\uXXXX` escape.
 */
export function visible(s: string): string {
  return JSON.stringify(s).replace(/[\p{M}\p{C}\p{Z}]/gu, (c) => {
    if (c === " ") return c;
    let out = "";
    for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
    return out;
  });
}

/** Markdown inline code that survives a table cell. */
function code(s: string): string {
  const fence = s.includes("`") ? "``" : "`";
  const pad = s.startsWith("`") || s.endsWith("`") ? " " : "";
  return `${fence}${pad}${s.replaceAll("|", "\\|")}${pad}${fence}`;
}

function cell(s: string): string {
  return s.replaceAll("|", "\\|").replaceAll("\n", " ");
}

function replacementCell(rule: NormalizationRule): string {
  if (rule.name === "unicode-nfc") return "NFC form";
  if (rule.replacement.trim() === "") return code(visible(rule.replacement));
  return code(rule.replacement);
}

/** Width of a cell as a Markdown formatter counts it: code points. */
const width = (s: string): number => [...s].length;

/**
 * A table with padded columns, the layout `biome format` gives Markdown
 * tables, so that formatting the docs leaves the generated section unchanged.
 */
function alignedTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, c) => Math.max(3, width(h), ...rows.map((r) => width(r[c]!))));
  const line = (cells: string[]) =>
    `| ${cells.map((x, c) => x + " ".repeat(widths[c]! - width(x))).join(" | ")} |`;
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)];
}

/**
 * Markdown with table padding removed (runs of spaces and of `-` in table
 * rows), to compare tables by content whatever the formatter's layout.
 */
export function squashTables(md: string): string {
  return md
    .split("\n")
    .map((l) => (l.startsWith("|") ? l.replace(/ {2,}/g, " ").replace(/-{3,}/g, "---") : l))
    .join("\n");
}

/** The generated section (between the markers), table first, then the patterns. */
export function renderNormalizationTable(
  rules: readonly NormalizationRule[] = NORMALIZATION_RULES,
): string {
  const header = ["#", "Rule", "Replacement", "What it does", "Example input → output"];
  const rows = rules.map((rule, i) => [
    String(i + 1),
    code(rule.name),
    replacementCell(rule),
    cell(rule.description ?? ""),
    rule.example === undefined
      ? ""
      : `${code(visible(rule.example.input))} → ${code(visible(rule.example.output))}`,
  ]);
  const lines = [
    `Table version: \`NORMALIZATION_VERSION = ${NORMALIZATION_VERSION}\`. Rules apply in this order.`,
    "",
    ...alignedTable(header, rows),
  ];
  lines.push(
    "",
    "The patterns that state the rules (the scanner implements exactly these, plus the",
    "timestamp rule's field checks described under Timestamps below; the test suite",
    "compares the two). The whitespace rule's pattern applies outside fenced code.",
    "Root rules have no fixed pattern: theirs is built from the root spellings of the call.",
    "",
    "```text",
  );
  const width = Math.max(...rules.map((r) => r.name.length));
  for (const rule of rules) {
    if (rule.pattern !== undefined) {
      lines.push(`${rule.name.padEnd(width)}  /${rule.pattern.source}/${rule.pattern.flags}`);
    }
  }
  lines.push("```");
  return lines.join("\n");
}

/** `doc` with its generated section replaced by the current rendering. */
export function updateNormalizationDoc(doc: string): string {
  const start = doc.indexOf(BEGIN_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (start < 0 || end < start) {
    throw new Error(`docs/normalization.md must contain ${BEGIN_MARKER} and ${END_MARKER}`);
  }
  return `${doc.slice(0, start + BEGIN_MARKER.length)}\n${renderNormalizationTable()}\n${doc.slice(end)}`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const doc = readFileSync(DOC_PATH, "utf8");
  const next = updateNormalizationDoc(doc);
  if (process.argv.includes("--check")) {
    if (next !== doc) {
      console.error(
        "docs/normalization.md is stale: run npx tsx scripts/render-normalization-doc.ts",
      );
      process.exit(1);
    }
    console.log("docs/normalization.md is up to date");
  } else if (next !== doc) {
    writeFileSync(DOC_PATH, next);
    console.log("docs/normalization.md updated");
  } else {
    console.log("docs/normalization.md already up to date");
  }
}
