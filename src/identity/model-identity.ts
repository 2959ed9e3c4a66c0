/**
 * The hash of a model manifest, recipe v1 (docs/identity.md):
 *   sha256( "invocache/invocation/v1\n" ‖ WTF-8( JCS(manifest) ) ), lowercase hex.
 * The model entry of the kind table (kinds.ts) hashes through it.
 */
import {
  type CanonicalValue,
  canonicalJson,
  canonicalString,
  smallCanonicalJson,
  writeCanonicalJson,
  wtf8,
} from "./canonical-json.js";
import { type ConversationPieces, escapedPrompts } from "./conversation.js";
import { hashAfter } from "./conversation-chains.js";
import { EVERY as CHECKPOINT_EVERY, findCheckpoint, keepCheckpoints } from "./hash-checkpoints.js";
import type { ModelManifest } from "./manifest-types.js";
import { MANIFEST_FIELDS, REQUIRED_MANIFEST_FIELDS } from "./schema.js";
import { createSha256, type Sha256, sha256Hex, sha256HexOfText } from "./sha256.js";

/** Domain tag of recipe v1: no other invocache digest starts with these bytes. */
export const IDENTITY_DOMAIN_V1 = "invocache/invocation/v1\n";

/** The identity of a model manifest (recipe v1). */
export function modelManifestIdentity(manifest: ModelManifest): string {
  // A prompt made from a conversation comes with its pieces escaped again
  // (conversation.ts): used while the manifest's prompt is still that text.
  const pieces: ConversationPieces | undefined = escapedPrompts.get(manifest);
  const escaped =
    pieces?.prompt !== undefined && manifest.prompt === pieces.prompt ? pieces.escaped : undefined;
  return builtManifestIdentity(
    manifest,
    escaped,
    undefined,
    pieces?.wellFormed === true,
    escaped === undefined ? undefined : pieces?.chained,
  );
}

/**
 * {@link modelManifestIdentity} of a manifest just made, with what was
 * worked out on the way, from a caller that made the manifest and hashes it
 * at once (invocationIdentity), not checked: `escaped`, the manifest's
 * prompt as its canonical JSON holds it (the inside of its quotes, in
 * pieces: a conversation's, conversation.ts), and `paramsText`, the
 * canonical JSON of `manifest.params`. With `escaped`, the manifest's
 * prompt may be "" (buildManifest's promptLater): it is filled in from the
 * pieces only if the general path runs. `escapedWellFormed`: every piece of
 * `escaped` is known to be well-formed (conversation.ts works that out once
 * per string and the reuse cache keeps it), so a long prompt's text is not
 * read again to find out before it is hashed. `chained`: `escaped[index]`
 * is a kept segment's text, whose hash state continues (conversation-chains.ts).
 * `checkpoints`: whether the hash may continue from, and keep, checkpoints
 * for `escaped` (hash-checkpoints.ts; false for a long plain prompt).
 */
