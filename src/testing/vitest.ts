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
 */
import { createHash } from "node:crypto";
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { TestContext } from "vitest";
import { type CassetteOptions, type CassetteStore, cassetteStore } from "../cassette/index.js";
import { CassetteError, UnusedEntriesError } from "../errors.js";
import type { RunInfo } from "../recorder/index.js";
import {
  createRecorder,
  type Mode,
  type Recorder,
  type RecorderOptions,
  resolveMode,
} from "../recorder/index.js";
import { shellQuote } from "../shell/index.js";

import { META_KEY, testAccounts } from "./summary.js";

export { type StoreConformanceOptions, storeConformance } from "./store-conformance.js";
export {
  formatRunSummary,
  InvocacheReporter,
  type InvocacheReporterOptions,
  type RunSummary,
  summarize,
  type TestAccounts,
} from "./summary.js";

/** Options of {@link withCassette}. */
export interface WithCassetteOptions extends Omit<CassetteOptions, "write"> {
  /**
   * Use this cassette instead of the per-test one: a relative name under
   * `dir` (`"shared/planner"` → `cassettes/shared/planner.yaml`).
   */
  name?: string;
  /** Folder of cassettes, relative to `root`. Default `"cassettes"`. */
  dir?: string;
  /** Project root. Default `process.cwd()` (vitest's root). */
  root?: string;
  /** Default: `INVOCACHE_MODE`, else `replay` under `CI`, else `auto`. */
  mode?: Mode;
  /** Fail the test when recorded entries were not used. Default false (they are reported). */
  strict?: boolean;
  /**
   * Drop unused entries when the test passes. Done anyway in `record` mode
   * for a per-test cassette (not for a shared `name`d one).
   */
  prune?: boolean;
  /** Recorder options besides the store, mode and hint. */
  recorder?: Omit<RecorderOptions, "store" | "mode" | "rerecordHint" | "env">;
  /**
   * Give the test's run an explicit id (e.g. `"test"`): its trajectory is
   * then stored in the cassette, and a replay that makes a different
   * sequence of calls fails with `DivergenceError` (stricter than unused
   * reporting). Default: an anonymous run (occurrences and verdicts still
   * count per test).
   */
  runId?: string;
  /** Where the unused-entries report goes. Default `console.warn`. */
  report?: (message: string) => void;
  /**
   * Leave this test's calls, tokens and savings for the run summary of
   * `InvocacheReporter` (in the test's `meta`). Default true.
   */
  summary?: boolean;
}

/** What the test body receives. */
export interface CassetteContext {
  recorder: Recorder;
  store: CassetteStore;
  /** Absolute path of the cassette. */
  path: string;
  /** The test's run scope. */
  run: RunInfo;
  mode: Mode;
}

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

async function runWithCassette(
  options: WithCassetteOptions,
  fn: Body,
  ctx: TestContext,
): Promise<void> {
  if (ctx === undefined || typeof ctx.task?.file?.filepath !== "string") {
    throw new TypeError(
      "withCassette: use the returned function as a vitest test body: it(name, withCassette(fn))",
    );
  }
  const {
    name,
    dir = "cassettes",
    root = process.cwd(),
    mode: modeOption,
    strict = false,
    prune = false,
    recorder: recorderOptions,
    runId,
    report = (m: string) => console.warn(m),
    summary = true,
    ...storeOptions
  } = options;
  const file = ctx.task.file.filepath;
  const testName = fullTestName(ctx.task);
  if (name === undefined) claimTestName(file, testName, ctx.task.id);
  const path =
    name === undefined
      ? cassettePathFor(file, testName, { dir, root })
      : namedCassettePath(name, { dir, root });
  const mode = resolveMode(modeOption);
  // Secret, staleness and restore options are the recorder's policy: the
  // cassette hands them to the recorder as defaults (store.policy), once.
  const store = cassetteStore(path, { ...storeOptions, write: "on-close" });
  const recorder = createRecorder({
    ...recorderOptions,
    store,
    mode,
    rerecordHint: rerecordCommand(file, testName, root),
  });

  let passed = false;
  try {
    await recorder.run(
      async (run) => {
        await fn({ recorder, store, path, run, mode }, ctx);
      },
      runId === undefined ? {} : { runId },
    );
    await recorder.close();
    // expect.soft() failures do not throw, but the test has failed all the same.
    passed = (ctx.task.result?.errors?.length ?? 0) === 0;
  } finally {
    // The test's accounts, for InvocacheReporter (testing/summary.ts).
    if (summary) {
      const missed = mode === "replay" && recorder.stats.misses > 0;
      (ctx.task.meta as Record<string, unknown>)[META_KEY] = testAccounts(
        recorder.stats,
        missed ? rerecordCommand(file, testName, root) : undefined,
      );
    }
    if (!passed) await store.discard();
  }
  if (!passed) return;

  try {
    await checkUsage(store, mode, options, { file, testName, root, prune, strict, report });
  } catch (error) {
    await store.discard();
    throw error;
  }
  await store.close();
}

