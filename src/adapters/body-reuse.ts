/**
 * Request bodies parsed with the help of the one before: an agent loop
 * re-sends its whole conversation on every turn plus the new messages, so
 * `createFetch` would `JSON.parse` the whole conversation again each time
 * (up to 400 KiB a turn at 100 turns of 4 KiB, as much CPU as the SDK's
 * own `JSON.stringify` of it). A {@link BodyChains} remembers, per
 * conversation, the text up to the end of its last message and those
 * messages parsed; a body that begins with that text has only its new part
 * parsed, and gets the same message objects (frozen) for the old part.
 *
 * Exact, never a guess: {@link BodyChains.parse} returns what `JSON.parse`
 * returns, or throws where it throws (it falls back to it on anything it
 * cannot prove). The proof, for a body `T` and a chain (its `head`: the
 * body's members before the conversation array and the array's `[`, as
 * `JSON.stringify` writes them; its `prefix`: `head` and the messages'
 * texts, which are `JSON.stringify` of the kept messages; both checked when
 * the chain was made):
 *
 * - `T` starts with `prefix`, and what follows is `,` or `]`;
 * - the rest, put after `head` (`tail`), parses, and `JSON.stringify` of
 *   that parse is `tail` itself: `tail` is one object without a duplicate
 *   key, whose conversation array begins right after `head`;
 * - so `T` is that object with the kept messages first in its array, and
 *   parsing `T` gives the kept messages' values (a text that is
 *   `JSON.stringify` of a value parses to that value) then the new ones.
 *
 * Messages are handed out as the same objects on every call, frozen: a
 * caller that changes a body it was given (it is typed readonly) gets an
 * error rather than a changed conversation for the next call. The bodies'
 * arrays and top-level objects are new on each call. Strings being the
 * same objects also helps the identity: its cache of normalized strings
 * finds them without hashing them again.
 */
import type { JsonValue } from "../json/index.js";

/**
 * The conversation fields that grow by a message a turn (OpenAI chat and
 * Anthropic `messages`, OpenAI Responses `input`, Gemini `contents`): the
 * first of them in the body that is an array is followed.
 */
const GROWING_FIELDS: readonly string[] = ["messages", "input", "contents"];
/** Conversations followed at once (parallel agents through one fetch); the least recently used goes. */
const MAX_CHAINS = 4;
/** A body longer than this (UTF-16 code units) is not kept: a chain holds its text and its messages. */
const MAX_KEPT_LENGTH = 16 * 1024 * 1024;

/** One conversation followed from body to body. */
interface Chain {
  /** The body's text up to the end of its last kept message. */
  prefix: string;
  /** `{`, the members before the conversation field, the field's name and `[`, as JSON.stringify writes them. */
  head: string;
  /** The conversation field. */
  field: string;
  /** The kept messages, frozen; `JSON.stringify` of each, joined by `,`, is `prefix` after `head`. */
  elements: readonly JsonValue[];
  /** Whether the messages' texts were checked (on the first body that extends the chain). */
  checked: boolean;
}

/** Bodies parsed with the help of the previous ones (see the module comment). */
export class BodyChains {
  /** Least recently used first. */
  #chains: Chain[] = [];

  /** `JSON.parse(text)`, the conversation's earlier messages reused when `text` extends a body seen before. */
  parse(text: string): unknown {
    const chains = this.#chains;
    for (let i = chains.length - 1; i >= 0; i--) {
      const chain = chains[i]!;
      if (text.length <= chain.prefix.length || !startsWith(text, chain.prefix)) continue;
      const value = extend(chain, text);
      if (value === undefined) {
        chains.splice(i, 1); // it cannot be followed: forget it
        continue;
      }
      if (i !== chains.length - 1) chains.push(...chains.splice(i, 1));
      return value;
    }
    const value: unknown = JSON.parse(text);
    const chain = text.length <= MAX_KEPT_LENGTH ? startChain(text, value) : undefined;
    if (chain !== undefined) {
      chains.push(chain);
      if (chains.length > MAX_CHAINS) chains.shift();
    }
    return value;
  }
}

/**
 * A chain from a body parsed in full: its head and where its messages end,
 * worked out from the parsed value and checked against the text. Its
 * messages' texts are checked only when a later body extends it (most
 * bodies of other workloads never are): `checked` is false until then.
 */
