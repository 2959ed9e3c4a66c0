/**
 * Cross-call reuse of normalized strings (issue 32): an agent re-sends its
 * whole conversation on every turn, and normalizing every earlier message
 * again made the identity's work grow with the square of the conversation.
 * Normalization is a pure function of a string and what the options resolve
 * to, so its output is kept here and handed back the next time the same
 * string is normalized under the same options.
 *
 * What is kept: for each option set (a token from `reuseToken`, the same
 * object exactly when the options give every string the same output), a map
 * from a string of a conversation to its normalized form, as the manifest's
 * prompt writes it (a canonical JSON string), and that escaped once more, as
 * the manifest's own canonical JSON holds the prompt. Only
 * strings the secret rule has already run over are kept as outputs; the
 * inputs kept as keys are strings the caller sent (in memory anyway while
 * the request is built). Nothing is written anywhere.
 *
 * The key is collision-free: a string up to {@link LONG_KEY} code units is
 * its own key (Map compares keys by value, so a hit is the same text);
 * a longer one is keyed by the SHA-256 of its UTF-8 (a collision would be
 * a break of SHA-256; a long text with a lone surrogate, whose UTF-8 is not
 * faithful, is not kept). Why not the string itself for long ones: V8 hashes a string of
 * more than 16,383 characters by its length alone (String::kMaxHashCalcLength),
 * so long keys of one length share one hash bucket and each lookup compares
 * them in full, one by one; a 64-character digest costs one SHA-256 pass
 * (several times cheaper than normalizing the text) and hashes properly.
 *
 * The bound: an LRU by bytes over all option sets together, each kept
 * string counted as what it holds in V8's heap (its key and two outputs at
 * one byte per code unit when ASCII, two otherwise, with their headers, and
 * the entry around them: see `cost`; test/identity/reuse-accounting.test.ts
 * holds the count against the live heap); default {@link DEFAULT_REUSE_BYTES}.
 * What conversation-chains.ts keeps beside it (each followed conversation's
 * text, joined) counts against the same bound ({@link holdBeside}): the
 * least recently used strings go first (a conversation's earlier messages,
 * which its segment now covers, are no longer looked up), and the segments
 * themselves when the strings alone cannot make room.
 * The bound is on those bytes, not the process's RSS: V8 grows its heap to a
 * multiple of what is live, the cache's strings as any others. `configureNormalizationReuse({ maxBytes: 0 })`
 * turns reuse off (and empties it); identities are the same either way
 * (test/identity/normalized-reuse.test.ts).
 */
import { InvalidOptionError } from "../errors.js";
import { sha256HexOfText } from "./sha256.js";

/** The default bound of the reuse cache: 32 MiB. */
export const DEFAULT_REUSE_BYTES = 32 * 1024 * 1024;
/** Longer strings are keyed by their SHA-256 (see the header). */
export const LONG_KEY = 16_383;
/**
 * What a kept string costs besides its three strings' characters: its list
 * node (a six-field object), the output triple (an array: two strings and
 * their well-formedness), the Map entry and
 * its share of the table, measured on V8 12 (64-bit, no pointer compression:
 * test/identity/reuse-accounting.test.ts holds the count against the heap).
 */
const ENTRY_OVERHEAD = 188;
/** A flat V8 string's header: map, hash and length (16 bytes); the characters follow, the whole rounded up to 8. */
const STRING_HEADER = 16;
/**
 * A character outside ASCII: the string is counted at two bytes per code
 * unit, else one. V8 stores a string with one byte per code unit when every
 * unit is Latin-1, but not always (how the string was made decides: a text
 * with an "é" was found held at two bytes per unit under one runner and one
 * under another), so only pure ASCII is counted at one.
 */
const BEYOND_ASCII = /[^\u0000-\u007f]/;

/** Options of {@link configureNormalizationReuse}. */
export interface NormalizationReuseOptions {
  /**
   * Bound of the reuse cache in bytes of heap its kept strings hold (one or
   * two per character, as V8 stores them, with headers and entries). 0 turns
   * reuse off. Default 32 MiB.
   */
  maxBytes?: number | undefined;
}

/** What {@link normalizationReuseStats} reports. */
export interface NormalizationReuseStats {
  /** The bound in force (0: off). */
  maxBytes: number;
  /** Bytes held now (as counted for the bound), the conversations' kept segments included. */
  bytes: number;
  /** Strings held now. */
  entries: number;
  /** Strings found kept, since the process started. */
  hits: number;
  /** Strings normalized because they were not kept, since the process started. */
  misses: number;
}

/**
 * The outputs of one option set, short and long keys apart (a digest key
 * could spell a short text), all in one list in use order: least recently
 * used first. A list, not the maps' own order: moving a found string to the
 * end of a Map is a delete and a set, and a Map with many deletes is
 * rebuilt every so often, which cost about 1 µs a lookup on a cache of a
 * thousand strings (more than the rest of a tiny request's identity).
 */
