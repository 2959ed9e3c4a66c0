/**
 * A conversation's earlier messages written and hashed once (issue 32): an
 * agent loop re-sends its whole conversation on every turn plus one new
 * message, and the identity wrote every earlier message's pieces again and
 * ran SHA-256 over all of them again, work that grows with the loop on
 * every turn. A {@link Segment} keeps, for one conversation array, what its
 * first elements come to (the prompt's text of them, that escaped again as
 * the manifest holds it) and the SHA-256 state after the manifest's bytes
 * up to their end; a turn whose array begins with those elements writes
 * and hashes only what follows them.
 *
 * Exact, never a guess: the state is reused only for the same bytes. The
 * bytes hashed for a manifest are `key ‖ E ‖ rest`, where `key` is
 * everything before the array's first element (the domain tag, the
 * manifest's members before the prompt, the prompt's opening and the
 * conversation's text before the array, `[` included) and `E` the escaped
 * text of the elements. A segment is used when:
 *
 * - the request's option set is the segment's (`reuseToken`: the same
 *   object only when every string normalizes to the same output), so each
 *   element writes to the same text;
 * - the array's first elements are the segment's: each the same object
 *   (`===`; a string compares by value) or equal in value to it (see
 *   below). A kept element never changes: it is the caller's element when
 *   that is deeply frozen with data properties only, checked once per
 *   object ({@link isImmutable}: a frozen object's properties can never
 *   change again, nor can a frozen child's, and a data property cannot
 *   answer differently from one read to the next, as a getter could), and
 *   otherwise a copy of its plain JSON data (the module's own, never handed out), each property
 *   read once, made before the element is written: the text written is the
 *   copy's ({@link keptForm}). An element equal in value to a kept one
 *   ({@link sameValue}: the same plain objects' members, arrays' elements
 *   and primitives, read once each, as the writer reads them) writes the
 *   same text, so an agent that builds its messages anew each turn (parsed
 *   anew from each request body, or a framework's mutable message
 *   objects) is followed too, and a message changed in place after a call
 *   is a different value, never the kept one;
 * - the conversation's text before the array is the segment's (compared as
 *   text), and for the hash state, `key` is the state's (compared as text:
 *   a different model, params, attempt or inputs is a different key, and
 *   the state is worked out again from the segment's text).
 *
 * Then `E` = the segment's text ‖ the new elements' text, and the state
 * after `key ‖ segment text` is the state the full hash passes through:
 * continuing it with the rest gives the digest of the whole, byte for byte.
 *
 * Elements that hold anything but plain JSON data (class instances,
 * functions, holes, a cycle, deeper than {@link MAX_DEPTH}) are written as
 * always and start no segment; so are new copied elements whose text is
 * longer than {@link MAX_COPIED_ADDITION} (a segment joins its new text into
 * one string: past V8's regular object size that string costs a fresh large
 * allocation, which a one-off long conversation would pay for nothing), and
 * a segment holding copies grows to {@link MAX_COPIED_SEGMENT_BYTES} at most
 * (frozen elements, from `createFetch`'s body reuse, adapters/body-reuse.ts,
 * are kept at any length as before). What segments hold counts against the
 * reuse cache's bound (normalized-reuse.ts `holdBeside`). Segments are kept for
 * {@link MAX_SEGMENTS} arrays at once, with texts of up to
 * {@link MAX_SEGMENT_LENGTH} code units; they follow the normalization reuse
 * cache: off when it is off, emptied when it is emptied
 * (normalized-reuse.ts).
 */
import { wtf8 } from "./canonical-json.js";
import {
  emptiedWithReuse,
  holdBeside,
  reuseBound,
  reuseIsOn,
  shedBeside,
} from "./normalized-reuse.js";
import { createSha256, type Sha256 } from "./sha256.js";

/** Conversations followed at once (parallel agents); the least recently used goes. */
const MAX_SEGMENTS = 4;
/** A segment's escaped text longer than this (UTF-16 code units) is not kept. */
const MAX_SEGMENT_LENGTH = 16 * 1024 * 1024;
/** Nesting checked for immutability: deeper elements are not kept (the writer stops at 256 too). */
const MAX_DEPTH = 64;
/**
 * New elements copied for a segment (not frozen by the caller) whose text
 * is longer than this (UTF-16 code units, the escaped text) start none:
 * joined, two-byte, they stay below V8's 128 KB regular object size.
 */
