/**
 * A structured conversation (`request.conversation`: the messages of an SDK
 * call as JSON) becomes the manifest's `prompt`: canonical JSON (RFC 8785, so
 * key order never matters) with every string normalized on its own first.
 * String by string matters: inside JSON text a newline is the two characters
 * `\n`, so whitespace runs, and paths next to escapes, would not be seen by a
 * pass over the whole text. Object keys are kept as they are. The text is
 * not normalized again as a whole (that second pass changed nothing and cost
 * milliseconds on long conversations).
 *
 * This is the recipe v1 prompt adapters have always produced, so identities
 * are unchanged; only where it is computed moved (into the identity).
 */
import {
  type NormalizeOptions,
  type PreparedNormalizer,
  prepareNormalizer,
  reuseToken,
} from "../normalize/internal.js";
import {
  canonicalJson,
  canonicalString,
  canonicalStringTwice,
  sortNames,
} from "./canonical-json.js";
import {
  candidateSegment,
  canGrow,
  escapedOf,
  findSegment,
  formLike,
  keepSegment,
  keptForm,
  MAX_COPIED_ADDITION,
  NOT_KEPT,
  piecesLength,
  promptOf,
  type Segment,
} from "./conversation-chains.js";
import type { ManifestValue } from "./manifest-types.js";
import { ReusingLookup, reuseIsOn, type Written } from "./normalized-reuse.js";

/**
 * Strings up to this length are normalized once per conversation: roles,
 * part types and tool names repeat on every message, and even with the
 * options resolved once per request (prepareNormalizer) each string costs
 * its passes' setup, however short.
 */
const MEMO_MAX = 64;

/**
 * The manifest prompt of a conversation. With `counts`, also add up how
 * often each normalization rule fired (for miss reports).
 *
 * @example
 * conversationPrompt({ messages: [{ role: "user", content: "Fix /w/a.ts\n\n now" }] }, { projectPath: "/w" })
 * // '{"messages":[{"content":"Fix {project}/a.ts now","role":"user"}]}'
 */
export function conversationPrompt(
  value: unknown,
  opts: NormalizeOptions,
  counts?: Record<string, number>,
): string {
  return preparedConversationPrompt(value, prepareNormalizer(opts), counts);
}

/**
 * {@link conversationPrompt} with the options already prepared: the
 * identity prepares them once per request, for the conversation and the task.
 */
export function preparedConversationPrompt(
  value: unknown,
  prepared: PreparedNormalizer,
  counts?: Record<string, number>,
): string {
  // The prompt is asked for: it is there.
  return preparedConversationPieces(value, prepared, counts).prompt!;
}

/** The manifest prompt of a conversation, with that prompt as the manifest's canonical JSON spells it. */
export interface ConversationPieces {
  /**
   * The prompt; undefined only when it was not asked for (`withPrompt`
   * false: a caller that hashes `escaped` and never needs the text itself).
   */
  prompt: string | undefined;
  /**
   * The prompt's inside as a canonical JSON string (escaped again, without
   * the quotes), in pieces whose concatenation it is; undefined when it was
   * not worked out (a conversation with a hole).
   */
  escaped: string[] | undefined;
  /**
   * True when every piece of `escaped` is known well-formed (no lone
   * surrogate), so its UTF-8 is its WTF-8 and the hash need not read the
   * pieces to find out; false when unknown or not.
   */
  wellFormed: boolean;
  /**
   * Where `escaped` holds a kept segment's text (conversation-chains.ts):
   * `escaped[index]` is `segment.escaped`, so the hash can continue from
   * the segment's state instead of hashing it again.
   */
  chained?: { segment: Segment; index: number } | undefined;
  /**
   * False for a long plain prompt's pieces (manifest.ts): the hash keeps no
   * checkpoints for them (hash-checkpoints.ts), which are for conversations
   * that grow call by call; kept, they would hold on to a copy of each long
   * prompt's text.
   */
  checkpoints?: false | undefined;
}

