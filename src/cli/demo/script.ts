/**
 * What the simulated model answers: a fixed script keyed on the agent's
 * system prompt, so every run of the demo produces the same artifacts. The
 * reviewer rejects a draft without tests; the builder adds tests once the
 * reviewer's feedback is in its prompt.
 */

const PLAN = `# Plan: slugify()

1. Add \`slugify(text)\` to src/slugify.ts: strip accents, lowercase, join words with "-".
2. Export it from src/index.ts.
3. Cover it with unit tests: accents, punctuation, empty input.
`;

const CODE = `// src/slugify.ts
export function slugify(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\\u0300-\\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
`;

const TESTS = `
// test/slugify.test.ts
import { expect, test } from "vitest";
import { slugify } from "../src/slugify.js";

test("slugify", () => {
  expect(slugify("Crème Brûlée!")).toBe("creme-brulee");
  expect(slugify("  Hello,   World ")).toBe("hello-world");
  expect(slugify("")).toBe("");
});
`;

/** Marker the pipeline puts in a builder prompt that carries the reviewer's feedback. */
export const FEEDBACK_MARKER = "Reviewer feedback on the previous attempt:";

/**
 * The simulated model's answer to a system and a user message.
 *
 * @example
 * reply("You are the reviewer.", "Draft: …no tests…").startsWith("REJECT") // true
 */
export function reply(system: string, user: string): string {
  if (system.includes("planner")) return PLAN;
  if (system.includes("builder")) return user.includes(FEEDBACK_MARKER) ? CODE + TESTS : CODE;
  if (system.includes("reviewer")) {
    return user.includes("test(")
      ? "ACCEPT\nThe draft follows the plan: slugify() is implemented and steps 1-3 are covered, with tests.\n"
      : "REJECT\nStep 3 of the plan asks for unit tests; the draft has none. Add tests for accents, punctuation and empty input.\n";
  }
  return "I am the invocache demo model; I only know the planner, builder and reviewer.\n";
}
