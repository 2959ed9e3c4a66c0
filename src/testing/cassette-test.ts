/**
 * One test against its own cassette, whatever runs it: the runner-independent
 * core of `invocache/vitest`, `invocache/jest` and `invocache/node-test`.
 * A runner's helper says which test this is (file, full name, the command
 * that re-records it, how it reports failure and accounts); this module does
 * the rest, once for all of them:
 *
 * - the cassette (per test, or shared by `name`), the mode (`replay` under
 *   `CI`), the recorder and the test's run scope;
 * - global mode when asked (`global: true`): the test's recorder also
 *   serves every model call made without our fetch (invocache/global);
 * - written only when the test passed; unused entries reported (or pruned,
 *   or, with `strict`, failing the test); two tests of one name refused;
 * - the test's accounts handed to the runner's summary.
 */
import { existsSync } from "node:fs";
import { relative } from "node:path";
import { type CassetteOptions, type CassetteStore, cassetteStore } from "../cassette/index.js";
import { CassetteError, UnusedEntriesError } from "../errors.js";
import type { InterceptGloballyOptions } from "../integrations/global.js";
import {
  createRecorder,
  type Mode,
  type Recorder,
  type RecorderOptions,
  type RunInfo,
  resolveMode,
} from "../recorder/index.js";
import { cassettePathFor, namedCassettePath } from "./cassette-paths.js";
import { type TestAccounts, testAccounts } from "./summary.js";

/** The createFetch options global mode takes in a test (the recorder is the test's). */
export type GlobalCassetteOptions = Omit<
  InterceptGloballyOptions,
  "recorder" | "store" | "mode" | "recorderOptions"
>;

/** Options of `withCassette` (vitest, Jest and node:test alike). */
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
  /**
   * Global mode for the test's body: every model call made through `fetch`
   * or `node:http`/`https`, by clients made without our fetch too, goes
   * through the test's recorder (invocache/global, needs the optional peer
   * `@mswjs/interceptors`); restored when the body ends. `true`, or
   * createFetch's options (`hostAliases`, `recordErrors`, …). One test at a
   * time per process: concurrent tests in one file cannot both use it.
   * Default false.
   */
  global?: boolean | GlobalCassetteOptions;
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

/** What a runner's helper tells the core about the running test. */
export interface RunnerTest {
  /** Absolute path of the test file. */
  file: string;
  /** The full name (enclosing groups and the test's), as the runner shows it. */
  testName: string;
  /** What tells this test from another of the same name (a retry keeps it). */
  key: string;
  /** The shell command that re-records just this test. */
  rerecord: string;
  /** After the body returned: has the test failed anyway (vitest's expect.soft)? */
  failedAnyway?: () => boolean;
  /** Where the test's accounts go for the runner's summary. */
  keepAccounts?: (accounts: TestAccounts) => void;
}

/**
 * Run `body` against the test's cassette (see the file header).
 *
 * @throws whatever the body throws (the cassette is then left as it was);
 *   UnusedEntriesError under `strict`; CassetteError for stale entries under
 *   `onStale: "error"` and for a second test of the same name.
 */
export async function runCassetteTest(
  options: WithCassetteOptions,
  test: RunnerTest,
  body: (cassette: CassetteContext) => Promise<void> | void,
): Promise<void> {
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
    global: globalOption = false,
    ...storeOptions
  } = options;
  const { file, testName, rerecord } = test;
  if (name === undefined) claimTestName(file, testName, test.key);
  const path =
    name === undefined
      ? cassettePathFor(file, testName, { dir, root })
      : namedCassettePath(name, { dir, root });
  // `once`: this test's cassette file decides, as in VCR (recorder/once.ts).
  const configured = resolveMode(modeOption);
  const mode: Mode = configured !== "once" ? configured : existsSync(path) ? "replay" : "auto";
  // Secret, staleness and restore options are the recorder's policy: the
  // cassette hands them to the recorder as defaults (store.policy), once.
  const store = cassetteStore(path, { ...storeOptions, write: "on-close" });
  const recorder = createRecorder({
    ...recorderOptions,
    store,
    mode,
    rerecordHint: rerecord,
  });

  let passed = false;
  try {
    await recorder.run(
      async (run) => {
        const context = { recorder, store, path, run, mode };
        if (globalOption === false) return await body(context);
        // Loaded only when asked: the optional peer stays unloaded otherwise.
        const { interceptGlobally } = await import("../integrations/global.js");
        const handle = await interceptGlobally({
          ...(globalOption === true ? {} : globalOption),
          recorder,
        });
        try {
          await body(context);
        } finally {
          await handle.restore();
        }
      },
      runId === undefined ? {} : { runId },
    );
    await recorder.close();
    passed = !(test.failedAnyway?.() ?? false);
  } finally {
    if (summary && test.keepAccounts !== undefined) {
      const missed = mode === "replay" && recorder.stats.misses > 0;
      test.keepAccounts(testAccounts(recorder.stats, missed ? rerecord : undefined));
    }
    if (!passed) await store.discard();
  }
  if (!passed) return;

  try {
    await checkUsage(store, mode, options, { testName, rerecord, prune, strict, report });
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
    testName: string;
    rerecord: string;
    prune: boolean;
    strict: boolean;
    report: (message: string) => void;
  },
): Promise<void> {
  const usage = await store.usage();
  if (usage.stale.length > 0 && options.onStale === "error") {
    throw new CassetteError(
      store.path,
      "get",
      `${store.url}: ${usage.stale.length} entr${usage.stale.length === 1 ? "y is" : "ies are"} older than maxAge (${String(options.maxAge)}). Re-record: ${test.rerecord}`,
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
  const message = unusedMessage(store, usage.unused, test.testName, test.rerecord);
  if (test.strict) throw new UnusedEntriesError(store.path, usage.unused, message);
  test.report(message);
}

/** Which test (the runner's key) has each per-test cassette name in this process: file, then full name. */
const claimed = new Map<string, string>();

/**
 * Two tests with the same full name in one file would share one per-test
 * cassette, and in `record` mode the second would prune the first's fresh
 * recording as unused (green when recording, red in CI). Refuse the second.
 * A retry or repeat of the same test has the same key and is fine.
 */
function claimTestName(file: string, testName: string, key: string): void {
  const at = `${file}\n${testName}`;
  const owner = claimed.get(at);
  if (owner === undefined) {
    claimed.set(at, key);
    return;
  }
  if (owner === key) return;
  throw new CassetteError(
    cassettePathFor(file, testName),
    "open",
    `withCassette: two tests in ${relative(process.cwd(), file) || file} are both named "${testName}", so they would share one cassette (and re-recording one would prune the other's entries). Give each test a distinct name, or share a cassette on purpose with withCassette({ name }).`,
  );
}

function unusedMessage(
  store: CassetteStore,
  unused: readonly string[],
  testName: string,
  rerecord: string,
): string {
  const n = unused.length;
  const list = unused.map((k) => `  - ${k}`).join("\n");
  return (
    `invocache: ${n} recorded entr${n === 1 ? "y" : "ies"} of ${store.url} ${n === 1 ? "was" : "were"} not used by "${testName}":\n${list}\n` +
    `Drop ${n === 1 ? "it" : "them"} by re-recording (${rerecord}) or with withCassette({ prune: true }).`
  );
}