/**
 * After a passing test: entries still stale under `onStale: "error"` fail
 * it; unused entries are pruned (record mode, per-test cassette, or
 * `prune`), or reported (`strict` fails the test).
 */
async function checkUsage(
  store: CassetteStore,
  mode: Mode,
  options: WithCassetteOptions,
  test: {
    file: string;
    testName: string;
    root: string;
    prune: boolean;
    strict: boolean;
    report: (message: string) => void;
  },
): Promise<void> {
  const { file, testName, root } = test;
  const usage = await store.usage();
  if (usage.stale.length > 0 && options.onStale === "error") {
    throw new CassetteError(
      store.path,
      "get",
      `${store.url}: ${usage.stale.length} entr${usage.stale.length === 1 ? "y is" : "ies are"} older than maxAge (${String(options.maxAge)}). Re-record: ${rerecordCommand(file, testName, root)}`,
      { url: store.url },
    );
  }
  const replaying = mode === "replay" || mode === "auto" || mode === "record";
  if (!replaying || usage.unused.length === 0) return;
  // A shared cassette (`name`) also holds other tests' entries: only prune it when asked.
  if ((mode === "record" && options.name === undefined) || test.prune) {
    for (const key of usage.unused) await store.delete(key);
    return;
  }
  const message = unusedMessage(store, usage.unused, file, testName, root);
  if (test.strict) throw new UnusedEntriesError(store.path, usage.unused, message);
  test.report(message);
}

/** Which test (vitest task id) has each per-test cassette name in this process: file, then full name. */
const claimed = new Map<string, string>();

/**
 * Two tests with the same full name in one file would share one per-test
 * cassette, and in `record` mode the second would prune the first's fresh
 * recording as unused (green when recording, red in CI). Refuse the second.
 * A retry or repeat of the same test has the same task id and is fine.
 */
function claimTestName(file: string, testName: string, taskId: string): void {
  const key = `${file}\n${testName}`;
  const owner = claimed.get(key);
  if (owner === undefined) {
    claimed.set(key, taskId);
    return;
  }
  if (owner === taskId) return;
  throw new CassetteError(
    cassettePathFor(file, testName),
    "open",
    `withCassette: two tests in ${relative(process.cwd(), file) || file} are both named "${testName}", so they would share one cassette (and re-recording one would prune the other's entries). Give each test a distinct name, or share a cassette on purpose with withCassette({ name }).`,
  );
}

function unusedMessage(
  store: CassetteStore,
  unused: readonly string[],
  file: string,
  testName: string,
  root: string,
): string {
  const n = unused.length;
  const list = unused.map((k) => `  - ${k}`).join("\n");
  return (
    `invocache: ${n} recorded entr${n === 1 ? "y" : "ies"} of ${store.url} ${n === 1 ? "was" : "were"} not used by "${testName}":\n${list}\n` +
    `Drop ${n === 1 ? "it" : "them"} by re-recording (${rerecordCommand(file, testName, root)}) or with withCassette({ prune: true }).`
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

const MAX_SLUG = 60;

/** Lower-case words joined by dashes: `Fix ../../etc (x2)!` → `fix-etc-x2`. */
function slug(text: string): string {
  const s = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "") // accents go, letters stay: "café" → "cafe"
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, MAX_SLUG)
    .replace(/-$/, "");
  return s === "" ? "test" : s;
}

/** A path segment that is safe on every filesystem and never `.`/`..` or hidden. */
function safeSegment(segment: string): string {
  const s = segment.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[.-]+/, "");
  return s === "" ? "_" : s.slice(0, 100);
}

/**
 * The cassette of one test: `<root>/<dir>/<test file without extension>/<slug>-<hash>.yaml`.
 * The hash (10 hex of sha256 over the file's path and the exact test name)
 * keeps tests whose names slug alike apart. Test files outside `root` go
 * under `_external/`.
 *
 * @throws RangeError if the result would leave `<root>/<dir>` (cannot happen
 * by construction; checked anyway).
 * @example
 * cassettePathFor("/repo/test/plan.test.ts", "planner replans", { root: "/repo" })
 * // "/repo/cassettes/test/plan/planner-replans-1f3a9c0b2d.yaml"
 */
