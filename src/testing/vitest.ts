/**
 * `invocache/vitest`: one cassette per test, with no setup.
 *
 * ```ts
 * import { withCassette } from "invocache/vitest";
 *
 * it("plans the change", withCassette(async ({ recorder }) => {
 *   const plan = await recorder.call({ role: "planner", model: "gpt-5", prompt }, () => callModel(prompt));
 *   expect(plan.steps).toHaveLength(3);
 * }));
 * ```
 *
 * - The cassette is `cassettes/<test file>/<test-name-slug>-<hash>.yaml`
 *   under the project root: readable, filesystem-safe, collision-free (the
 *   hash is over the exact file and test name), and never outside
 *   `cassettes/` whatever the test is called (`../../etc` included).
 * - The test body runs inside `recorder.run()`, so occurrences and verdicts
 *   count per test (`runId` also stores and checks the run's trajectory).
 * - Mode: `replay` under `CI`, else `auto` (or `INVOCACHE_MODE`, or the
 *   `mode` option). A replay miss names the command that re-records just
 *   this test.
 * - Written only when the test passes: a failed test never leaves a half
 *   recording. Entries the test did not use are reported at the end
 *   (`strict: true` fails the test); with `prune: true`, and in `record`
 *   mode for per-test cassettes, they are dropped.
 * - Parallel workers (forks or threads) are fine: each test has its own file,
 *   and shared ones are merged under a lock.
 * - `global: true`: the test's recorder also serves every model call made
 *   without our fetch (global mode, `invocache/global`).
 * - The runner-independent part is testing/cassette-test.ts, shared with
 *   `invocache/jest` and `invocache/node-test`.
 */
import { relative, resolve, sep } from "node:path";
import type { TestContext } from "vitest";
import { shellQuote } from "../shell/index.js";
import {
  type CassetteContext,
  runCassetteTest,
  type WithCassetteOptions,
} from "./cassette-test.js";
import { META_KEY } from "./summary.js";

export { cassettePathFor, namedCassettePath } from "./cassette-paths.js";
export type {
  CassetteContext,
  GlobalCassetteOptions,
  WithCassetteOptions,
} from "./cassette-test.js";
export { type StoreConformanceOptions, storeConformance } from "./store-conformance.js";
export {
  formatRunSummary,
  InvocacheReporter,
  type InvocacheReporterOptions,
  type RunSummary,
  summarize,
  type TestAccounts,
} from "./summary.js";

type Body = (cassette: CassetteContext, ctx: TestContext) => Promise<void> | void;

/**
 * Wrap a test body so that it runs against its own cassette.
 *
 * @example
 * it("summarizes", withCassette(async ({ recorder }) => {
 *   const out = await recorder.call(req, () => client.responses.create(body));
 *   expect(out.output_text).toContain("summary");
 * }));
 * it("strict", withCassette({ strict: true, maxAge: "90d" }, async ({ recorder }) => { … }));
 */
export function withCassette(fn: Body): (ctx: TestContext) => Promise<void>;
export function withCassette(
  options: WithCassetteOptions,
  fn: Body,
): (ctx: TestContext) => Promise<void>;
export function withCassette(
  a: Body | WithCassetteOptions,
  b?: Body,
): (ctx: TestContext) => Promise<void> {
  const [options, fn] = typeof a === "function" ? [{}, a] : [a, b];
  if (typeof fn !== "function") {
    throw new TypeError(
      "withCassette: pass the test body, e.g. withCassette(async ({ recorder }) => …)",
    );
  }
  return (ctx) => runWithCassette(options, fn, ctx);
}

function runWithCassette(options: WithCassetteOptions, fn: Body, ctx: TestContext): Promise<void> {
  if (ctx === undefined || typeof ctx.task?.file?.filepath !== "string") {
    throw new TypeError(
      "withCassette: use the returned function as a vitest test body: it(name, withCassette(fn))",
    );
  }
  const file = ctx.task.file.filepath;
  const testName = fullTestName(ctx.task);
  return runCassetteTest(
    options,
    {
      file,
      testName,
      key: ctx.task.id,
      rerecord: rerecordCommand(file, testName, options.root ?? process.cwd()),
      // expect.soft() failures do not throw, but the test has failed all the same.
      failedAnyway: () => (ctx.task.result?.errors?.length ?? 0) > 0,
      // The test's accounts, for InvocacheReporter (testing/summary.ts).
      keepAccounts: (accounts) => {
        (ctx.task.meta as Record<string, unknown>)[META_KEY] = accounts;
      },
    },
    (cassette) => fn(cassette, ctx),
  );
}

/**
 * The full name vitest matches `-t` against: the enclosing `describe` names
 * and the test's, joined by spaces (vitest's `getTaskFullName`).
 *
 * @example
 * fullTestName(ctx.task) // "planner replans after a rejection"
 */
export function fullTestName(task: {
  name: string;
  suite?: { name: string; suite?: unknown } | undefined;
}): string {
  const names: string[] = [];
  let t: { name: string; suite?: unknown } | undefined = task;
  while (t !== undefined) {
    if (t.name !== "") names.unshift(t.name);
    t = t.suite as { name: string; suite?: unknown } | undefined;
  }
  return names.join(" ");
}

/**
 * The shell command that re-records exactly one test: `record` mode, that
 * file, and `-t` anchored on the test's full name with regex characters escaped.
 *
 * @example
 * rerecordCommand("/repo/test/plan.test.ts", "planner (v2) replans", "/repo")
 * // INVOCACHE_MODE=record npx vitest run test/plan.test.ts -t '^planner \(v2\) replans$'
 */
export function rerecordCommand(
  testFile: string,
  testName: string,
  root: string = process.cwd(),
): string {
  const rel = relative(resolve(root), resolve(root, testFile)).split(sep).join("/");
  const pattern = `^${testName.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`;
  return `INVOCACHE_MODE=record npx vitest run ${shellQuote(rel)} -t ${shellQuote(pattern)}`;
}
