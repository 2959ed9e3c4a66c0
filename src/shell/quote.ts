/**
 * Quoting for the shell commands invocache prints for a person to paste (the
 * viewer's command panel, the CLI's hints, the re-record command of a miss):
 * one function, so a path with a space, a quote, `$`, a backtick or `;` is
 * one word everywhere, and never runs anything when pasted.
 *
 * POSIX single quotes (XCU 2.2.2): every character between them is literal,
 * so the only one to handle is the single quote itself, written `'\''`
 * (close, an escaped quote, reopen). A word made only of characters no
 * POSIX shell, bash or zsh treats specially is left bare, so the common
 * case (`sqlite://.invocache/cache.sqlite`, a hex id) reads as typed.
 */

/**
 * Characters that are never special in a word: no globbing, expansion,
 * quoting, operators or comments. `=` is safe only after the first
 * character (zsh expands a word starting with `=`); `~` (tilde expansion)
 * and `,` / `{` (brace expansion in bash and zsh) are not in the set.
 */
const BARE = /^[A-Za-z0-9_./:@%+-][A-Za-z0-9_./:@%+=-]*$/;

/**
 * `word` as one shell word: bare when it is plainly safe, else in POSIX
 * single quotes.
 *
 * @example
 * shellQuote("sqlite://.invocache/cache.sqlite") // "sqlite://.invocache/cache.sqlite"
 * shellQuote("/tmp/my store/it's $HOME")         // "'/tmp/my store/it'\\''s $HOME'"
 * shellQuote("")                                 // "''"
 */
export function shellQuote(word: string): string {
  if (BARE.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
