/**
 * Writing a cassette: canonical, exact, diff-friendly YAML.
 *
 * - Exact: with `lineWidth: 0` nothing is folded (the issue measured the
 *   default folding changing 100 of 1,000 multi-line strings on a round
 *   trip). A multi-line string is a literal block (`|`) when our own check
 *   says a block holds it exactly, else a one-line double-quoted scalar with
 *   escapes (CR, control characters, lone surrogates, lines of blanks…). We
 *   do not rely on the `yaml` package's own fallback: the fast-check round
 *   trip (test/cassette/roundtrip.test.ts) found it writing blank-only lines
 *   and multi-line quoted strings that read back different.
 * - Canonical: the text is a pure function of the items, in their order, so
 *   unchanged items always produce the same bytes (stable re-records).
 * - Diff-friendly: each item is rendered on its own and cached by identity,
 *   so a write re-renders only items that changed, and a changed item changes
 *   only its own lines. Small flat objects inside lists, and every stream
 *   event however long, are written one per line in flow style.
 */
import type { ToStringOptions } from "yaml";
import { type CassetteItem, toFileEntry, toFileValue } from "./item.js";
import { yaml } from "./yaml-lib.js";

/**
 * The format version in the header; bumped by any change readers must know about.
 *
 * @example
 * emitCassette([]).startsWith(`invocache: ${CASSETTE_FORMAT}\n`) // true
 */
export const CASSETTE_FORMAT = 1;

const TO_STRING: ToStringOptions = {
  lineWidth: 0, // never fold: folding is where exactness and stable diffs are lost
  minContentWidth: 0,
  indent: 2,
  indentSeq: true,
  blockQuote: "literal",
  singleQuote: false, // one quoting style (double), so a value has one spelling
  nullStr: "null",
  trueStr: "true",
  falseStr: "false",
  flowCollectionPadding: true,
  // Quoted strings stay on one line with \n escapes: yaml's multi-line
  // double-quoted form mis-escapes a line of blanks (`\\ ` for `\ `).
  doubleQuotedMinMultiLineLength: Number.POSITIVE_INFINITY,
};

/** Widest object (as JSON) written on one line inside a list. */
const FLOW_MAX = 120;

/** Rendered items, by identity (items are immutable). */
const chunks = new WeakMap<CassetteItem, { text: string; entry: boolean }>();

/**
 * The whole file for `items` (entries first, then other values, each in
 * the given order).
 *
 * @example
 * emitCassette([{ key: "ns:run:r1", value: { v: 1 } }])
 * // "invocache: 1\nentries: []\nvalues:\n  - key: ns:run:r1\n    value:\n      v: 1\n"
 */
export function emitCassette(items: Iterable<CassetteItem>): string {
  const entries: string[] = [];
  const values: string[] = [];
  for (const item of items) {
    let chunk = chunks.get(item);
    if (chunk === undefined) {
      const entry = toFileEntry(item);
      chunk = {
        text: entry === undefined ? renderItem(toFileValue(item)) : renderItem(entry, BLOCK_FIELDS),
        entry: entry !== undefined,
      };
      chunks.set(item, chunk);
    }
    (chunk.entry ? entries : values).push(chunk.text);
  }
  let out = `invocache: ${CASSETTE_FORMAT}\n`;
  out += entries.length === 0 ? "entries: []\n" : `entries:\n${entries.join("")}`;
  if (values.length > 0) out += `values:\n${values.join("")}`;
  return out;
}

/**
 * The text of an item last emitted by {@link emitCassette} and whether it
 * went to the `entries:` section, for incremental re-reads.
 */
export function emittedChunk(item: CassetteItem): { text: string; entry: boolean } | undefined {
  return chunks.get(item);
}

/**
 * Entry fields written as block scalars even on one line, when long. A
 * normalized prompt has no line breaks (whitespace runs collapse), but as a
 * block it starts on its own line, at its own indentation, where it reads as
 * text. Short ones stay inline (`task: T-1`).
 */