export const MAX_COPIED_ADDITION = 32 * 1024;
/**
 * A segment holding copies (elements the caller did not freeze) is kept up
 * to this many bytes ({@link Segment.bytes}): past it, the conversation's
 * later messages are written and hashed as before, after the kept segment
 * it still begins with. The texts a segment holds repeat strings the reuse
 * cache holds for the same messages; this keeps a process that follows
 * long conversations by value within about 1 MiB of what the cache alone
 * holds (the agent-loop bench's 1,000-turn memory rows: at 4 MiB, peak RSS
 * with a pinned young generation read 1.15–1.17× the control, at 1 MiB
 * 0.96–0.97×; 1 MiB is about 30 turns of two ~2 KiB messages).
 */
export const MAX_COPIED_SEGMENT_BYTES = 1 * 1024 * 1024;

/** The first elements of a conversation array, written, and the hash state after them. */
export interface Segment {
  /** The option set the elements were normalized under (reuseToken). */
  readonly token: object;
  /** The escaped text before the first element (the conversation's opening, the array's `[`). */
  readonly before: string;
  /** The elements, in order: the same objects a request must send. */
  readonly elements: readonly unknown[];
  /**
   * The prompt's text of the elements, joined by `,` ({@link promptOf});
   * its pieces until first asked for: a conversation seen once, and never
   * again, costs no join.
   */
  prompt: string | readonly string[];
  /** `prompt` escaped again, as the manifest's canonical JSON holds it ({@link escapedOf}); pieces until asked for. */
  escaped: string | readonly string[];
  /** `escaped` is well-formed (no lone surrogate). */
  readonly wellFormed: boolean;
  /** The segment this one extends and the escaped text it adds, until its state is worked out. */
  parent: Segment | undefined;
  delta: string;
  deltaWellFormed: boolean;
  /** SHA-256 after `key ‖ escaped`, for the last key hashed through this segment. */
  hashed: { key: string; state: Sha256 } | undefined;
  /** Bytes its texts and elements hold, those it extends included (counted against the reuse cache's bound). */
  readonly bytes: number;
  /** Whether it holds copies of elements the caller did not freeze (its own or those it extends). */
  readonly copied: boolean;
}

/** Least recently used first. */
let segments: Segment[] = [];
emptiedWithReuse(() => {
  segments = [];
});
shedBeside(() => {
  segments = [];
});

/**
 * What a segment's new part holds: its two texts, once joined, at two bytes
 * per code unit (an upper bound: V8 keeps ASCII at one), and each element
 * kept with the segment (a copy, or the caller's object kept alive), its
 * list slot and the segment's own fields.
 */
function segmentBytes(textLength: number, elements: number): number {
  return 2 * textLength + 64 * elements + 256;
}

/**
 * Can a segment that extends `seg` be kept? Not when `seg` holds copies and
 * has reached {@link MAX_COPIED_SEGMENT_BYTES}: the elements after it are
 * then written as they are, with no copies made for nothing.
 */
export function canGrow(seg: Segment): boolean {
  return !seg.copied || seg.bytes < MAX_COPIED_SEGMENT_BYTES;
}

/** May a segment of `bytes` be kept (see {@link MAX_COPIED_SEGMENT_BYTES})? */
function withinBounds(bytes: number, copied: boolean): boolean {
  return bytes <= reuseBound() && (!copied || bytes <= MAX_COPIED_SEGMENT_BYTES);
}

/** Count the kept segments against the reuse cache's bound (shared prefixes counted in each: an upper bound). */
function chargeSegments(): void {
  let n = 0;
  for (const s of segments) n += s.bytes;
  holdBeside(n);
}
/** Requests that continued from a kept segment, and hashes continued from a kept state, since the process started (tests read them). */
export const segmentCounts = { found: 0, continued: 0 };
/**
 * The longest kept segment of at most `keepable` elements that `elements`
 * (kept forms, {@link keptForm}) begin with, under `token` and after
 * `before`; undefined when none. Checks every kept element
 * ({@link sameValue}).
 */
