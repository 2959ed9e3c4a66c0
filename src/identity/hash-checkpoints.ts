/**
 * SHA-256 states kept across calls at points along a long manifest's text
 * (issue 32): an agent loop that is not handed the same frozen messages
 * (conversation-chains.ts: a body parsed anew each turn, any caller but
 * `createFetch`) has its conversation written again each turn, and the
 * identity hashed all of it again. The pieces a conversation is written in
 * are mostly the same string objects from one call to the next (the reuse
 * cache hands each string's pieces out; punctuation and member names are
 * shared constants), so a call compares its pieces with the last calls'
 * and continues from the state kept at the furthest checkpoint before the
 * first piece that differs.
 *
 * Exact, never a guess: a checkpoint is the state after the bytes of `key`
 * (everything before the prompt's pieces: the domain tag and the members
 * before the prompt) and pieces `0..index` of one call. Another call
 * continues from it only when its `key` is the same text and its pieces
 * `0..index` are equal to those (`===`: the same object, or a string of the
 * same text), so the bytes before the checkpoint are the same bytes.
 * Checkpoints are set every {@link EVERY} code units hashed; a call
 * re-hashes at most that much of what it shares with the last one.
 *
 * Kept: the last {@link MAX_KEPT} manifests' piece lists (the strings are
 * mostly the reuse cache's) up to {@link MAX_TEXT} code units each; off and
 * emptied with the reuse cache (normalized-reuse.ts).
 */
import { emptiedWithReuse, reuseIsOn } from "./normalized-reuse.js";
import type { Sha256 } from "./sha256.js";

/** A checkpoint every this many code units of text hashed. */
export const EVERY = 32 * 1024;
/** Manifests whose checkpoints are kept at once. */
const MAX_KEPT = 2;
/** A manifest's prompt longer than this (code units) keeps none. */
const MAX_TEXT = 16 * 1024 * 1024;

interface Mark {
  /** Pieces hashed before this state (the state is after piece index − 1). */
  index: number;
  state: Sha256;
}

interface Kept {
  key: string;
  pieces: readonly string[];
  marks: Mark[];
}

/** Least recently used first. */
let kept: Kept[] = [];
/** Calls that continued from a checkpoint, since the process started (tests read it). */
export const checkpointCounts = { continued: 0 };
emptiedWithReuse(() => {
  kept = [];
});

/**
 * The furthest checkpoint `pieces` (after `key`) can continue from: a copy
 * of its state, its index, and the marks up to it (valid for `pieces` too);
 * undefined when none.
 */
export function findCheckpoint(
  key: string,
  pieces: readonly string[],
): { state: Sha256; index: number; marks: Mark[] } | undefined {
  if (!reuseIsOn()) return undefined;
  let best: { k: Kept; m: number } | undefined;
  for (const k of kept) {
    if (k.key !== key || k.marks.length === 0) continue;
    const last = k.marks[k.marks.length - 1]!.index;
    const n = Math.min(last, pieces.length);
    let i = 0;
    while (i < n && pieces[i] === k.pieces[i]) i++;
    // The furthest mark within the equal run.
    let m = -1;
    for (let j = k.marks.length - 1; j >= 0; j--) {
      if (k.marks[j]!.index <= i) {
        m = j;
        break;
      }
    }
    if (m >= 0 && (best === undefined || k.marks[m]!.index > best.k.marks[best.m]!.index))
      best = { k, m };
  }
  if (best === undefined) return undefined;
  checkpointCounts.continued++;
  const mark = best.k.marks[best.m]!;
  return { state: mark.state.copy(), index: mark.index, marks: best.k.marks.slice(0, best.m + 1) };
}

/** Keep `marks` (states after `key` and `pieces[0..index)`) for the next calls. */
export function keepCheckpoints(key: string, pieces: readonly string[], marks: Mark[]): void {
  if (!reuseIsOn() || marks.length === 0) return;
  let length = 0;
  for (const p of pieces) length += p.length;
  if (length > MAX_TEXT) return;
  const l = kept;
  l.push({ key, pieces: pieces.slice(), marks });
  if (l.length > MAX_KEPT) l.shift();
}
