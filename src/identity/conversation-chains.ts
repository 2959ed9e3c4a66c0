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
 * - the array's first elements are the segment's, the same objects (`===`;
 *   a string compares by value), each deeply frozen with data properties
 *   only, checked once per object ({@link isImmutable}): a frozen object's
 *   properties can never change again, nor can a frozen child's, and a
 *   data property cannot answer differently from one read to the next (a
 *   getter could); so the same object writes the same text it wrote when
 *   the segment was made;
 * - the conversation's text before the array is the segment's (compared as
 *   text), and for the hash state, `key` is the state's (compared as text:
 *   a different model, params, attempt or inputs is a different key, and
 *   the state is worked out again from the segment's text).
 *
 * Then `E` = the segment's text ‖ the new elements' text, and the state
 * after `key ‖ segment text` is the state the full hash passes through:
 * continuing it with the rest gives the digest of the whole, byte for byte.
 *
 * Elements that are not frozen (any caller but `createFetch`'s body reuse,
 * adapters/body-reuse.ts, and its first body) are written as always and
 * start no segment. Segments are kept for {@link MAX_SEGMENTS} arrays at
 * once, with texts of up to {@link MAX_SEGMENT_LENGTH} code units; they
 * follow the normalization reuse cache: off when it is off, emptied when it
 * is emptied (normalized-reuse.ts).
 */
import { wtf8 } from "./canonical-json.js";
import { emptiedWithReuse, reuseIsOn } from "./normalized-reuse.js";
import { createSha256, type Sha256 } from "./sha256.js";

/** Conversations followed at once (parallel agents); the least recently used goes. */
const MAX_SEGMENTS = 4;
/** A segment's escaped text longer than this (UTF-16 code units) is not kept. */
const MAX_SEGMENT_LENGTH = 16 * 1024 * 1024;
/** Nesting checked for immutability: deeper elements are not kept (the writer stops at 256 too). */
const MAX_DEPTH = 64;

/** The first elements of a conversation array, written, and the hash state after them. */
export interface Segment {
  /** The option set the elements were normalized under (reuseToken). */
  readonly token: object;
  /** The escaped text before the first element (the conversation's opening, the array's `[`). */
  readonly before: string;
  /** The elements, in order: the same objects a request must send. */
  readonly elements: readonly unknown[];
  /** The prompt's text of the elements, joined by `,`. */
  readonly prompt: string;
  /** `prompt` escaped again, as the manifest's canonical JSON holds it. */
  readonly escaped: string;
  /** `escaped` is well-formed (no lone surrogate). */
  readonly wellFormed: boolean;
  /** The segment this one extends and the escaped text it adds, until its state is worked out. */
  parent: Segment | undefined;
  delta: string;
  deltaWellFormed: boolean;
  /** SHA-256 after `key ‖ escaped`, for the last key hashed through this segment. */
  hashed: { key: string; state: Sha256 } | undefined;
}

/** Least recently used first. */
let segments: Segment[] = [];
emptiedWithReuse(() => {
  segments = [];
});
/** Requests that continued from a kept segment, and hashes continued from a kept state, since the process started (tests read them). */
export const segmentCounts = { found: 0, continued: 0 };
/**
 * The longest kept segment `elements` begins with, under `token` and after
 * `before`; undefined when none. Checks every kept element by `===`.
 */
export function findSegment(
  token: object,
  before: string,
  elements: readonly unknown[],
): Segment | undefined {
  if (!reuseIsOn()) return undefined;
  const list = segments;
  let best: Segment | undefined;
  for (let i = list.length - 1; i >= 0; i--) {
    const s = list[i]!;
    const n = s.elements.length;
    if (
      s.token !== token ||
      n > elements.length ||
      (best !== undefined && n <= best.elements.length)
    )
      continue;
    if (elements[n - 1] !== s.elements[n - 1] || s.before !== before) continue;
    let same = true;
    for (let j = 0; j < n - 1; j++) {
      if (elements[j] !== s.elements[j]) {
        same = false;
        break;
      }
    }
    if (same) best = s;
  }
  if (best !== undefined) segmentCounts.found++;
  return best;
}

/**
 * Keep the segment of `elements` (all of them immutable, see the module
 * comment), extending `from` (a segment they begin with) by `prompt` and
 * `escaped`, the text of the elements after it (with the `,` before them
 * when `from` has elements). Returns the new segment, or undefined when it
 * is not kept (too long, reuse off).
 */
export function keepSegment(
  token: object,
  before: string,
  elements: readonly unknown[],
  from: Segment | undefined,
  prompt: string,
  escaped: string,
  wellFormed: boolean,
): Segment | undefined {
  if (!reuseIsOn() || elements.length === 0) return undefined;
  const text = from === undefined ? escaped : from.escaped + escaped;
  if (text.length > MAX_SEGMENT_LENGTH) return undefined;
  const list = segments;
  const seg: Segment = {
    token,
    before,
    elements: elements.slice(),
    prompt: from === undefined ? prompt : from.prompt + prompt,
    escaped: text,
    wellFormed: from === undefined ? wellFormed : from.wellFormed && wellFormed,
    // Only a parent whose state is known is worth keeping: it saves hashing
    // its text again; without one, the state starts from the whole text.
    parent: from?.hashed === undefined ? undefined : from,
    delta: escaped,
    deltaWellFormed: wellFormed,
    hashed: undefined,
  };
  // The segment it extends is replaced (its elements begin this one's);
  // others stay: a branch from an earlier turn still finds its prefix.
  const at = from === undefined ? -1 : list.indexOf(from);
  if (at >= 0) list.splice(at, 1);
  list.push(seg);
  if (list.length > MAX_SEGMENTS) list.shift();
  return seg;
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
      update(h, seg.escaped, seg.wellFormed);
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