/**
 * Manifests whose prompt came from a conversation, with that prompt escaped
 * again in pieces (set by invocationManifest, read by manifestIdentity, which
 * uses the pieces only while the manifest's prompt is still that text).
 */
export const escapedPrompts = new WeakMap<object, ConversationPieces>();

/**
 * {@link preparedConversationPrompt}, also giving the prompt escaped again
 * as the manifest's canonical JSON holds it, string by string (escaping
 * is per code unit, so escaping the pieces is escaping the whole): the
 * identity hashes those pieces instead of escaping a prompt of the whole
 * conversation once more on every call (identity.ts). Without `withPrompt`
 * only the escaped pieces are written (the prompt is undefined): a long
 * conversation's prompt is a string as large as the conversation, built on
 * every call, which an identity that hashes the escaped pieces never reads.
 */
export function preparedConversationPieces(
  value: unknown,
  prepared: PreparedNormalizer,
  counts?: Record<string, number>,
  withPrompt = true,
): ConversationPieces {
  // One pass: each string normalized and written as canonical JSON where it
  // stands, members in canonical order, no copy of the tree.
  const before = counts === undefined ? undefined : { ...counts };
  const piece = written(prepared, counts);
  const w: FusedWriter = {
    out: withPrompt ? [] : undefined,
    out2: [],
    piece,
    wellFormed: true,
    chained: undefined,
  };
  const token = piece instanceof ReusedPieces ? piece.chainToken() : undefined;
  if (token === undefined ? write(value, w, 0) : writeTop(value, w, token)) {
    return {
      prompt: w.out === undefined ? undefined : joined(w.out, w.chained !== undefined),
      escaped: w.out2,
      wellFormed: w.wellFormed,
      chained: w.chained,
    };
  }
  // Anything the fast writer does not take (not plain JSON, a hole, a cycle,
  // very deep nesting) goes the original two passes: they name the first bad
  // member in the conversation's own order, or refuse the hole after the
  // whole walk, as they always have. The rules the writer counted before it
  // stopped are counted again by the walk: the counts go back first.
  if (counts !== undefined) {
    for (const k of Object.keys(counts)) delete counts[k];
    Object.assign(counts, before);
  }
  const text = normalizer(prepared, counts);
  return {
    prompt: canonicalJson(walk(value, "request.conversation", text, new Set())),
    escaped: undefined,
    wellFormed: false,
  };
}

/**
 * The prompt's pieces as one string. With a kept segment among them (a
 * few pieces, one as long as the conversation) by `+`, which links the
 * long one in rather than copying it (a join copied the whole
 * conversation's text on every turn); else joined.
 */
function joined(pieces: readonly string[], chained: boolean): string {
  if (!chained) return pieces.join("");
  let s = "";
  for (const p of pieces) s += p;
  return s;
}

/** How each string is normalized: counted for miss reports, else as it is. */
function normalizer(
  prepared: PreparedNormalizer,
  counts?: Record<string, number>,
): (s: string) => string {
  if (counts !== undefined) {
    return (s: string) => {
      const report = prepared.explain(s);
      for (const [rule, n] of Object.entries(report.counts)) counts[rule] = (counts[rule] ?? 0) + n;
      return report.output;
    };
  }
  return (s) => prepared.normalize(s);
}

/**
 * Each string as the prompt holds it: normalized, then written as a
 * canonical JSON string. Pure: the table, the roots, the secret scanner and
 * caller rules (a pattern and a replacement string) give one string one
 * answer, so the written form is kept across calls (normalized-reuse.ts):
 * an agent re-sends every earlier message on each turn. Kept written, not
 * only normalized: escaping a reused string again would be most of what is
 * left of its cost. One object per request (no closures: the bundle's
 * keepNames gives a named one a defineProperty each time it is made).
 */
