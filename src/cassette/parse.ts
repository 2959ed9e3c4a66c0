/**
 * Reading a cassette: YAML (core schema only) into checked store items, or a
 * `CassetteError` naming the file, line and column of the first problem.
 *
 * Safety: the core schema has no custom tags, so YAML cannot construct
 * anything but plain data; merge keys (`<<`) are off, duplicate keys are an
 * error, aliases are capped (billion laughs), and a `__proto__` key is just a
 * key (the `yaml` package defines it as an own property, like JSON.parse).
 * Warnings (an unknown `!tag`) are errors too: a cassette means exactly what
 * it says or it is refused.
 *
 * Speed: text in the exact form our writer produces is read by the fast
 * reader (fast-parse.ts, several times the `yaml` package's speed and a
 * fraction of its memory); anything else (a hand edit, comments, another
 * style) goes through `parseDocument` + `toJS`, with the same result. The
 * checks run once on the value either way; line and column are only worked
 * out on failure, from the full parser's syntax tree. For the cassette
 * store's load, the checks of each item's stored value and of each entry's id
 * are left to the item's first use (owed-checks.ts): the file's structure
 * (header, sections, fields, keys, expiry) is still checked on load.
 */
import type { Document, YAMLError } from "yaml";
import { CassetteError, EntryFormatError, UnsupportedEntryVersionError } from "../errors.js";
import type { Manifest } from "../identity/index.js";
import { manifestIdentity } from "../identity/index.js";
import type { JsonValue } from "../json/index.js";
import { assertJsonValue } from "../json/index.js";
import { validateEntry } from "../store/index.js";
import { assertStoreKey } from "../store/internal.js";
import { CASSETTE_FORMAT } from "./emit.js";
import { parseEmitted } from "./fast-parse.js";
import { type CassetteItem, type FileEntry, fromFileEntry } from "./item.js";
import { type CheckKind, type CheckRules, oweChecks } from "./owed-checks.js";
import { yaml } from "./yaml-lib.js";

/** Where a cassette came from, for messages. */
export interface CassetteSource {
  /** Absolute path. */
  file: string;
  /** How to show it (relative to the working directory when inside it). */
  display: string;
  /** The store url, for `StoreError.store`. */
  url: string;
}

type Segment = string | number;

/**
 * How deeply a stored value may nest (collections inside collections). Deeper
 * values are refused when written and when read: far past any real answer,
 * and well inside what the parser, the checks and the writer can walk without
 * running out of stack (a stack overflow is not a place in a file).
 */
export const MAX_VALUE_DEPTH = 256;

/** A value sits at most this deep in the file: root mapping, list, item mapping. */
const MAX_FILE_DEPTH = MAX_VALUE_DEPTH + 3;

/**
 * Whether `value` nests deeper than {@link MAX_VALUE_DEPTH}. Iterative: it
 * must not overflow the stack on the values it is there to refuse.
 */
export function tooDeep(value: unknown): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth + 1 > MAX_VALUE_DEPTH) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Whether a checked entry's id is the identity of its stored manifest, by the
 * identity module's own recipe. A mismatch is a hand edit, a bad merge or
 * swapped `id` lines: the entry would answer a question it was not recorded
 * for. No exception for redacted manifests: the recorder builds the manifest
 * with the same secret rule the stores apply (src/secrets), so a stored
 * manifest holds its placeholders from the start and always hashes to its id.
 */
export function entryIdMatches(id: string, manifest: Manifest): boolean {
  return manifestIdentity(manifest) === id;
}

const FIX =
  "Fix the file by hand (see docs/cassettes.md) or delete it and re-record with INVOCACHE_MODE=record; " +
  "invocache never overwrites a cassette it cannot read.";

/**
 * Parse and check a cassette's text.
 *
 * @throws CassetteError with `line` and `column` for malformed YAML or a
 * broken entry, without them for problems of the file as a whole.
 * @example
 * parseCassette("invocache: 1\nentries: []\n", src) // []
 */
export function parseCassette(text: string, src: CassetteSource): CassetteItem[] {
  return parse(text, src, false);
}

/**
 * {@link parseCassette}, except that no item's stored value is checked yet
 * (an entry's envelope, a value's JSON) and no entry's id against its
 * manifest: every item owes those checks, made when the store first serves
 * it (owed-checks.ts). The file's structure is checked as by
 * {@link parseCassette}. For the cassette store's load only.
 */