export function builtManifestIdentity(
  manifest: ModelManifest,
  escaped: readonly string[] | undefined,
  paramsText: string | undefined,
  escapedWellFormed = false,
  chained?: ConversationPieces["chained"],
  checkpoints = true,
): string {
  if (escaped !== undefined) {
    // Short: written as one string (smallManifestIdentity); else, or when
    // that does not take it, the pieces hashed between the other members.
    if (shorterThan(escaped, SMALL_MAX)) {
      const id = smallManifestIdentity(manifest, escaped, paramsText);
      if (id !== undefined) return id;
    }
    const id = escapedPromptIdentity(manifest, escaped, escapedWellFormed, chained, checkpoints);
    if (id !== undefined) return id;
    // The general path reports what is wrong; it reads the prompt itself.
    // JSON.parse undoes exactly the canonical escaping (lone surrogates
    // are written as they are, and read back as they are).
    if (manifest.prompt === "") manifest.prompt = JSON.parse(`"${escaped.join("")}"`) as string;
  } else {
    const id = smallManifestIdentity(manifest, undefined, paramsText);
    if (id !== undefined) return id;
  }
  // Hash the canonical text piece by piece: the same bytes as
  // manifestBytes(manifest), without ever building a copy of a large prompt
  // (docs/performance.md, "Identity core"). Well-formed pieces go in as text
  // (their UTF-8 is their WTF-8); a piece with a lone surrogate as WTF-8. The
  // ASCII domain tag rides on the first piece: one hash update fewer.
  // Most manifests are one piece (under 8 K code units): that one is held
  // and hashed in one call (sha256HexOfText), with no incremental hash
  // object; a second piece starts one.
  let held: string | undefined;
  let h: Sha256 | undefined;
  let first = true;
  // cast: Manifest is an interface (no index signature) of JSON data, checked when built: canonical JSON takes it as is.
  writeCanonicalJson(manifest as unknown as CanonicalValue, (piece, wellFormed) => {
    const text = first ? IDENTITY_DOMAIN_V1 + piece : piece;
    const isFirst = first;
    first = false;
    if (isFirst && wellFormed) {
      held = text;
      return;
    }
    if (h === undefined) {
      h = createSha256();
      if (held !== undefined) h.update(held);
      held = undefined;
    }
    h.update(wellFormed ? text : wtf8(text));
  });
  if (h !== undefined) return h.hex();
  return sha256HexOfText(held ?? IDENTITY_DOMAIN_V1);
}

/**
 * Manifests whose canonical text stays under this many code units are
 * written as one string, member by member, and hashed in one call: no piece
 * writer, sink closure or pieces array (a tiny request's identity is mostly
 * such fixed costs). Below the piece size, so the general path would have
 * hashed them as one piece too.
 */
const SMALL_MAX = 4096;

/**
 * The identity of a small manifest (see {@link SMALL_MAX}), or undefined
 * for the general path (larger, or anything that is not plain JSON: the
 * general path reports it). The prompt's inside is `escaped` joined when
 * the conversation's pieces are at hand (it is already escaped for the
 * manifest's text), else written like every other member.
 */
function smallManifestIdentity(
  manifest: ModelManifest,
  escaped: readonly string[] | undefined,
  paramsText: string | undefined,
): string | undefined {
  // cast: read the manifest's members by name (an interface has no index signature); each is JSON, checked when built.
  const m = manifest as unknown as Record<string, CanonicalValue | undefined>;
  const keys = Object.keys(m);
  // The members in canonical order (UTF-16 code units): as invocationManifest
  // makes them, already known; any other manifest sorts its own.
  const sorted = builtOrder(keys) ?? keys.sort();
  let text = `${IDENTITY_DOMAIN_V1}{`;
  for (let i = 0; i < sorted.length; i++) {
    const k = sorted[i]!;
    const v = m[k];
    if (v === undefined) return undefined;
    let member: string | undefined;
    if (k === "prompt" && escaped !== undefined) {
      member = `"${escaped.length === 1 ? escaped[0]! : escaped.join("")}"`;
    } else if (k === "params" && paramsText !== undefined) member = paramsText;
    else member = smallCanonicalJson(v, SMALL_MAX);
    const name = QUOTED_NAMES.get(k) ?? smallCanonicalJson(k, SMALL_MAX);
    if (member === undefined || name === undefined) return undefined;
    text += `${i > 0 ? "," : ""}${name}:${member}`;
    if (text.length > SMALL_MAX) return undefined;
  }
  text += "}";
  // A lone surrogate must be hashed as its WTF-8, which UTF-8 text input would not give.
  return text.isWellFormed() ? sha256HexOfText(text) : sha256Hex(wtf8(text));
}

// A model manifest's members, sorted (schema.ts's lists): invocationManifest
// adds them in this order, params (when given) last.
const SORTED: readonly string[] = REQUIRED_MANIFEST_FIELDS;
const SORTED_WITH_PARAMS: readonly string[] = MANIFEST_FIELDS;
/** The members' names as canonical JSON strings (none needs escaping). */
const QUOTED_NAMES = new Map(SORTED_WITH_PARAMS.map((k) => [k as string, `"${k}"`]));

/**
 * The sorted members when `keys` are exactly those of a manifest made by
 * invocationManifest, in its order (params, when given, last); else
 * undefined. Comparing seven names is cheaper than sorting them.
 */