function startChain(text: string, value: unknown): Chain | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const body = value as Record<string, JsonValue>;
  const keys = Object.keys(body);
  const at = keys.findIndex((k) => GROWING_FIELDS.includes(k) && Array.isArray(body[k]));
  if (at < 0) return undefined;
  const field = keys[at]!;
  const before = members(body, keys.slice(0, at));
  const after = members(body, keys.slice(at + 1));
  if (before === undefined || after === undefined) return undefined;
  const head = `{${before}${before === "" ? "" : ","}${JSON.stringify(field)}:[`;
  const tail = `]${after === "" ? "" : ","}${after}}`;
  if (!startsWith(text, head) || text.slice(text.length - tail.length) !== tail) return undefined;
  const end = text.length - tail.length;
  if (end < head.length) return undefined;
  return {
    prefix: text.slice(0, end),
    head,
    field,
    elements: body[field] as JsonValue[],
    checked: false,
  };
}

/** The members `keys` of `body` as JSON.stringify writes them inside an object, or undefined for a value it would skip. */
function members(body: Record<string, JsonValue>, keys: readonly string[]): string | undefined {
  let out = "";
  for (const k of keys) {
    const v = JSON.stringify(body[k]);
    if (v === undefined) return undefined; // never from JSON.parse; kept exact anyway
    out += `${out === "" ? "" : ","}${JSON.stringify(k)}:${v}`;
  }
  return out;
}

/** `JSON.parse(text)` for a text that starts with `chain.prefix`, or undefined when that cannot be shown. */
function extend(chain: Chain, text: string): unknown {
  if (!chain.checked) {
    // The first body to extend it: its messages' texts must be what JSON.stringify writes.
    const { prefix, head, elements } = chain;
    if (JSON.stringify(elements) !== `[${prefix.slice(head.length)}]`) return undefined;
    chain.elements = freezeAll(elements.slice()); // the chain's own array, not the first caller's
    chain.checked = true;
  }
  const kept = chain.elements.length;
  const next = text.charCodeAt(chain.prefix.length);
  // After the last kept message: `,` (more follow) or `]` (none); with none kept, a message or `]`.
  if (kept > 0 && next !== COMMA && next !== CLOSE) return undefined;
  const rest = text.slice(chain.prefix.length + (kept > 0 && next === COMMA ? 1 : 0));
  const tail = chain.head + rest;
  let parsed: unknown;
  try {
    parsed = JSON.parse(tail);
  } catch {
    return undefined; // the full parse decides (and throws as it always did)
  }
  // The proof (module comment): the tail is exactly one object as JSON.stringify writes it.
  const body = parsed as Record<string, JsonValue>;
  const added = body[chain.field];
  if (!Array.isArray(added) || JSON.stringify(parsed) !== tail) return undefined;
  // `,]` after the kept messages parses in the tail but not in the body.
  if (kept > 0 && next === COMMA && added.length === 0) return undefined;
  const addedText = JSON.stringify(added).length - 2; // their texts and the commas between them
  const all = chain.elements.concat(freezeAll(added));
  if (text.length <= MAX_KEPT_LENGTH) {
    const end = chain.prefix.length + (kept > 0 && added.length > 0 ? 1 : 0) + addedText;
    chain.prefix = text.slice(0, end);
    chain.elements = all;
  }
  body[chain.field] = all.slice();
  return body;
}

/**
 * `text.startsWith(prefix)`, by comparing a slice: V8's `startsWith`
 * compares character by character (1.3 ms for 190 KiB, more than
 * `JSON.parse` of it), string equality compares memory (~8 µs).
 */
function startsWith(text: string, prefix: string): boolean {
  return text.length >= prefix.length && text.slice(0, prefix.length) === prefix;
}

const COMMA = 0x2c;
const CLOSE = 0x5d;

/** Freeze each value deeply (JSON: objects and arrays only); returns the array. */
function freezeAll<T extends readonly JsonValue[]>(values: T): T {
  for (const v of values) deepFreeze(v);
  return values;
}

function deepFreeze(v: JsonValue): void {
  if (v === null || typeof v !== "object" || Object.isFrozen(v)) return;
  Object.freeze(v);
  if (Array.isArray(v)) for (const x of v) deepFreeze(x);
  else for (const k in v) deepFreeze((v as Record<string, JsonValue>)[k]!);
}
