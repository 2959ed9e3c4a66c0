/**
 * The positions the whitespace rule works from, found by native searches
 * rather than by reading the text one character at a time in JavaScript (a
 * `charCodeAt` loop over the 100 KiB bench prompt costs about 2.5× its
 * SHA-256 on the reference VM; `indexOf("\n")` over all of it, hit by hit,
 * a tenth of that). Each search is cached: asked again from a position at or
 * after where it last searched and not past what it found, the answer
 * stands, so a walk that asks at every run or line costs one search per hit
 * and never re-reads text.
 */

/** Exactly the characters `\s` matches (ECMAScript WhiteSpace and LineTerminator). */
export function isWhitespaceCode(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

// Whitespace that a run of spaces and "\n" alone does not explain: any
// whitespace character other than a space or "\n", or two spaces. With the
// "\n" search this finds every run the whitespace rule must collapse.
const UNUSUAL_WS = /[^\S \n]| {2}/g;

/** One cached forward search: where it last started, and what it found (the text's length when nothing). */
interface Cache {
  from: number;
  at: number;
}

const fresh = (): Cache => ({ from: Number.POSITIVE_INFINITY, at: -1 });

/** The cached searches over one text, for one call of the rule. */
export class Anchors {
  private readonly lf = fresh();
  private readonly cr = fresh();
  private readonly unusual = fresh();
  private readonly backticks = fresh();
  private readonly tildes = fresh();
  /** The text has a CR: line ends are searched for both "\n" and "\r". */
  readonly hasCR: boolean;

  constructor(readonly s: string) {
    this.hasCR = s.indexOf("\r") >= 0;
  }

  /** Is the cached answer valid for a search from `from`? */
  private static valid(c: Cache, from: number): boolean {
    return c.from <= from && from <= c.at;
  }

  private find(c: Cache, from: number, needle: string): number {
    if (!Anchors.valid(c, from)) {
      const i = this.s.indexOf(needle, from);
      c.from = from;
      c.at = i < 0 ? this.s.length : i;
    }
    return c.at;
  }

  /** The first "\n" at or after `from`, or the text's length. */
  nextLF(from: number): number {
    return this.find(this.lf, from, "\n");
  }

  /** End of the line holding `from`: its "\n" or "\r", or the text's length. */
  lineEnd(from: number): number {
    const lf = this.nextLF(from);
    if (!this.hasCR) return lf;
    const cr = this.find(this.cr, from, "\r");
    return Math.min(cr, lf);
  }

  /** The first "```" (backtick) or "~~~" at or after `from`, or the text's length. */
  nextMarker(backtick: boolean, from: number): number {
    return backtick ? this.find(this.backticks, from, "```") : this.find(this.tildes, from, "~~~");
  }

  /**
   * A position at or after `from` inside a whitespace run holding another
   * whitespace character than a space or "\n", or two spaces in a row (the
   * text's length when there is none). Not necessarily the run's first
   * character: `test()` gives the end of the match, whose last character is
   * whitespace, and makes no match object.
   */
  nextUnusual(from: number): number {
    const c = this.unusual;
    if (!Anchors.valid(c, from)) {
      UNUSUAL_WS.lastIndex = from;
      c.from = from;
      c.at = UNUSUAL_WS.test(this.s) ? UNUSUAL_WS.lastIndex - 1 : this.s.length;
    }
    return c.at;
  }
}