function builtOrder(keys: readonly string[]): readonly string[] | undefined {
  const n = keys.length;
  if (n !== 6 && !(n === 7 && keys[6] === "params")) return undefined;
  for (let i = 0; i < 6; i++) if (keys[i] !== SORTED[i]) return undefined;
  return n === 6 ? SORTED : SORTED_WITH_PARAMS;
}

/** Is the pieces' total length under `max` (read only as far as it takes)? */
function shorterThan(pieces: readonly string[], max: number): boolean {
  let n = 0;
  for (let i = 0; i < pieces.length; i++) {
    n += pieces[i]!.length;
    if (n >= max) return false;
  }
  return true;
}

/** Hash in slices of about this many code units (as writeCanonicalJson cuts its pieces). */
const SLICE = 8192;

/**
 * The identity of a manifest whose prompt's canonical JSON (the inside of
 * its quotes) is `escaped` joined: the same bytes as the general path, the
 * members around the prompt written by canonicalJson in canonical order, the
 * prompt's inside taken as it is. Undefined (use the general path) for a
 * member canonicalJson would not write as a member.
 */
function escapedPromptIdentity(
  manifest: ModelManifest,
  escaped: readonly string[],
  escapedWellFormed: boolean,
  chained: ConversationPieces["chained"],
  checkpoints: boolean,
): string | undefined {
  let head = `${IDENTITY_DOMAIN_V1}{`;
  let tail = '"';
  let after = false;
  let first = true;
  // Member names sorted by UTF-16 code units, as canonicalJson sorts them.
  for (const k of Object.keys(manifest).sort()) {
    const v = (manifest as unknown as Record<string, unknown>)[k];
    if (v === undefined) return undefined;
    const name = `${first ? "" : ","}${canonicalString(k)}:`;
    first = false;
    if (k === "prompt") {
      head += `${name}"`;
      after = true;
      continue;
    }
    const member = name + canonicalJson(v as CanonicalValue);
    if (after) tail += member;
    else head += member;
  }
  tail += "}";
  // No piece ends inside a surrogate pair (each is whole JSON strings or
  // punctuation), so encoding slice by slice gives the bytes of the whole,
  // and the whole is well-formed when every piece is. Known for the
  // prompt's pieces, the few members around them are checked here; else
  // each slice is (reading a slice for that cost about two thirds of
  // hashing it: a long conversation paid it on every turn).
  const known = escapedWellFormed && head.isWellFormed() && tail.isWellFormed();
  let h: Sha256 | undefined;
  let text = head;
  let from = 0;
  // Checkpoints (hash-checkpoints.ts): where the pieces continue from the
  // last calls', and the states to keep for the next ones.
  let marks: { index: number; state: Sha256 }[] | undefined;
  let sinceMark = 0;
  if (chained !== undefined && escaped[chained.index] === chained.segment.escaped) {
    // A kept segment: the state after everything up to its end, then the rest.
    for (let i = 0; i < chained.index; i++) text += escaped[i];
    h = hashAfter(chained.segment, text);
    text = "";
    from = chained.index + 1;
  } else if (checkpoints) {
    const found = findCheckpoint(head, escaped);
    if (found !== undefined) {
      h = found.state;
      text = "";
      from = found.index;
    }
    marks = found?.marks ?? [];
  }
  for (let i = from; i < escaped.length; i++) {
    const p = escaped[i]!;
    text += p;
    if (text.length >= SLICE) {
      h ??= createSha256();
      h.update(known || text.isWellFormed() ? text : wtf8(text));
      sinceMark += text.length;
      text = "";
      if (marks !== undefined && sinceMark >= CHECKPOINT_EVERY) {
        marks.push({ index: i + 1, state: h.copy() });
        sinceMark = 0;
      }
    }
  }
  if (marks !== undefined && marks.length > 0) keepCheckpoints(head, escaped, marks);
  text += tail;
  const last = known || text.isWellFormed();
  if (h === undefined && last) return sha256HexOfText(text);
  h ??= createSha256();
  h.update(last ? text : wtf8(text));
  return h.hex();
}