export function parseCassetteOwingChecks(text: string, src: CassetteSource): CassetteItem[] {
  return parse(text, src, true);
}

/**
 * Mark `item`, `entries[index]` of the cassette at `src` read back from the
 * parsed-form cache, as owing its id check again (the file is re-read for
 * the error's place if it fails). Its value was checked before it was cached.
 */
export function oweCachedIdCheck(item: CassetteItem, index: number, src: CassetteSource): void {
  oweChecks(item, {
    section: "entries",
    index,
    file: src.file,
    text: undefined,
    value: false,
    id: true,
    rules: checkRules(src),
  });
}

/** The rules of the checks a load of `src` leaves owing (one object per load). */
function checkRules(src: CassetteSource): CheckRules {
  return {
    valueOk: (item, section) => (section === "entries" ? envelopeOk(item) : jsonOk(item)),
    error: (text, section, index, item, kind) =>
      owedCheckError(text, src, section, index, item, kind),
  };
}

function envelopeOk(item: CassetteItem): boolean {
  try {
    validateEntry(item.value, "");
    return true;
  } catch {
    return false;
  }
}

function jsonOk(item: CassetteItem): boolean {
  try {
    assertJsonValue(item.value, "value");
    return true;
  } catch {
    return false;
  }
}

function parse(text: string, src: CassetteSource, defer: boolean): CassetteItem[] {
  if (!/\S/.test(text)) {
    throw new CassetteError(
      src.file,
      "load",
      `${src.display}:1:1: the file is empty, not a cassette. ${FIX}`,
      {
        url: src.url,
        line: 1,
        column: 1,
      },
    );
  }
  const fast = parseEmitted(text);
  if (fast !== undefined) {
    try {
      return new Checker(text, undefined, src, defer).items(fast);
    } catch (error) {
      // A broken entry: the full parse below finds it again, with its line and column.
      if (!(error instanceof NeedsSyntaxTree)) throw error;
    }
  }
  const doc = parseFull(text);
  const problem: YAMLError | undefined = doc.errors[0] ?? doc.warnings[0];
  if (problem !== undefined) {
    const pos = problem.linePos?.[0] ?? position(text, problem.pos[0]);
    // yaml's pretty message continues with " at line L, column C:" and a source excerpt; we give the place ourselves.
    let what = problem.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    // The parser ran out of stack on deep nesting: say what is wrong with the file instead.
    if (/call stack/i.test(what)) what = `it nests deeper than ${MAX_VALUE_DEPTH} levels`;
    throw new CassetteError(
      src.file,
      "load",
      `${src.display}:${pos.line}:${pos.col}: not a valid cassette: ${what}. ${FIX}`,
      { url: src.url, line: pos.line, column: pos.col, cause: problem },
    );
  }
  checkKeys(doc.contents, text, src, 0);
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 100 });
  } catch (cause) {
    throw new CassetteError(
      src.file,
      "load",
      `${src.display}: not a valid cassette: ${(cause as Error).message}. ${FIX}`,
      { url: src.url, cause },
    );
  }
  return new Checker(text, doc, src, defer).items(root);
}

function parseFull(text: string): Document {
  return yaml().parseDocument(text, {
    version: "1.2",
    schema: "core",
    merge: false,
    uniqueKeys: true,
    strict: true,
    prettyErrors: true,
  });
}

/** Why an entry whose id is not its manifest's identity is refused. */
function idMismatch(id: unknown, manifest: Manifest): string {
  return `${JSON.stringify(id)} is not the identity of this entry's manifest (that is ${manifestIdentity(manifest)}): a hand edit, a bad merge or swapped id lines. The entry would answer a question it was not recorded for, so it is refused`;
}

/**
 * The error of an owed check that failed for `section[index]` of `text`:
 * the whole-file load's check made again, with the syntax tree for the
 * place, so the message and place are the ones the load gives. Without the
 * text (it could not be re-read), the same message with the file only.
 */
