/**
 * shellQuote against a real `/bin/sh`: any string (spaces, quotes, `$`,
 * backticks, `;`, newlines, non-ASCII) comes back from the shell as exactly
 * one word equal to itself; plainly safe words stay bare.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shellQuote } from "../../src/shell/index.js";
import { shellWords } from "../helpers/shell-words.js";

describe("shellQuote", () => {
  it("leaves plainly safe words bare and single-quotes the rest", () => {
    expect(shellQuote("sqlite://.invocache/cache.sqlite")).toBe("sqlite://.invocache/cache.sqlite");
    expect(shellQuote("3f2a9c0d")).toBe("3f2a9c0d");
    expect(shellQuote("--older-than")).toBe("--older-than");
    expect(shellQuote("a=b")).toBe("a=b");
    expect(shellQuote("=b")).toBe("'=b'"); // zsh expands a leading =
    expect(shellQuote("~/x")).toBe("'~/x'");
    expect(shellQuote("{a,b}")).toBe("'{a,b}'");
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("/tmp/my store/it's $HOME")).toBe(`'/tmp/my store/it'\\''s $HOME'`);
  });

  it("every string reaches the shell as one word equal to itself", () => {
    const special = fc.constantFrom(..." '\"$`;&|<>(){}[]*?~#=!\\\n\t%,-é😀");
    const word = fc
      .array(fc.oneof(special, fc.string({ maxLength: 3 })), { maxLength: 12 })
      .map((parts) => parts.join("").replace(/\0/g, ""));
    const samples = fc.sample(word, { numRuns: 300, seed: 29 });
    samples.push("", "'", "''", "\\'", "$(touch pwned)", "`id`", "a;b", "-n", "--");
    // One shell for all of them: a command line of every quoted sample.
    const words = shellWords(samples.map(shellQuote).join(" "));
    expect(words).toEqual(samples);
  });
});