export function findSegment(
  token: object,
  before: string,
  elements: readonly unknown[],
  keepable: number,
): Segment | undefined {
  const best = longest(token, before, keepable, (s) => {
    const n = s.elements.length;
    if (!sameValue(elements[n - 1], s.elements[n - 1], 0)) return false;
    for (let j = 0; j < n - 1; j++) if (!sameValue(elements[j], s.elements[j], 0)) return false;
    return true;
  });
  if (best !== undefined) segmentCounts.found++;
  return best;
}

/** The longest kept segment of at most `max` elements under `token` and after `before` that `accept` takes (the most recent of equal ones). */
function longest(
  token: object,
  before: string,
  max: number,
  accept: (s: Segment) => boolean,
): Segment | undefined {
  if (!reuseIsOn()) return undefined;
  let best: Segment | undefined;
  for (let i = segments.length - 1; i >= 0; i--) {
    const s = segments[i]!;
    const n = s.elements.length;
    if (s.token !== token || n > max || (best !== undefined && n <= best.elements.length)) continue;
    if (s.before === before && accept(s)) best = s;
  }
  return best;
}

/**
 * Keep the segment of `elements` (all of them immutable, see the module
 * comment: `from`'s elements, then the new ones' {@link keptForm}s; the
 * segment takes the array), extending `from` (a segment they begin with)
 * by `prompt` and `escaped`, the pieces of the text of the elements after
 * it (with the `,` before them when `from` has elements; the segment takes
 * the arrays too). Returns the new segment, or undefined when it is not
 * kept (too long, reuse off).
 */
export function keepSegment(
  token: object,
  before: string,
  elements: readonly unknown[],
  from: Segment | undefined,
  prompt: readonly string[],
  escaped: readonly string[],
  wellFormed: boolean,
  copiedNow: boolean,
): Segment | undefined {
  if (!reuseIsOn() || elements.length === 0) return undefined;
  let seg: Segment;
  if (from === undefined) {
    // Kept as pieces: joined only if a later call finds the segment.
    const length = piecesLength(escaped);
    const bytes = segmentBytes(length + piecesLength(prompt), elements.length);
    if (length > MAX_SEGMENT_LENGTH || !withinBounds(bytes, copiedNow)) return undefined;
    seg = {
      token,
      before,
      elements,
      prompt,
      escaped,
      wellFormed,
      parent: undefined,
      delta: "",
      deltaWellFormed: true,
      hashed: undefined,
      bytes,
      copied: copiedNow,
    };
  } else {
    const delta = escaped.join("");
    const head = escapedOf(from);
    const added = prompt.join("");
    const bytes =
      from.bytes +
      segmentBytes(delta.length + added.length, elements.length - from.elements.length);
    const copied = from.copied || copiedNow;
    if (head.length + delta.length > MAX_SEGMENT_LENGTH || !withinBounds(bytes, copied))
      return undefined;
    seg = {
      token,
      before,
      elements,
      prompt: promptOf(from) + added,
      escaped: head + delta,
      wellFormed: from.wellFormed && wellFormed,
      // Only a parent whose state is known is worth keeping: it saves hashing
      // its text again; without one, the state starts from the whole text.
      parent: from.hashed === undefined ? undefined : from,
      delta,
      deltaWellFormed: wellFormed,
      hashed: undefined,
      bytes,
      copied,
    };
  }
  const list = segments;
  // The segment it extends is replaced (its elements begin this one's);
  // others stay: a branch from an earlier turn still finds its prefix.
  const at = from === undefined ? -1 : list.indexOf(from);
  if (at >= 0) list.splice(at, 1);
  list.push(seg);
  if (list.length > MAX_SEGMENTS) list.shift();
  chargeSegments();
  return seg;
}

/** The prompt's text of `seg`'s elements (joined once, then kept joined). */
export const promptOf = (seg: Segment): string => joined(seg, "prompt");

/** That text escaped again (joined once, then kept joined). */
export const escapedOf = (seg: Segment): string => joined(seg, "escaped");

function joined(seg: Segment, text: "prompt" | "escaped"): string {
  const t = seg[text];
  if (typeof t === "string") return t;
  const whole = t.join("");
  seg[text] = whole;
  return whole;
}

/** The total length of `pieces` (UTF-16 code units). */
export function piecesLength(pieces: readonly string[]): number {
  let n = 0;
  for (const p of pieces) n += p.length;
  return n;
}

