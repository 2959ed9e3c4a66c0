/**
 * Small formatters shared by the human output of every command.
 */
import { stripVTControlCharacters } from "node:util";

/**
 * A duration for people: `0.4 ms`, `312 ms`, `1.43 s`.
 *
 * @example
 * formatMs(1432.6) // "1.43 s"
 */
export function formatMs(ms: number): string {
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/**
 * A size for people: `812 B`, `3.4 KiB`, `12.0 MiB`.
 *
 * @example
 * formatBytes(3481) // "3.4 KiB"
 */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

/**
 * `n` and the word, plural when `n` is not 1.
 *
 * @example
 * plural(2, "entry", "entries") // "2 entries"
 */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * An ISO time shortened for a table column: `2026-01-31 12:00:04`.
 *
 * @example
 * shortTime("2026-01-31T12:00:04.250Z") // "2026-01-31 12:00:04"
 */
export function shortTime(iso: string): string {
  return iso.replace("T", " ").replace(/\.\d+/, "").replace(/Z$/, "");
}

/**
 * One line of text at most `max` characters long (newlines shown as `⏎`).
 *
 * @example
 * oneLine("a\nb", 10) // "a⏎b"
 */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\r?\n/g, "⏎");
  return flat.length > max ? `${flat.slice(0, Math.max(0, max - 1))}…` : flat;
}

/**
 * Visible width of a string that may hold color codes.
 *
 * @example
 * visibleWidth("\x1b[31mok\x1b[39m") // 2
 */
export function visibleWidth(text: string): number {
  return [...stripVTControlCharacters(text)].length;
}

/** Column alignment for {@link renderTable}. */
export type Align = "left" | "right";

/**
 * A plain-text table: a header row, then rows, columns padded to the widest
 * cell. `style` colors the header (dim) when given.
 *
 * @example
 * renderTable(["id", "hits"], [["3f2a9c0d1b7e", "2"]], { align: ["left", "right"] })
 * // "id            hits\n3f2a9c0d1b7e     2\n"
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  opts: { align?: readonly Align[]; indent?: string; headerStyle?: (s: string) => string } = {},
): string {
  const widths = header.map((h, i) =>
    Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ""))),
  );
  const indent = opts.indent ?? "";
  const line = (cells: readonly string[]) => indent + tableLine(cells, widths, opts.align);
  const head = line(header);
  return `${opts.headerStyle ? opts.headerStyle(head) : head}\n${rows.map((r) => `${line(r)}\n`).join("")}`;
}

/**
 * One table row with the given column widths (a wider cell pushes the rest
 * of its row): what {@link renderTable} prints per row, and what a command
 * streaming rows prints with widths fixed up front.
 *
 * @example
 * tableLine(["ab", "7"], [4, 3], ["left", "right"]) // "ab      7"
 */
export function tableLine(
  cells: readonly string[],
  widths: readonly number[],
  align: readonly Align[] = [],
): string {
  return cells
    .map((cell, i) => {
      const pad = " ".repeat(Math.max(0, (widths[i] ?? 0) - visibleWidth(cell)));
      if (i === cells.length - 1 && align[i] !== "right") return cell;
      return align[i] === "right" ? pad + cell : cell + pad;
    })
    .join("  ")
    .trimEnd();
}