function written(prepared: PreparedNormalizer, counts?: Record<string, number>): Pieces {
  if (counts !== undefined) return new CountedPieces(normalizer(prepared, counts));
  if (reuseIsOn()) return new ReusedPieces(prepared);
  return new MemoPieces(prepared);
}

/** Where the writer gets each string's piece. */
interface Pieces {
  lookup(s: string): Piece;
}

/** Counting the rules that fire (miss reports): nothing reused. */
class CountedPieces implements Pieces {
  constructor(private readonly text: (s: string) => string) {}
  lookup(s: string): Piece {
    return pieceOf(this.text(s));
  }
}

/** Reuse on: each string's piece from the cache across calls. */
class ReusedPieces extends ReusingLookup implements Pieces {
  constructor(private readonly prepared: PreparedNormalizer) {
    super();
  }
  protected token(): object | undefined {
    return reuseToken(this.prepared);
  }
  protected compute(s: string): Piece {
    return pieceOf(this.prepared.normalize(s));
  }
  /**
   * The option set's token for the conversation's kept segments
   * (conversation-chains.ts), or undefined: none (caller rules that are
   * not well-formed), or resolving the options failed, which the first
   * string normalized then reports where it always has.
   */
  chainToken(): object | undefined {
    try {
      return reuseToken(this.prepared);
    } catch {
      return undefined;
    }
  }
}

/** Reuse off: short strings (roles, part types, tool names) once per request. */
class MemoPieces implements Pieces {
  readonly #memo = new Map<string, Piece>();
  constructor(private readonly prepared: PreparedNormalizer) {}
  lookup(s: string): Piece {
    if (s.length > MEMO_MAX) return pieceOf(this.prepared.normalize(s));
    let out = this.#memo.get(s);
    if (out === undefined) {
      out = pieceOf(this.prepared.normalize(s));
      this.#memo.set(s, out);
    }
    return out;
  }
}

/** A normalized string as the prompt writes it, that escaped again, and whether it is well-formed. */
function pieceOf(normalized: string): Piece {
  return canonicalStringTwice(normalized);
}

type Piece = Written;

/** The inside of `p`'s canonical JSON string. */
function escapeAgain(p: string): string {
  const q = canonicalString(p);
  return q.length === p.length + 2 ? p : q.slice(1, -1);
}

/** Members' names as written (`"name":`) and escaped again: the few names of a conversation repeat. */
const names = new Map<string, Piece>();
const NAMES_MAX = 1024;

function namePiece(k: string): Piece {
  let n = names.get(k);
  if (n === undefined) {
    const p = `${canonicalString(k)}:`;
    n = [p, escapeAgain(p), k.isWellFormed()];
    if (k.length <= MEMO_MAX) {
      if (names.size >= NAMES_MAX) names.clear();
      names.set(k, n);
    }
  }
  return n;
}

interface FusedWriter {
  /** The prompt's pieces; undefined when the prompt is not wanted. */
  out: string[] | undefined;
  /** `out` piece by piece, escaped again (see ConversationPieces). */
  out2: string[];
  /** A string's normalized canonical JSON, and that escaped again. */
  piece: Pieces;
  /** Every piece of `out2` so far is well-formed (punctuation always is). */
  wellFormed: boolean;
  /** A kept segment written as one piece (see ConversationPieces.chained). */
  chained: { segment: Segment; index: number } | undefined;
}

/**
 * Deeper nesting goes to {@link walk} (which tracks the objects it is
 * inside): the writer keeps no such set, so a cycle is caught by depth.
 */
const MAX_DEPTH = 256;

/**
 * Write the canonical JSON of `v` with each string normalized into `w`
 * (strings through `w.piece`, members sorted as canonicalJson sorts them:
 * UTF-16 code units); false, with `w` to be discarded, at the first thing
 * that is not plain JSON as {@link walk} takes it, or at a hole or a depth
 * of {@link MAX_DEPTH}: the caller then runs walk, which reports it in
 * walk's own order of visits. No path strings, no per-member arrays: a
 * small conversation's identity is mostly such fixed costs.
 */