/**
 * A hash that has taken `key ‖ seg.escaped` (each as its WTF-8), for the
 * caller to continue with the rest of the manifest's bytes; the segment's
 * own state is never handed out, only copies of it.
 */
export function hashAfter(seg: Segment, key: string): Sha256 {
  let h = seg.hashed?.key === key ? seg.hashed.state : undefined;
  if (h !== undefined) segmentCounts.continued++;
  else {
    const p = seg.parent;
    if (p?.hashed !== undefined && p.hashed.key === key) {
      segmentCounts.continued++;
      h = p.hashed.state.copy();
      update(h, seg.delta, seg.deltaWellFormed);
    } else {
      h = createSha256();
      update(h, key, key.isWellFormed());
      update(h, escapedOf(seg), seg.wellFormed);
    }
    seg.hashed = { key, state: h };
    seg.parent = undefined; // the chain behind it is not needed any more
  }
  return h.copy();
}

/**
 * Add `text` as its WTF-8. Every text handed here begins and ends at a
 * piece boundary (JSON punctuation or a whole JSON string), never inside a
 * surrogate pair, so the parts' WTF-8 is the whole's.
 */
function update(h: Sha256, text: string, wellFormed: boolean): void {
  h.update(wellFormed ? text : wtf8(text));
}

/** Objects found deeply frozen with data properties only (see {@link isImmutable}). */
const immutable = new WeakSet<object>();

/**
 * Can `v` never write another text than it writes now? A primitive, or a
 * plain object or array that is frozen, whose own properties are all data
 * properties, each holding such a value, at most {@link MAX_DEPTH} deep.
 * Remembered per object: frozen stays frozen.
 */
export function isImmutable(v: unknown, depth = 0): boolean {
  if (v === null || typeof v !== "object") return typeof v !== "function";
  if (immutable.has(v)) return true;
  if (depth >= MAX_DEPTH || !Object.isFrozen(v)) return false;
  if (!Array.isArray(v)) {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
  }
  const props = Object.getOwnPropertyDescriptors(v);
  for (const k of Object.keys(props)) {
    const d = props[k]!;
    if (!("value" in d) || !isImmutable(d.value, depth + 1)) return false;
  }
  immutable.add(v);
  return true;
}

/** {@link keptForm}'s answer for a value it cannot keep. */
export const NOT_KEPT: unique symbol = Symbol("not kept");

/**
 * `v` as a segment keeps it: `v` itself when it is immutable
 * ({@link isImmutable}), else a copy of its plain JSON data
 * (plain objects' own enumerable members, members holding `undefined` left
 * out as the writer leaves them out, arrays without holes, strings,
 * numbers, booleans, null), each property read once; {@link NOT_KEPT} when
 * it holds anything else, or nests to `limit` from `depth` (the writer's
 * own depth and limit: what it cannot keep, the writer refuses too). The
 * copy writes the text `v` wrote when read once, and the caller writes the
 * copy: what is kept is what was written. The copy is this module's own,
 * never handed out, so nothing can change it (it is not frozen: freezing
 * each object cost more than the rest of the copy).
 */
export function keptForm(v: unknown, depth: number, limit: number): unknown {
  if (v === null || typeof v !== "object") {
    return typeof v === "function" || typeof v === "symbol" || typeof v === "bigint" ? NOT_KEPT : v;
  }
  if (depth < MAX_DEPTH && isImmutable(v, depth)) return v;
  if (depth >= limit) return NOT_KEPT;
  if (Array.isArray(v)) {
    const n = v.length;
    const out: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) {
      if (!(i in v)) return NOT_KEPT;
      const c = keptForm(v[i], depth + 1, limit);
      if (c === NOT_KEPT || c === undefined) return NOT_KEPT;
      out[i] = c;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return NOT_KEPT;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (x === undefined) continue;
    const c = keptForm(x, depth + 1, limit);
    if (c === NOT_KEPT) return NOT_KEPT;
    // defineProperty for "__proto__" only: it stays an ordinary member.
    if (k === "__proto__") Object.defineProperty(out, k, { value: c, enumerable: true });
    else out[k] = c;
  }
  return out;
}

