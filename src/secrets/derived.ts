/**
 * Values derived from a regex's source, read from derived-tables.ts when
 * that file holds them (the built-in patterns' regexes), derived at run
 * time otherwise.
 *
 * Why: the scanner reads its tables (class tables, required literals,
 * token-run lengths, the base64 start pairs) off the regexes' own sources,
 * so they follow the patterns when these change. Deriving them is ~100
 * regex compilations and thousands of tests, several milliseconds of a
 * fresh process's import and first scan (docs/performance.md, "Cold start:
 * the secret scanner's setup"). scripts/gen-secret-tables.ts runs the same
 * derivations ahead of time and writes their results as plain data.
 *
 * Why a stale table cannot change a result: each value is stored under the
 * regex's own spelling, `/source/flags`, and every derivation is a function
 * of exactly that. A pattern edited without regenerating has a new
 * spelling, finds nothing stored, and is derived at run time as before
 * (slower, never different). test/secrets/derived-tables.test.ts fails
 * until the file is regenerated (`npm run gen:secret-tables`).
 */

/**
 * The key a regex's derived values are stored under: its literal spelling.
 *
 * @example
 * regexKey(/[a-z]/gi) // "/[a-z]/gi"
 */
export function regexKey(re: RegExp): string {
  return `/${re.source}/${re.flags}`;
}

/**
 * The value stored for `re` in `table` (null there: the derivation's
 * `undefined`), or `derive(re)` when nothing is stored.
 *
 * @example
 * storedOrDerived({ "/a/": 1 }, /a/, () => 2) // 1
 */
export function storedOrDerived<T>(
  table: Readonly<Record<string, T | null>>,
  re: RegExp,
  derive: (re: RegExp) => T | undefined,
): T | undefined {
  const stored = table[regexKey(re)];
  if (stored === undefined) return derive(re);
  return stored === null ? undefined : stored;
}