function write(v: unknown, w: FusedWriter, depth: number): boolean {
  switch (typeof v) {
    case "string": {
      const p = w.piece.lookup(v);
      w.out?.push(p[0]);
      w.out2.push(p[1]);
      if (!p[2]) w.wellFormed = false;
      return true;
    }
    case "boolean":
      push(w, v ? "true" : "false");
      return true;
    case "number":
      // ECMAScript Number::toString, as canonicalJson writes it (-0 -> "0").
      if (!Number.isFinite(v)) return false;
      push(w, String(v));
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (v === null) {
    push(w, "null");
    return true;
  }
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(v)) {
    push(w, "[");
    for (let i = 0; i < v.length; i++) {
      if (i > 0) push(w, ",");
      if (!(i in v) || !write(v[i], w, depth + 1)) return false;
    }
    push(w, "]");
    return true;
  }
  return writeObject(v, w, depth, write);
}

/**
 * A plain object's members, as {@link write} writes them, each value by
 * `value` at `depth + 1` (the conversation's top level, {@link writeTop},
 * follows its first array there); false for any other object.
 */
function writeObject(
  v: object,
  w: FusedWriter,
  depth: number,
  value: (x: unknown, w: FusedWriter, depth: number) => boolean,
): boolean {
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  const o = v as Record<string, unknown>;
  // The keys Object.entries gives (own, enumerable, string), distinct, sorted by UTF-16 code units.
  const keys = Object.keys(o);
  sortNames(keys);
  push(w, "{");
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    if (x === undefined) continue; // as JSON.stringify does
    if (!first) push(w, ",");
    first = false;
    const n = namePiece(k);
    w.out?.push(n[0]);
    w.out2.push(n[1]);
    if (!n[2]) w.wellFormed = false;
    if (!value(x, w, depth + 1)) return false;
  }
  push(w, "}");
  return true;
}

/**
 * {@link write} of a conversation, with its first array member's leading
 * elements taken from a kept segment when the request sends the same ones
 * (conversation-chains.ts), and the array kept as a segment for the next
 * turn when all its elements can be kept. The same pieces joined as
 * {@link write} gives; false where it gives false.
 */
function writeTop(v: unknown, w: FusedWriter, token: object): boolean {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return write(v, w, 0);
  let followed = false;
  return writeObject(v, w, 0, (x, w, depth) => {
    if (followed || !Array.isArray(x) || x.length === 0) return write(x, w, depth);
    followed = true; // one array per conversation: the first one
    return reuseIsOn() ? writeFollowed(x, w, token) : write(x, w, depth);
  });
}

/**
 * The array `a` of a conversation (depth 1), its kept leading elements as
 * one piece. Each element is read once, into its kept form
 * (conversation-chains.ts `keptForm`: itself when frozen, else a private
 * copy), before anything else: the segment is found by those forms and
 * the new elements are written from them, so a getter answers once per
 * call, as it does with reuse off.
 */