export function cassettePathFor(
  testFile: string,
  testName: string,
  opts: { dir?: string; root?: string } = {},
): string {
  const root = resolve(opts.root ?? process.cwd());
  const base = resolve(root, opts.dir ?? "cassettes");
  const abs = resolve(root, testFile);
  let rel = relative(root, abs);
  const outside = rel === "" || rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel);
  const fileKey = outside ? abs : rel.split(sep).join("/");
  if (outside)
    rel = join("_external", `${safeSegment(stripTestExt(abs.split(sep).pop() ?? "test"))}`);
  const folder = stripTestExt(rel)
    .split(sep)
    .filter((s) => s !== "")
    .map(safeSegment);
  const hash = createHash("sha256").update(`${fileKey}\n${testName}`).digest("hex").slice(0, 10);
  const path = join(base, ...folder, `${slug(testName)}-${hash}.yaml`);
  return inside(base, path);
}

/**
 * The cassette called `name` (`"shared/planner"`) under `<root>/<dir>`,
 * `.yaml` added when missing. The mapping is injective: two different names
 * never share a file. A segment made of `A-Z a-z 0-9 . _ -` (not starting
 * with `.` or `-`) is used as it is; any other character is escaped as `~`
 * and its UTF-8 bytes in hex (`"my planner"` → `my~20planner`; `~` itself is
 * `~7e`, so an escape is never ambiguous), and a segment longer than 100
 * characters keeps its first 80 and ends in `~~` and a hash of the whole.
 * `/` and `\` separate folders; an absolute name, `.` and `..` segments are
 * refused (a name stays under `dir`).
 *
 * @example
 * namedCassettePath("shared/planner", { root: "/repo" }) // "/repo/cassettes/shared/planner.yaml"
 * namedCassettePath("shared/my planner", { root: "/repo" }) // "/repo/cassettes/shared/my~20planner.yaml"
 */
export function namedCassettePath(
  name: string,
  opts: { dir?: string; root?: string } = {},
): string {
  if (typeof name !== "string" || name.trim() === "") {
    throw new TypeError('withCassette: name must be a non-empty string such as "shared/planner"');
  }
  if (/^[\\/]|^[A-Za-z]:/.test(name)) {
    throw new TypeError(
      `withCassette: name ${JSON.stringify(name)} must be relative to the cassette folder, e.g. "shared/planner"`,
    );
  }
  const root = resolve(opts.root ?? process.cwd());
  const base = resolve(root, opts.dir ?? "cassettes");
  const parts = name.split(/[\\/]+/).filter((s) => s !== "");
  if (parts.some((s) => s === "." || s === "..")) {
    throw new TypeError(
      `withCassette: name ${JSON.stringify(name)} has a "." or ".." segment; a cassette name stays inside the cassette folder`,
    );
  }
  const last = parts.pop() ?? "cassette";
  const ext = extname(last) === ".yaml" || extname(last) === ".yml" ? extname(last) : "";
  const file = `${escapeSegment(ext === "" ? last : last.slice(0, -ext.length))}${ext || ".yaml"}`;
  return inside(base, join(base, ...parts.map(escapeSegment), file));
}

const SAFE_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
const MAX_SEGMENT = 100;

/** One name segment as a file name: itself when safe, else escaped (see namedCassettePath). */
function escapeSegment(segment: string): string {
  let out = SAFE_SEGMENT.test(segment)
    ? segment
    : [...segment]
        .map((ch, i) => {
          if (/[A-Za-z0-9_]/.test(ch) || (i > 0 && /[.-]/.test(ch))) return ch;
          // A lone surrogate has no UTF-8: its code unit, marked apart (u is not a hex digit).
          if (!ch.isWellFormed()) return `~u${ch.charCodeAt(0).toString(16)}`;
          return [...Buffer.from(ch, "utf8")]
            .map((b) => `~${b.toString(16).padStart(2, "0")}`)
            .join("");
        })
        .join("");
  if (out.length > MAX_SEGMENT) {
    const hash = createHash("sha256").update(segment).digest("hex").slice(0, 16);
    out = `${out.slice(0, 80)}~~${hash}`;
  }
  return out;
}

function stripTestExt(path: string): string {
  return path.replace(/(\.(test|spec))?\.[cm]?[jt]sx?$/, "");
}

function inside(base: string, path: string): string {
  const rel = relative(base, path);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel) || dirname(path) === path) {
    throw new RangeError(`invocache: cassette path ${path} would leave ${base}`);
  }
  return path;
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
