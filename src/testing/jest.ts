/**
 * `invocache/jest`: one cassette per test for Jest, the same helper as
 * `invocache/vitest` (the same core: testing/cassette-test.ts).
 *
 * ```js
 * import { withCassette } from "invocache/jest";
 *
 * test("plans the change", withCassette(async ({ recorder }) => {
 *   const plan = await recorder.call({ role: "planner", model: "gpt-5", prompt }, () => callModel(prompt));
 *   expect(plan.steps).toHaveLength(3);
 * }));
 * ```
 *
 * - The cassette is `cassettes/<test file>/<test-name-slug>-<hash>.yaml`,
 *   the test's name being Jest's full name (describe names and the test's,
 *   joined by spaces, as `-t` matches it).
 * - Mode: `replay` under `CI`, else `auto` (or `INVOCACHE_MODE`, or the
 *   `mode` option); a replay miss names the command that re-records the test.
 * - Written only when the test passes; unused entries reported (`strict`
 *   fails the test, `prune` drops them).
 * - After the file's tests, one summary line (calls replayed, upstream calls,
 *   misses, what replays saved); `INVOCACHE_SUMMARY=0` turns it off.
 *
 * Jest gives no per-test id, so two tests of the same full name in one file
 * are not told apart (vitest and node:test refuse the second): name them
 * apart. Jest runs ESM test files with `NODE_OPTIONS=--experimental-vm-modules`.
 */
import { relative, resolve, sep } from "node:path";
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

type Body = (cassette: CassetteContext) => Promise<void> | void;

/** What this module reads of Jest's globals. */
interface JestGlobals {
  expect?: { getState?: () => { currentTestName?: string; testPath?: string } };
  afterAll?: (fn: () => void) => void;
}

// Jest's globals, when Jest runs this file: each is checked for before it is used.
const jest = globalThis as unknown as JestGlobals;
const summary = fileSummary();
// Imported from a test file, this module is evaluated once per file (Jest's
// module registry), while the file's tests are being collected: the hook is
// the file's.
if (typeof jest.afterAll === "function") {
  jest.afterAll(() => {
    const line = summary.line();
    if (line !== undefined && summaryWanted()) process.stdout.write(`${line}\n`);
  });
}

/**
 * Wrap a Jest test body so that it runs against its own cassette.
 *
 * @example
 * test("summarizes", withCassette(async ({ recorder }) => { … }));
 * test("strict", withCassette({ strict: true, global: true }, async ({ recorder }) => { … }));
 */
export function withCassette(fn: Body): () => Promise<void>;
export function withCassette(options: WithCassetteOptions, fn: Body): () => Promise<void>;
export function withCassette(a: Body | WithCassetteOptions, b?: Body): () => Promise<void> {
  const [options, fn] = typeof a === "function" ? [{}, a] : [a, b];
  if (typeof fn !== "function") {
    throw new TypeError(
      "withCassette: pass the test body, e.g. withCassette(async ({ recorder }) => …)",
    );
  }
  // No parameter: Jest would take one as the `done` callback.
  return () => {
    const state = jest.expect?.getState?.();
    const file = state?.testPath;
    const testName = state?.currentTestName;
    if (typeof file !== "string" || typeof testName !== "string") {
      throw new TypeError(
        "withCassette: use the returned function as a Jest test body: test(name, withCassette(fn))",
      );
    }
    return runCassetteTest(
      options,
      {
        file,
        testName,
        key: testName,
        rerecord: rerecordCommand(file, testName, options.root ?? process.cwd()),
        keepAccounts: summary.keep,
      },
      fn,
    );
  };
}

/**
 * The shell command that re-records exactly one Jest test: `record` mode,
 * that file, and `-t` anchored on the test's full name.
 *
 * @example
 * rerecordCommand("/repo/test/plan.test.mjs", "planner (v2) replans", "/repo")
 * // INVOCACHE_MODE=record npx jest test/plan.test.mjs -t '^planner \(v2\) replans$'
 */
export function rerecordCommand(
  testFile: string,
  testName: string,
  root: string = process.cwd(),
): string {
  const rel = relative(resolve(root), resolve(root, testFile)).split(sep).join("/");
  const pattern = `^${testName.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`;
  return `INVOCACHE_MODE=record npx jest ${shellQuote(rel)} -t ${shellQuote(pattern)}`;
}