/**
 * The longest kept segment of at most `length` elements under `token` and
 * after `before` (the most recent of equal ones), whose elements a
 * request's are formed against ({@link formLike}); undefined when none.
 * Reads no element.
 */
export function candidateSegment(
  token: object,
  before: string,
  length: number,
): Segment | undefined {
  return longest(token, before, length, () => true);
}

/**
 * `x`'s {@link keptForm}, or `kept` itself when `x` equals it in value
 * ({@link sameValue}): each of `x`'s properties read once either way, and
 * nothing copied for the parts that equal `kept`'s (an agent re-sends its
 * earlier messages on every turn: copying them each time left a copy of
 * the whole conversation per turn for the collector).
 */
export function formLike(x: unknown, kept: unknown, depth: number, limit: number): unknown {
  if (x === kept) return kept;
  if (x === null || typeof x !== "object" || kept === null || typeof kept !== "object")
    return keptForm(x, depth, limit);
  if (depth < MAX_DEPTH && isImmutable(x, depth)) {
    // Frozen data: reading it again reads the same values.
    return sameValue(x, kept, depth) ? kept : x;
  }
  if (depth >= limit) return NOT_KEPT;
  if (Array.isArray(x)) {
    if (!Array.isArray(kept)) return keptForm(x, depth, limit);
    const n = x.length;
    let out: unknown[] | undefined = n === kept.length ? undefined : [];
    for (let i = 0; i < n; i++) {
      if (!(i in x)) return NOT_KEPT;
      const k = i < kept.length ? kept[i] : undefined;
      const c =
        i < kept.length ? formLike(x[i], k, depth + 1, limit) : keptForm(x[i], depth + 1, limit);
      if (c === NOT_KEPT || c === undefined) return NOT_KEPT;
      if (out === undefined && c !== k) out = kept.slice(0, i);
      out?.push(c);
    }
    return out ?? kept;
  }
  if (Array.isArray(kept)) return keptForm(x, depth, limit);
  const proto = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return NOT_KEPT;
  const o = x as Record<string, unknown>;
  const k2 = kept as Record<string, unknown>;
  const pairs: unknown[] = [];
  let same = true;
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (v === undefined) continue;
    const c =
      same && Object.hasOwn(k2, k)
        ? formLike(v, k2[k], depth + 1, limit)
        : keptForm(v, depth + 1, limit);
    if (c === NOT_KEPT) return NOT_KEPT;
    if (same && (c !== k2[k] || !Object.hasOwn(k2, k))) same = false;
    pairs.push(k, c);
  }
  if (same && pairs.length / 2 === Object.keys(k2).length) return kept;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < pairs.length; i += 2) {
    const k = pairs[i] as string;
    // defineProperty for "__proto__" only: it stays an ordinary member.
    if (k === "__proto__") Object.defineProperty(out, k, { value: pairs[i + 1], enumerable: true });
    else out[k] = pairs[i + 1];
  }
  return out;
}

/**
 * Does `x` write the text the kept element `kept` writes? The same value
 * (`===`), or `kept` a plain object or array (see {@link keptForm}) and
 * `x` the same kind of plain object or array, whose
 * members other than those holding `undefined` (the writer leaves those
 * out) are `kept`'s, each equal in turn; primitives equal by `===` (so
 * `NaN` never, and never kept: the writer refuses it). Each of `x`'s
 * properties is read once.
 */
export function sameValue(x: unknown, kept: unknown, depth: number): boolean {
  if (x === kept) return true;
  if (
    x === null ||
    typeof x !== "object" ||
    kept === null ||
    typeof kept !== "object" ||
    depth >= MAX_DEPTH
  )
    return false;
  if (Array.isArray(kept)) {
    if (!Array.isArray(x) || x.length !== kept.length) return false;
    for (let i = 0; i < kept.length; i++) {
      if (!(i in x) || !sameValue(x[i], kept[i], depth + 1)) return false;
    }
    return true;
  }
  if (Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return false;
  const o = x as Record<string, unknown>;
  const k2 = kept as Record<string, unknown>;
  let members = 0;
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (v === undefined) continue;
    members++;
    if (!Object.hasOwn(k2, k) || !sameValue(v, k2[k], depth + 1)) return false;
  }
  return members === Object.keys(k2).length;
}
