/**
 * Finding long runs of one character class (base64 runs that may hide a
 * key) while reading only a fraction of the text. A run of `min` or more
 * characters holds a position of every residue modulo `min`, so it is
 * enough to look at every `min`-th character and, where one belongs to the
 * class, to extend left and right. Ordinary prose (short words between
 * spaces) then costs about one read per few characters, where a regex that
 * tries a bounded match at each word start costs several per character.
 */

/** A run of class characters: [start, end). */
export interface CharRun {
  start: number;
  end: number;
}

/**
 * The first maximal run of characters whose ASCII code has `table[c] === 1`
 * (non-ASCII never belongs), starting at or after `from` (a run crossing
 * `from` is clipped to it) and at least `min` (≥ 1) long; undefined when
 * there is none. Only `text[from, to)` is read (default: to the end; a run
 * crossing `to` is clipped to it), so the runs of a subclass inside one run
 * of a wider class are found without reading past it (shared-runs.ts).
 *
 * @example
 * nextLongRun("ab abcdef", 0, LETTERS, 4) // { start: 3, end: 9 }
 */
export function nextLongRun(
  text: string,
  from: number,
  table: Uint8Array,
  min: number,
  to: number = text.length,
): CharRun | undefined {
  const n = to;
  // The class test is written out at each use, not a function: a process's
  // first scans run this in the interpreter, where a call per character
  // costs more than the test, and a small function called that often was the
  // first thing V8 optimized, a compile (the process's first, ~2 ms) that
  // the first scan waited for.

  // Every run of `min` that starts at or after `from` holds position j.
  let j = from + min - 1;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c >= 128 || table[c] !== 1) {
      j += min; // a run of `min` ending before j + min would have to hold j
      continue;
    }
    let start = j;
    while (start > from) {
      const b = text.charCodeAt(start - 1);
      if (b >= 128 || table[b] !== 1) break;
      start--;
    }
    // The run from `start` is long enough when every character up to
    // start + min - 1 belongs. Read those from the far end back towards j:
    // a character q outside the class rules out every run starting at or
    // before q, so the next run to look for starts after q, and q is
    // usually well past the end of the short word j fell in.
    const last = start + min - 1;
    if (last >= n) return undefined; // no run of `min` fits after `start` either
    let q = last;
    while (q > j) {
      const b = text.charCodeAt(q);
      if (b >= 128 || table[b] !== 1) break;
      q--;
    }
    if (q === j) {
      let end = last + 1;
      while (end < n) {
        const b = text.charCodeAt(end);
        if (b >= 128 || table[b] !== 1) break;
        end++;
      }
      return { start, end };
    }
    j = q + min;
  }
  return undefined;
}