function writeFollowed(a: readonly unknown[], w: FusedWriter, token: object): boolean {
  push(w, "[");
  const before = w.out2.join("");
  // The forms, each made against the likeliest kept segment's element (its
  // very element when equal); from `keepable` on, the elements as they are
  // (one of them holds something a segment cannot keep, which the writer
  // refuses too).
  const candidate = candidateSegment(token, before, a.length);
  const like = candidate?.elements;
  // Past a candidate that cannot grow, no segment is kept: no forms either.
  const formed = candidate === undefined || canGrow(candidate) ? a.length : like!.length;
  const forms: unknown[] = new Array(a.length);
  let keepable = formed;
  let copied = false;
  for (let i = 0; i < a.length; i++) {
    if (!(i in a)) return false; // a hole: as write refuses it
    const x = a[i];
    const k =
      i >= keepable
        ? NOT_KEPT
        : like !== undefined && i < like.length
          ? formLike(x, like[i], 2, MAX_DEPTH)
          : keptForm(x, 2, MAX_DEPTH);
    if (k === NOT_KEPT) {
      if (i < keepable) keepable = i;
      forms[i] = x;
    } else {
      copied ||= k !== x;
      forms[i] = k;
    }
  }
  const seg = findSegment(token, before, forms, keepable);
  const out = w.out;
  let from = 0;
  if (seg !== undefined) {
    w.chained = { segment: seg, index: w.out2.length };
    out?.push(promptOf(seg));
    w.out2.push(escapedOf(seg));
    if (!seg.wellFormed) w.wellFormed = false;
    from = seg.elements.length;
    if (from === a.length) {
      push(w, "]");
      return true;
    }
  }
  // The new elements' pieces, apart: what a new segment adds (with the
  // prompt's text of them even when the prompt is not being written).
  const added: FusedWriter = {
    out: [],
    out2: [],
    piece: w.piece,
    wellFormed: true,
    chained: undefined,
  };
  for (let i = from; i < a.length; i++) {
    if (i > 0) push(added, ",");
    if (!write(forms[i], added, 2)) return false;
  }
  if (!added.wellFormed) w.wellFormed = false;
  const keep =
    keepable === a.length && (!copied || piecesLength(added.out2) <= MAX_COPIED_ADDITION);
  // (keepable < a.length also when a candidate could not grow: nothing to keep.)
  const kept = keep
    ? keepSegment(token, before, forms, seg, added.out!, added.out2, added.wellFormed, copied)
    : undefined;
  if (kept !== undefined && seg !== undefined) {
    // The new segment as one piece, in place of the one it extends: the
    // hash continues from its state.
    w.out2.pop();
    out?.pop();
    w.chained = { segment: kept, index: w.out2.length };
    w.out2.push(escapedOf(kept));
    out?.push(promptOf(kept));
  } else {
    // Not kept, or kept for the first time: the pieces as they are (a
    // conversation seen once costs no join; the next turn that finds the
    // segment joins its text and hashes it from the start, once).
    for (const p of added.out2) w.out2.push(p);
    if (out !== undefined) for (const p of added.out!) out.push(p);
  }
  push(w, "]");
  return true;
}

/** A structural piece: JSON punctuation and literals need no escaping again. */
function push(w: FusedWriter, p: string): void {
  w.out?.push(p);
  w.out2.push(p);
}

/** A copy of `v` with each string normalized; anything that is not plain JSON is a TypeError. */
function walk(
  v: unknown,
  path: string,
  text: (s: string) => string,
  seen: Set<object>,
): ManifestValue {
  switch (typeof v) {
    case "string":
      return text(v);
    case "boolean":
      return v;
    case "number":
      if (Number.isFinite(v)) return v;
      throw new TypeError(
        `${path} is ${v}, which JSON cannot represent; use null or a finite number`,
      );
    case "object":
      break;
    default:
      throw new TypeError(`${path} is a ${typeof v}, which is not a JSON value`);
  }
  if (v === null) return null;
  if (seen.has(v))
    throw new TypeError(`${path} contains a cycle; a conversation is a tree of JSON values`);
  seen.add(v);
  try {
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${path}[${i}]`, text, seen));
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError(
        `${path} is a ${proto?.constructor?.name ?? "non-plain object"}; a conversation must be plain JSON (encode it first)`,
      );
    }
    const out: Record<string, ManifestValue> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue; // as JSON.stringify does
      // defineProperty: a "__proto__" key stays an ordinary member.
      Object.defineProperty(out, k, {
        value: walk(x, `${path}.${k}`, text, seen),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } finally {
    seen.delete(v);
  }
}
