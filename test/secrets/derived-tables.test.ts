/**
 * src/secrets/derived-tables.ts holds, as plain data, what the scanner
 * derives from the built-in regexes' sources (derived.ts says why). These
 * tests keep it equal to the run-time derivations, which stay the one
 * source of truth: the generator and this file both call them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  deriveSecretTables,
  pairGroups,
  renderSecretTables,
  TABLES_PATH,
} from "../../scripts/gen-secret-tables.js";
import { startPairs, tableOfGroups } from "../../src/secrets/base64-anchors.js";
import { classTable, classTableOf } from "../../src/secrets/class-table.js";
import { regexKey, storedOrDerived } from "../../src/secrets/derived.js";
import {
  CLASS_CHARS,
  MIN_TOKEN_RUNS,
  REQUIRED_LITERALS,
  START_PAIRS,
} from "../../src/secrets/derived-tables.js";
import { SECRET_ANCHORS, SECRET_PATTERNS } from "../../src/secrets/patterns.js";
import { requiredLiterals } from "../../src/secrets/prefilter.js";
import { BASE64_CLASS, PERCENT_CLASS } from "../../src/secrets/redact.js";
import { minTokenRun, TOKEN_CHAR, TOKEN_TABLE } from "../../src/secrets/token-runs.js";

const REGENERATE = "stale: run `npm run gen:secret-tables` (scripts/gen-secret-tables.ts)";

describe("derived-tables.ts", () => {
  const derived = deriveSecretTables();

  it("equals what the run-time derivations give for the built-in regexes", () => {
    expect(CLASS_CHARS, `CLASS_CHARS ${REGENERATE}`).toEqual(derived.classChars);
    expect(REQUIRED_LITERALS, `REQUIRED_LITERALS ${REGENERATE}`).toEqual(derived.requiredLiterals);
    expect(MIN_TOKEN_RUNS, `MIN_TOKEN_RUNS ${REGENERATE}`).toEqual(derived.minTokenRuns);
    expect(START_PAIRS, `START_PAIRS ${REGENERATE}`).toEqual(derived.startPairs);
  });

  it("is the file the generator writes", () => {
    expect(readFileSync(TABLES_PATH, "utf8"), `derived-tables.ts ${REGENERATE}`).toBe(
      renderSecretTables(derived),
    );
  });

  it("covers every built-in regex the scanner derives from", () => {
    for (const re of [TOKEN_CHAR, PERCENT_CLASS, BASE64_CLASS]) {
      expect(CLASS_CHARS[regexKey(re)], String(re)).toBeDefined();
    }
    for (const p of SECRET_PATTERNS) {
      if (p.extend !== undefined) expect(CLASS_CHARS[regexKey(p.extend)], p.name).toBeDefined();
      expect(REQUIRED_LITERALS[regexKey(p.regex)], p.name).toBeDefined();
      expect(MIN_TOKEN_RUNS[regexKey(p.regex)], p.name).toBeDefined();
    }
    expect(START_PAIRS[regexKey(SECRET_ANCHORS)]).toBeDefined();
  });
});

describe("reading the stored tables", () => {
  it("gives the derived class tables", () => {
    const classes = [
      TOKEN_CHAR,
      PERCENT_CLASS,
      BASE64_CLASS,
      ...SECRET_PATTERNS.map((p) => p.extend),
    ];
    for (const re of classes) {
      if (re !== undefined) expect(classTableOf(re), String(re)).toEqual(classTable(re));
    }
    expect(TOKEN_TABLE).toEqual(classTable(TOKEN_CHAR));
  });

  it("gives the derived literals and token-run lengths", () => {
    for (const p of SECRET_PATTERNS) {
      expect(storedOrDerived(REQUIRED_LITERALS, p.regex, requiredLiterals), p.name).toEqual(
        requiredLiterals(p.regex),
      );
      expect(storedOrDerived(MIN_TOKEN_RUNS, p.regex, minTokenRun), p.name).toBe(
        minTokenRun(p.regex),
      );
    }
  });

  it("gives the anchors' start-pair table, all 65,536 entries", () => {
    const groups = START_PAIRS[regexKey(SECRET_ANCHORS)];
    expect(groups).toBeDefined();
    // Compared as groups (lossless, below): toEqual on 65,536 bytes takes most of a second.
    const read = tableOfGroups(groups!)!;
    const derivedTable = startPairs(SECRET_ANCHORS)!;
    expect(pairGroups(read)).toEqual(pairGroups(derivedTable));
    expect(Buffer.from(read).equals(derivedTable)).toBe(true);
    // The grouping is lossless on any table, not only the anchors'.
    const table = new Uint8Array(65536);
    for (const i of [0, 1, 257, 258, 0x6b73, 0xffff]) table[i] = 1;
    expect(tableOfGroups(pairGroups(table))).toEqual(table);
    expect(tableOfGroups(null)).toBeUndefined();
  });

  it("derives at run time what it does not hold (a pattern changed without regenerating)", () => {
    // A different spelling of a built-in class: not stored, so derived, so still exact.
    const edited = /[A-Za-z0-9_.~-]/;
    expect(CLASS_CHARS[regexKey(edited)]).toBeUndefined();
    expect(classTableOf(edited)).toEqual(classTable(edited));
    expect(classTableOf(edited)[126]).toBe(1); // `~`, which no stored class of this shape has
    const sk = SECRET_PATTERNS.find((p) => p.name === "openai-api-key")!.regex;
    const renamed = new RegExp(sk.source.replace("sk-", "sq-"), sk.flags);
    expect(REQUIRED_LITERALS[regexKey(renamed)]).toBeUndefined();
    expect(storedOrDerived(REQUIRED_LITERALS, renamed, requiredLiterals)).toEqual({
      any: ["sq-"],
      fold: false,
    });
    // The same source under other flags is another regex (`i` folds case).
    expect(regexKey(/ab/i)).not.toBe(regexKey(/ab/));
  });

  it("asks a regex with its own test or exec, whatever its spelling", () => {
    class OnlyQ extends RegExp {
      override test(s: string): boolean {
        return s === "q";
      }
    }
    const odd = new OnlyQ("[A-Za-z0-9]"); // a stored spelling
    expect(CLASS_CHARS[regexKey(odd)]).toBeDefined();
    expect(classTableOf(odd)).toEqual(classTable(odd));
    expect(classTableOf(odd).reduce((n, b) => n + b, 0)).toBe(1);
    const own = /[A-Za-z0-9]/;
    own.exec = () => null;
    expect(classTableOf(own).reduce((n, b) => n + b, 0)).toBe(0);
  });
});