function owedCheckError(
  text: string | undefined,
  src: CassetteSource,
  section: "entries" | "values",
  index: number,
  item: CassetteItem,
  kind: CheckKind,
): unknown {
  const doc = text === undefined ? undefined : parseFull(text);
  const checker = new Checker(text ?? "", doc, src, false, false);
  const at: Segment[] = [section, index];
  try {
    if (kind === "id") {
      // cast: an id check runs only on an item whose value check passed: the value is an entry with an id and a manifest.
      const value = item.value as unknown as { id: string; manifest: Manifest };
      checker.fail([...at, "id"], idMismatch(value.id, value.manifest));
    } else if (section === "entries") {
      checker.envelope(item, at);
    } else {
      checker.json(item.value, at);
    }
  } catch (error) {
    return error;
  }
  // Not reached: the check failed when it was made.
  return new CassetteError(
    src.file,
    "load",
    `${src.display}: ${label(at)} failed its check. ${FIX}`,
    {
      url: src.url,
    },
  );
}

/**
 * Every mapping key must be a string scalar. JavaScript object keys are
 * strings, so `toJS` would turn `1` and `"1"` (or `true` and `"true"`) into
 * one property, the last silently winning, and a collection key into its
 * printed form: data dropped without an error. Our writer quotes such keys,
 * so only a hand edit meets this. (Found by the reliability fuzz tests.)
 */
function checkKeys(node: unknown, text: string, src: CassetteSource, depth: number): void {
  const { isMap, isScalar, isSeq } = yaml();
  if ((isMap(node) || isSeq(node)) && depth + 1 > MAX_FILE_DEPTH) {
    const range = (node as { range?: [number, number, number] }).range;
    const pos = range === undefined ? undefined : position(text, range[0]);
    const where = pos === undefined ? src.display : `${src.display}:${pos.line}:${pos.col}`;
    throw new CassetteError(
      src.file,
      "load",
      `${where}: not a valid cassette: it nests deeper than ${MAX_VALUE_DEPTH} levels. ${FIX}`,
      { url: src.url, ...(pos === undefined ? {} : { line: pos.line, column: pos.col }) },
    );
  }
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = pair.key;
      if (!isScalar(key) || typeof key.value !== "string") {
        const range = (key as { range?: [number, number, number] } | null)?.range;
        const pos = range === undefined ? undefined : position(text, range[0]);
        const what = isScalar(key)
          ? `the ${key.value === null ? "null" : typeof key.value} ${JSON.stringify(String(key.value))}`
          : "a collection or alias";
        const where = pos === undefined ? src.display : `${src.display}:${pos.line}:${pos.col}`;
        throw new CassetteError(
          src.file,
          "load",
          `${where}: a mapping key is ${what}; cassette keys are strings (quote it: "${isScalar(key) ? String(key.value) : "…"}"), else two keys could become one. ${FIX}`,
          { url: src.url, ...(pos === undefined ? {} : { line: pos.line, column: pos.col }) },
        );
      }
      checkKeys(pair.value, text, src, depth + 1);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) checkKeys(item, text, src, depth + 1);
  }
}

/** Thrown by a check of a fast-read value: its message needs the place, which only the syntax tree knows. */
class NeedsSyntaxTree {}

class Checker {
  constructor(
    readonly text: string,
    /** The syntax tree, for places in messages; undefined when the fast reader read the text (or it is not at hand). */
    readonly doc: Document | undefined,
    readonly src: CassetteSource,
    /** Leave each item's value check and each entry's id check to its first use (owed-checks.ts). */
    readonly defer: boolean,
    /** The fast reader read the text: a failure needs the full parse for its place ({@link NeedsSyntaxTree}). */
    readonly fastRead = doc === undefined,
  ) {}

  /** For items left owing their checks (one per load). */
  #rules: CheckRules | undefined;

