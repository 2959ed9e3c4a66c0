/**
 * The secret scanner runs on every string written to a cassette, prompts of
 * megabytes included, so it must be linear on any input (like the
 * normalization rules). Two guards: no pattern has a quantified group that
 * contains a quantifier (the shape of catastrophic backtracking), and
 * adversarial inputs of 128 KiB scan in well under a second (a quadratic
 * scan of that size takes minutes).
 */
import { describe, expect, it } from "vitest";
import {
  createSecretScanner,
  restoreSecrets,
  SECRET_PATTERNS,
  SECRET_PLACEHOLDER,
} from "../../src/secrets/index.js";

/** Sources of every regex the secrets module runs on untrusted text. */
const REGEXES: Array<[string, RegExp]> = [
  ...SECRET_PATTERNS.map((p): [string, RegExp] => [p.name, p.regex]),
  ["placeholder", SECRET_PLACEHOLDER],
];

/** Groups followed by a quantifier whose body has a quantifier too, e.g. `(a+)+`, `(?:x*y)*`. */
function nestedQuantifiers(source: string): string[] {
  const found: string[] = [];
  const stack: Array<{ start: number; quantified: boolean }> = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") stack.push({ start: i, quantified: false });
    else if (c === ")") {
      const group = stack.pop()!;
      const next = source[i + 1];
      const quantifiedGroup = next === "*" || next === "+" || next === "{" || next === "?";
      if (quantifiedGroup && group.quantified) found.push(source.slice(group.start, i + 2));
      if (stack.length > 0 && (group.quantified || quantifiedGroup))
        stack[stack.length - 1]!.quantified = true;
    } else if (
      (c === "*" || c === "+" || c === "{" || (c === "?" && source[i - 1] !== "(")) &&
      stack.length > 0
    ) {
      stack[stack.length - 1]!.quantified = true;
    }
  }
  return found;
}

describe("secret patterns are linear-time", () => {
  it("the guard itself catches nested quantifiers", () => {
    expect(nestedQuantifiers("(a+)+")).toStrictEqual(["(a+)+"]);
    expect(nestedQuantifiers("(?:x*y)*z")).toStrictEqual(["(?:x*y)*"]);
    expect(nestedQuantifiers("((ab)*c)+")).toStrictEqual(["((ab)*c)+"]);
    expect(nestedQuantifiers("(?:ab|cd)?[a-z]{3,}")).toStrictEqual([]);
  });

  it.each(REGEXES)("%s has no quantified group containing a quantifier", (_name, regex) => {
    expect(nestedQuantifiers(regex.source)).toStrictEqual([]);
  });

  const anchors = [
    "sk-",
    "sk-ant-",
    "ghp_",
    "github_pat_",
    "AIza",
    "xoxb-",
    "AKIA",
    "secret_access_key=",
    "Bearer ",
    "bearer\t",
    "eyJ",
    "eyJa.",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END",
    "{secret:",
    "{secret:A:",
    "glpat-",
    "hf_",
    "Basic ",
    "://",
    "://u:",
    "Password=",
    "AccountKey=",
    "%4",
  ];
  const fillers = ["a", "Z", "0", "-", "_", ".", " ", "\t", "=", "/", "+", "\n", "%", "@", ":"];
  const SIZE = 128 * 1024;
  const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
  const inputs: string[] = [];
  for (const a of anchors) {
    inputs.push(fill(a));
    for (const f of fillers) for (const k of [1, 39]) inputs.push(fill(a + f.repeat(k)));
  }
  for (const f of fillers) inputs.push(fill(f));

  it(`scans ${inputs.length} adversarial inputs of 128 KiB, each well under a second`, () => {
    const scanner = createSecretScanner({
      env: { LONG_API_KEY: "a".repeat(64), OTHER_TOKEN: "sk-aaaaaaaa" },
    });
    let slowest = 0;
    for (const input of inputs) {
      const started = performance.now();
      scanner.redactString(input, "$", []);
      restoreSecrets(input, { env: {} });
      slowest = Math.max(slowest, performance.now() - started);
    }
    // Linear: about a millisecond each here. Quadratic on 128 KiB: tens of seconds.
    expect(slowest).toBeLessThan(1_000);
  });
});