const BLOCK_FIELDS: ReadonlyArray<readonly string[]> = [
  ["manifest", "prompt"],
  ["manifest", "task"],
];
const BLOCK_MIN_LENGTH = 60;

/**
 * Whether a one-line string can be a literal block exactly. The `yaml`
 * package checks multi-line strings itself, but not forced one-liners: a
 * whitespace-only one reads back as "" (found by the round-trip property
 * test). So: printable text, no whitespace at either end.
 */
function safeOneLineBlock(s: string): boolean {
  return (
    s.length >= BLOCK_MIN_LENGTH &&
    !/^\s|\s$/.test(s) &&
    !/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/.test(s) &&
    s.isWellFormed()
  );
}

/** One `  - …` list item, ending in a newline. */
function renderItem(obj: object, blockFields: ReadonlyArray<readonly string[]> = []): string {
  const { Document, isMap, isScalar, isSeq, Scalar, visit } = yaml();
  const doc = new Document(obj, { aliasDuplicateObjects: false, version: "1.2" });
  for (const path of blockFields) {
    const node = doc.getIn(path, true);
    if (isScalar(node) && typeof node.value === "string" && safeOneLineBlock(node.value)) {
      node.type = Scalar.BLOCK_LITERAL;
    }
  }
  visit(doc, {
    Scalar(key, node, path) {
      if (typeof node.value !== "string" || !node.value.includes("\n")) return;
      // Never a block for a mapping key (`? |` keys are unreadable) or inside a flow collection.
      const inFlow = path.some((p) => (isMap(p) || isSeq(p)) && p.flow === true);
      node.type =
        key !== "key" && !inFlow && safeBlock(node.value)
          ? Scalar.BLOCK_LITERAL
          : Scalar.QUOTE_DOUBLE;
    },
    Seq(_key, seq) {
      for (const item of seq.items) {
        if (!isMap(item)) continue;
        const value: unknown = item.toJSON();
        if (isFlat(value) || isStreamEvent(value)) item.flow = true;
      }
    },
  });
  const lines = doc.toString(TO_STRING).split("\n");
  lines.pop(); // the text ends with "\n"
  let out = `  - ${lines[0]}\n`;
  // Re-indent under the list marker. Empty lines stay empty (block scalars
  // read them as empty lines at any indentation; spaces would be noise).
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    out += line === "" ? "\n" : `    ${line}\n`;
  }
  return out;
}

/**
 * Whether a multi-line string can be a literal block exactly. The `yaml`
 * package falls back to quotes for control characters and the like, but
 * mis-writes lines of only spaces or tabs (they read back as indentation or
 * as empty lines; found by the round-trip property test). We decide
 * ourselves, conservatively: printable characters only, and every line
 * either empty or holding something besides blanks. Anything else is
 * double-quoted with escapes, which is always exact.
 */
function safeBlock(s: string): boolean {
  if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/.test(s))
    return false;
  if (!s.isWellFormed()) return false;
  for (const line of s.split("\n")) {
    if (line !== "" && line.trim() === "") return false;
  }
  return true;
}

/**
 * A recorded stream event (`{ t, data }`, see RecordedStream): always one
 * line, however long, so a stream reads one event per line in the file and
 * in diffs (an OpenAI chunk in block style takes about eight lines). Flow
 * style never folds with `lineWidth: 0`, and strings inside it are
 * double-quoted with escapes when they hold a line break, so the line is
 * exact and re-emits byte for byte.
 */
function isStreamEvent(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return (
    keys.length === 2 &&
    keys[0] === "t" &&
    keys[1] === "data" &&
    typeof (value as { t: unknown }).t === "number"
  );
}

/**
 * A small object: reads best on one line, `{ t: 0, data: "chunk\n" }` or
 * `{ event: delta, json: { text: Hel } }` (a stream event), so a stream is
 * one line per event, in the file and in diffs. Measured on its JSON text.
 */
function isFlat(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.keys(value).length > 0 && JSON.stringify(value).length <= FLOW_MAX;
}