  #owe(item: CassetteItem, at: Segment[], id: boolean): void {
    this.#rules ??= checkRules(this.src);
    oweChecks(item, {
      section: at[0] as "entries" | "values",
      index: at[1] as number,
      file: this.src.file,
      text: this.text,
      value: true,
      id,
      rules: this.#rules,
    });
  }

  items(root: unknown): CassetteItem[] {
    const top = this.object(root, []);
    const version = top.invocache;
    if (typeof version === "number" && Number.isSafeInteger(version) && version > CASSETTE_FORMAT) {
      this.fail(
        ["invocache"],
        `uses cassette format ${version}, written by a newer invocache; this version reads format ${CASSETTE_FORMAT}. Upgrade invocache`,
      );
    }
    if (version !== CASSETTE_FORMAT) {
      this.fail(["invocache"], `must start with the header "invocache: ${CASSETTE_FORMAT}"`);
    }
    for (const key of Object.keys(top)) {
      if (key !== "invocache" && key !== "entries" && key !== "values") {
        this.fail(
          [key],
          `has an unknown top-level field ${JSON.stringify(key)} (expected entries, values)`,
          undefined,
          true,
        );
      }
    }
    if (!Array.isArray(top.entries))
      this.fail(["entries"], "must be a list (entries: [] when empty)");
    const values = top.values ?? [];
    if (!Array.isArray(values)) this.fail(["values"], "must be a list");

    const out: CassetteItem[] = [];
    // Where each key was first seen; its label is only worked out for a message.
    const seen = new Map<string, Segment[]>();
    const add = (item: CassetteItem, at: Segment[]) => {
      const first = seen.get(item.key);
      if (first !== undefined)
        this.fail(at, `repeats the key ${JSON.stringify(item.key)} of ${label(first)}`);
      seen.set(item.key, at);
      out.push(item);
    };
    (top.entries as unknown[]).forEach((raw, i) => {
      add(this.entry(raw, ["entries", i]), ["entries", i]);
    });
    (values as unknown[]).forEach((raw, i) => {
      add(this.value(raw, ["values", i]), ["values", i]);
    });
    return out;
  }

  entry(raw: unknown, at: Segment[]): CassetteItem {
    const e = this.object(raw, at);
    const allowed = ["id", "occurrence", "namespace", "manifest", "response", "meta", "expires"];
    for (const key of Object.keys(e)) {
      if (!allowed.includes(key)) {
        this.fail(
          [...at, key],
          `is not a field of a cassette entry (${allowed.join(", ")})`,
          undefined,
          true,
        );
      }
    }
    for (const key of ["id", "occurrence", "manifest", "response", "meta"]) {
      if (!(key in e)) this.fail(at, `is missing "${key}"`);
    }
    if (!Number.isSafeInteger(e.occurrence) || (e.occurrence as number) < 0) {
      this.fail([...at, "occurrence"], "must be an integer >= 0");
    }
    if (
      "namespace" in e &&
      (typeof e.namespace !== "string" || !/^[^:\u0000-\u001f\u007f]{1,128}$/.test(e.namespace))
    ) {
      this.fail([...at, "namespace"], 'must be 1-128 characters without ":" or control characters');
    }
    const meta = this.object(e.meta, [...at, "meta"]);
    for (const derived of ["occurrence", "attempt"] as const) {
      if (derived in meta) {
        const from = derived === "occurrence" ? "the entry's occurrence" : "manifest.attempt";
        this.fail(
          [...at, "meta", derived],
          `is not written in cassettes (it is ${from}); remove it`,
          undefined,
          true,
        );
      }
    }
    this.object(e.manifest, [...at, "manifest"]);
    const expires = this.expires(e, at);
    // cast: each member of `e` the file entry needs was checked above (object, manifest, expires): it is a FileEntry.
    const item = fromFileEntry(e as unknown as FileEntry, expires);
    if (this.defer) {
      this.#owe(item, at, true);
      return item;
    }
    this.envelope(item, at);
    // The envelope check above made it a manifest of its kind (identity's kind table).
    const manifest = e.manifest as Manifest;
    if (!entryIdMatches(e.id as string, manifest)) {
      this.fail([...at, "id"], idMismatch(e.id, manifest));
    }
    return item;
  }

  /** The envelope check of the entry `item` read at `at`. */
  envelope(item: CassetteItem, at: Segment[]): void {
    try {
      validateEntry(item.value, `${this.src.display} ${label(at)}`);
    } catch (error) {
      if (error instanceof EntryFormatError) {
        this.fail([...at, ...envelopePath(error.path)], reason(error), error);
      }
      if (error instanceof UnsupportedEntryVersionError) this.fail(at, error.message, error);
      throw error;
    }
  }

  /** The JSON check of the `values:` item's value read at `at`. */
  json(value: unknown, at: Segment[]): void {
    try {
      assertJsonValue(value, "value");
    } catch (error) {
      this.fail([...at, "value"], (error as Error).message, error);
    }
  }

  value(raw: unknown, at: Segment[]): CassetteItem {
    const v = this.object(raw, at);
    for (const key of Object.keys(v)) {
      if (key !== "key" && key !== "value" && key !== "expires") {
        this.fail(
          [...at, key],
          "is not a field of a cassette value (key, value, expires)",
          undefined,
          true,
        );
      }
    }
    if (!("key" in v) || !("value" in v)) this.fail(at, 'must have "key" and "value"');
    try {
      assertStoreKey(v.key, "key");
    } catch (error) {
      this.fail([...at, "key"], (error as Error).message, error);
    }
    if (!this.defer) this.json(v.value, at);
    const expires = this.expires(v, at);
    const item: CassetteItem = {
      key: v.key as string,
      value: v.value as JsonValue,
      ...(expires === undefined ? {} : { expires }),
    };
    if (this.defer) this.#owe(item, at, false);
    return item;
  }

  expires(obj: Record<string, unknown>, at: Segment[]): number | undefined {
    if (!("expires" in obj)) return undefined;
    const ms = typeof obj.expires === "string" ? Date.parse(obj.expires) : Number.NaN;
    if (Number.isNaN(ms)) this.fail([...at, "expires"], "must be an ISO-8601 date-time");
    return ms;
  }

  object(value: unknown, at: Segment[]): Record<string, unknown> {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.fail(
        at,
        `must be a mapping, got ${value === null ? "null" : Array.isArray(value) ? "a list" : typeof value}`,
      );
    }
    return value as Record<string, unknown>;
  }

  /** Throw a CassetteError about the node at `at` (its key when `atKey`: an unknown field). */
  fail(at: Segment[], why: string, cause?: unknown, atKey = false): never {
    if (this.fastRead) throw new NeedsSyntaxTree();
    const pos = (atKey ? this.locateKey(at) : undefined) ?? this.locate(at);
    const where =
      pos === undefined ? this.src.display : `${this.src.display}:${pos.line}:${pos.col}`;
    const subject = at.length === 0 ? "the file" : label(at);
    throw new CassetteError(this.src.file, "load", `${where}: ${subject} ${why}. ${FIX}`, {
      url: this.src.url,
      ...(pos === undefined ? {} : { line: pos.line, column: pos.col }),
      ...(cause === undefined ? {} : { cause }),
    });
  }

  /** Line and column of the key of the mapping entry at `at`. */
  locateKey(at: Segment[]): { line: number; col: number } | undefined {
    if (this.doc === undefined) return undefined;
    const { isMap, isScalar } = yaml();
    const parent = at.length === 1 ? this.doc.contents : this.doc.getIn(at.slice(0, -1), true);
    if (!isMap(parent)) return undefined;
    const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === at[at.length - 1]);
    const range = (pair?.key as { range?: [number, number, number] } | undefined)?.range;
    return range === undefined ? undefined : position(this.text, range[0]);
  }

  /** Line and column of the node at `at`, or of its nearest ancestor that exists. */
  locate(at: Segment[]): { line: number; col: number } | undefined {
    if (this.doc === undefined) return undefined;
    for (let n = at.length; n >= 0; n--) {
      const node = n === 0 ? this.doc.contents : this.doc.getIn(at.slice(0, n), true);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range !== undefined) return position(this.text, range[0]);
    }
    return undefined;
  }
}

/** The "why" of a validateEntry message, without its where and its fix (ours follow). */
function reason(error: EntryFormatError): string {
  const m = / is malformed: \S+ ([\s\S]*?)\. Delete the entry/.exec(error.message);
  return m?.[1] ?? error.message;
}

/** `entries[3].meta.durationMs` */
function label(at: Segment[]): string {
  return at.map((s, i) => (typeof s === "number" ? `[${s}]` : i === 0 ? s : `.${s}`)).join("");
}

/** Map a `validateEntry` path (`$.meta.attempt`) to where the fact is in a cassette entry. */
function envelopePath(path: string): Segment[] {
  if (path === "$.meta.occurrence") return ["occurrence"];
  if (path === "$.meta.attempt") return ["manifest", "attempt"];
  return path
    .replace(/^\$\.?/, "")
    .split(".")
    .filter((s) => s !== "");
}

/** 1-based line and column of a UTF-16 offset. */
function position(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, col: offset - start + 1 };
}
