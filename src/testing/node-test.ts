/**
 * `invocache/node-test`: one cassette per test for the built-in runner
 * (`node --test`), the same helper as `invocache/vitest` (the same core:
 * testing/cassette-test.ts).
 *
 * ```js
 * import { test } from "node:test";
 * import { withCassette } from "invocache/node-test";
 *
 * test("plans the change", withCassette(async ({ recorder }, t) => {
 *   const plan = await recorder.call({ role: "planner", model: "gpt-5", prompt }, () => callModel(prompt));
 *   assert.equal(plan.steps.length, 3);
 * }));
 * ```
 *
 * - The cassette is `cassettes/<test file>/<test-name-slug>-<hash>.yaml`,
 *   the test's name being its full name (`t.fullName`: enclosing
 *   `describe`/test names and its own).
 * - Mode: `replay` under `CI`, else `auto` (or `INVOCACHE_MODE`, or the
 *   `mode` option); a replay miss names the command that re-records the test.
 * - Written only when the test passes; unused entries reported (`strict`
 *   fails the test, `prune` drops them); two tests of the same full name in
 *   one file are refused.
 * - After the file's tests, one summary line (calls replayed, upstream calls,
 *   misses, what replays saved); `INVOCACHE_SUMMARY=0` turns it off.
 */
import { relative, resolve, sep } from "node:path";
import { after, type TestContext } from "node:test";
import { shellQuote } from "../shell/index.js";
import {
  type CassetteContext,
  runCassetteTest,
  type WithCassetteOptions,
} from "./cassette-test.js";
import { fileSummary, summaryWanted } from "./file-summary.js";

export { cassettePathFor, namedCassettePath } from "./cassette-paths.js";
export type {
  CassetteContext,
  GlobalCassetteOptions,
  WithCassetteOptions,
} from "./cassette-test.js";

type Body = (cassette: CassetteContext, t: TestContext) => Promise<void> | void;

const summary = fileSummary();
// Imported at the top of a test file (each file runs in its own process
// under `node --test`): a top-level `after` is the file's.
after(() => {
  const line = summary.line();
  if (line !== undefined && summaryWanted()) console.log(line);
});

/** A key per test context: two tests of one name are two keys. */
const keys = new WeakMap<object, string>();
let nextKey = 0;

/**
 * Wrap a node:test body so that it runs against its own cassette.
 *
 * @example
 * test("summarizes", withCassette(async ({ recorder }, t) => { … }));
 * test("global", withCassette({ global: true }, async () => { … }));
 */
export function withCassette(fn: Body): (t: TestContext) => Promise<void>;
export function withCassette(
  options: WithCassetteOptions,
  fn: Body,
): (t: TestContext) => Promise<void>;
export function withCassette(
  a: Body | WithCassetteOptions,
  b?: Body,
): (t: TestContext) => Promise<void> {
  const [options, fn] = typeof a === "function" ? [{}, a] : [a, b];
  if (typeof fn !== "function") {
    throw new TypeError(
      "withCassette: pass the test body, e.g. withCassette(async ({ recorder }, t) => …)",
    );
  }
  // One parameter: node:test would take a second as the `done` callback.
  return (t) => {
    const ctx = t as TestContext & { fullName?: string; filePath?: string };
    const file = ctx?.filePath ?? process.argv[1];
    if (ctx === undefined || typeof ctx.name !== "string" || typeof file !== "string") {
      throw new TypeError(
        "withCassette: use the returned function as a node:test body: test(name, withCassette(fn))",
      );
    }
    const testName = ctx.fullName ?? ctx.name;
    let key = keys.get(ctx);
    if (key === undefined) {
      key = String(nextKey++);
      keys.set(ctx, key);
    }
    return runCassetteTest(
      options,
      {
        file: resolve(file),
        testName,
        key,
        rerecord: rerecordCommand(file, ctx.name, options.root ?? process.cwd()),
        keepAccounts: summary.keep,
      },
      (cassette) => fn(cassette, t),
    );
  };
}

/**
 * The shell command that re-records one node:test test: `record` mode, that
 * file, and `--test-name-pattern` on the test's own name (Node 20 matches
 * the pattern against each test's own name; it is anchored at the end only,
 * so runners that match the full name select it too).
 *
 * @example
 * rerecordCommand("/repo/test/plan.test.mjs", "replans (v2)", "/repo")
 * // INVOCACHE_MODE=record node --test --test-name-pattern 'replans \(v2\)$' test/plan.test.mjs
 */
export function rerecordCommand(
  testFile: string,
  testName: string,
  root: string = process.cwd(),
): string {
  const rel = relative(resolve(root), resolve(root, testFile)).split(sep).join("/");
  const pattern = `${testName.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`;
  return `INVOCACHE_MODE=record node --test --test-name-pattern ${shellQuote(pattern)} ${shellQuote(rel)}`;
}
