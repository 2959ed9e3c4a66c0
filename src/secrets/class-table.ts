/**
 * A one-character regex as a lookup table over the 128 ASCII characters,
 * for the loops that extend a match or find a run without a regex (no
 * backtrack stack, any length).
 */
import { regexKey } from "./derived.js";
import { CLASS_CHARS } from "./derived-tables.js";

/**
 * `table[c] === 1` when `re` matches the ASCII character `c`. Derived by
 * testing every character, which costs two regex compilations (V8 tiers a
 * regex up to native code on its second run): the built-in classes' tables
 * are read from derived-tables.ts instead (see {@link tableOfChars}).
 *
 * @example
 * classTable(/[a-c]/)[98] // 1: "b"
 */
export function classTable(re: RegExp): Uint8Array {
  const table = new Uint8Array(128);
  for (let c = 0; c < 128; c++) table[c] = re.test(String.fromCharCode(c)) ? 1 : 0;
  return table;
}

/**
 * The table whose 1s are the characters of `chars` (the form derived-tables.ts
 * stores a class table in: its characters, in code order).
 *
 * @example
 * tableOfChars("abc")[98] // 1
 */
export function tableOfChars(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return table;
}

/**
 * The characters of a table, in code order: the inverse of {@link tableOfChars}.
 *
 * @example
 * charsOfTable(classTable(/[a-c]/)) // "abc"
 */
export function charsOfTable(table: Uint8Array): string {
  let out = "";
  for (let c = 0; c < table.length; c++) if (table[c] === 1) out += String.fromCharCode(c);
  return out;
}

/**
 * The table of `re`: read from derived-tables.ts for a built-in class,
 * derived by {@link classTable} for any other.
 *
 * @example
 * classTableOf(/[A-Za-z0-9+/_=-]/)[61] // 1: "="
 */
export function classTableOf(re: RegExp): Uint8Array {
  // The stored table is what the spelling gives with the built-in methods: a
  // regex with its own `test` or `exec` (a subclass) is asked, as before.
  if (re.test !== RegExp.prototype.test || re.exec !== RegExp.prototype.exec) return classTable(re);
  const chars = CLASS_CHARS[regexKey(re)];
  return chars === undefined ? classTable(re) : tableOfChars(chars);
}