interface Outputs {
  short: Map<string, Kept>;
  long: Map<string, Kept>;
  /** Least recently used. */
  head: Kept | undefined;
  /** Most recently used. */
  tail: Kept | undefined;
}

/** One kept string: its output and its place in its option set's list. */
interface Kept {
  key: string;
  long: boolean;
  out: Written;
  size: number;
  prev: Kept | undefined;
  next: Kept | undefined;
}

/**
 * A string's output as the prompt writes it, that again as the manifest's
 * JSON writes the prompt, and whether the text is well-formed (no lone
 * surrogate: its UTF-8 is its WTF-8, so the hash can take it as text
 * without checking it again on every call).
 */
export type Written = readonly [written: string, escaped: string, wellFormed: boolean];

let maxBytes = DEFAULT_REUSE_BYTES;
let bytes = 0;
let entries = 0;
let hits = 0;
let misses = 0;
/** Option sets by token, least recently used first (each one's maps are in use order too). */
let sets = new Map<object, Outputs>();
/** The last token of {@link sets} (most recently used), or undefined when not known. */
let newest: object | undefined;

/**
 * Set the bound of the cache that identities keep normalized strings in
 * across calls (an agent re-sends its conversation on every turn); 0 turns
 * it off. Process-wide; returns the bound that was in force. Identities do
 * not depend on it.
 *
 * @example
 * configureNormalizationReuse({ maxBytes: 0 }); // off
 * configureNormalizationReuse({ maxBytes: 8 * 1024 * 1024 }); // 8 MiB
 */
export function configureNormalizationReuse(opts: NormalizationReuseOptions): number {
  if (opts === null || typeof opts !== "object") {
    throw new InvalidOptionError(
      "configureNormalizationReuse",
      "configureNormalizationReuse: options must be an object like { maxBytes: 8388608 } (0 turns reuse off)",
    );
  }
  const next = opts.maxBytes ?? DEFAULT_REUSE_BYTES;
  if (typeof next !== "number" || !Number.isSafeInteger(next) || next < 0) {
    throw new InvalidOptionError(
      "maxBytes",
      `configureNormalizationReuse: maxBytes must be an integer >= 0 (bytes; 0 turns reuse off), got ${String(next)}`,
    );
  }
  const previous = maxBytes;
  maxBytes = next;
  evict();
  return previous;
}

/**
 * What is kept beside the cache (conversation-chains.ts,
 * hash-checkpoints.ts), emptied with it, at once: what they hold (the
 * cache's strings among it) is then free, as the cache's own is.
 */
const alsoEmptied: (() => void)[] = [];

/** Empty `forget`'s kept values whenever the cache is emptied (or turned off). */
export function emptiedWithReuse(forget: () => void): void {
  alsoEmptied.push(forget);
}

/** Forget every kept string (the bound stays). */
export function clearNormalizationReuse(): void {
  for (const forget of alsoEmptied) forget();
  sets = new Map();
  newest = undefined;
  bytes = 0;
  beside = 0;
  entries = 0;
}

/** Is reuse on (a bound above 0)? */
export function reuseIsOn(): boolean {
  return maxBytes > 0;
}

/** The cache's bound, size and counts. */
export function normalizationReuseStats(): NormalizationReuseStats {
  return { maxBytes, bytes: bytes + beside, entries, hits, misses };
}

/**
 * One request's reuse: {@link ReusingLookup.lookup} gives each string's
 * output from the cache of the option set `token()` stands for, or computes
 * it (`compute`) and keeps it. The token is asked for on the first string
 * (resolving the options then, as normalizing would: errors keep their
 * order). With reuse off when the request starts, or without a token, each
 * string is computed. A class its caller extends, rather than closures
 * handed in: a request makes this one object (a tiny identity is mostly
 * such fixed costs).
 */
export abstract class ReusingLookup {
  #own: Outputs | undefined;
  #tok: object | undefined;
  #started: boolean;
  /** Bytes of the strings this request found or kept (see the insert below). */
  #mine = 0;

  constructor() {
    // Off: as if already started without a token.
    this.#started = maxBytes === 0;
  }

  /** The option set's token (undefined: nothing is reused). */
  protected abstract token(): object | undefined;
  /** A string's output, worked out. */
  protected abstract compute(s: string): Written;

  lookup(s: string): Written {
    if (!this.#started) {
      this.#started = true;
      const tok = this.token();
      this.#tok = tok;
      if (tok !== undefined) {
        let own = sets.get(tok);
        // Most programs use one option set: when it is already the most
        // recently used, the Map is left alone (a delete and a set per
        // request made V8 rebuild it every so often).
        if (own === undefined || tok !== newest) {
          if (own === undefined)
            own = { short: new Map(), long: new Map(), head: undefined, tail: undefined };
          else sets.delete(tok); // re-inserted: most recently used
          sets.set(tok, own);
          newest = tok;
        }
        this.#own = own;
      }
    }
    const own = this.#own;
    if (own === undefined) return this.compute(s);
    const long = s.length > LONG_KEY;
    // The digest reads UTF-8, which spells every lone surrogate as U+FFFD:
    // two such texts could share a digest, so they are not kept.
    if (long && !s.isWellFormed()) return this.compute(s);
    const map = long ? own.long : own.short;
    const key = long ? sha256HexOfText(s) : s;
    const kept = map.get(key);
    if (kept !== undefined) {
      hits++;
      unlink(own, kept);
      append(own, kept);
      this.#mine += kept.size;
      return kept.out;
    }
    misses++;
    const out = this.compute(s);
    const size = cost(key, out);
    // One string larger than a quarter of the bound would push out most of
    // the rest for a text unlikely to come back whole: not kept. Nor after
    // this option set was evicted or the cache cleared mid-request. Nor when
    // the strings this request already found or kept fill the bound with it:
    // room would be made by evicting the least recently used, which are this
    // request's own earlier messages, and an agent re-sends them in the same
    // order on its next turn, each evicted just before it is asked for (a
    // plain LRU then reuses nothing). Kept as they are, the next turn finds
    // the conversation's prefix; what no request is using still goes first.
    if (size * 4 <= maxBytes && this.#mine + size <= maxBytes && sets.get(this.#tok!) === own) {
      const node: Kept = { key, long, out, size, prev: undefined, next: undefined };
      map.set(key, node);
      append(own, node);
      bytes += size;
      entries++;
      this.#mine += size;
      evict();
    }
    return out;
  }
}

function unlink(own: Outputs, k: Kept): void {
  if (k.prev === undefined) own.head = k.next;
  else k.prev.next = k.next;
  if (k.next === undefined) own.tail = k.prev;
  else k.next.prev = k.prev;
  k.prev = undefined;
  k.next = undefined;
}

function append(own: Outputs, k: Kept): void {
  k.prev = own.tail;
  if (own.tail === undefined) own.head = k;
  else own.tail.next = k;
  own.tail = k;
}

/**
 * The bytes a kept string holds in the heap: the key and the two outputs as
 * V8 stores them (one byte per code unit for ASCII, two otherwise, plus a
 * header), and the entry around them. Counted once, on
 * insert (a regular-expression scan of each: cheap beside normalizing).
 */
function cost(key: string, out: Written): number {
  // The escaped form is its own flat string (canonicalStringTwice joins it),
  // or the written one itself when a caller hands that in twice.
  const escaped = out[1] === out[0] ? 0 : stringBytes(out[1], out[1].length);
  return (
    ENTRY_OVERHEAD + stringBytes(key, key.length) + stringBytes(out[0], out[0].length) + escaped
  );
}

/** A flat string's size in V8's heap, `units` code units of `s`'s width. */
function stringBytes(s: string, units: number): number {
  const width = BEYOND_ASCII.test(s) ? 2 : 1;
  return (STRING_HEADER + units * width + 7) & ~7;
}

/** Drop an option set that holds nothing any more. */
function forget(token: object): void {
  sets.delete(token);
  if (token === newest) newest = undefined;
}

/** Drop the least recently used strings until the bound holds. */
function evict(): void {
  while (bytes + beside > maxBytes) {
    const first = sets.entries().next();
    if (first.done === true) break;
    const [token, outputs] = first.value;
    const oldest = outputs.head;
    if (oldest === undefined) {
      forget(token);
      continue;
    }
    unlink(outputs, oldest);
    (oldest.long ? outputs.long : outputs.short).delete(oldest.key);
    bytes -= oldest.size;
    entries--;
    if (outputs.head === undefined) forget(token);
  }
  // Still over with the cache empty: what is kept beside it goes too.
  if (bytes + beside > maxBytes) {
    for (const shed of shedders) shed();
    beside = 0;
  }
  if (maxBytes === 0) clearNormalizationReuse();
}

/**
 * Bytes held beside the cache under its bound (conversation-chains.ts: the
 * kept segments' texts and copies), set by {@link holdBeside}.
 */
let beside = 0;
/** What drops everything kept beside the cache (and sets {@link beside} to 0). */
const shedders: (() => void)[] = [];

/**
 * Count `n` bytes held beside the cache against its bound (what it holds
 * replaces what was counted before), evicting the least recently used
 * strings while the two together are over it, and, if that is not enough,
 * calling `shed` (registered with {@link shedBeside}).
 */
export function holdBeside(n: number): void {
  beside = n;
  evict();
}

/** `shed` drops what is held beside the cache; called when the cache alone cannot get under its bound. */
export function shedBeside(shed: () => void): void {
  shedders.push(shed);
}

/** The cache's bound (0: off). */
export function reuseBound(): number {
  return maxBytes;
}
