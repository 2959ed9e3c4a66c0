/**
 * `invocache demo`: the whole job in one command, on the embedded default.
 * A planner → builder → reviewer pipeline runs against a simulated model,
 * is recorded, runs again and replays; its artifacts are stamped and the
 * stamps verified. Needs no network and no key. `run` reads as the demo's
 * steps, in order; each lives in src/cli/demo/.
 */
import { join } from "node:path";
import { openStore } from "../../store/index.js";
import { type Command, printJson } from "../command.js";
import { demoJson } from "../demo/json-report.js";
import { startSimulatedModel } from "../demo/model-server.js";
import { demoOptions } from "../demo/options.js";
import {
  printLookAround,
  printOutcome,
  printRunHeader,
  printRunSummary,
  printSetting,
  printStamps,
  printStep,
} from "../demo/report.js";
import { artifactsOf, DEMO_RUNS, type DemoRun, runOnce, storyHolds } from "../demo/runs.js";
import { prepareDemo } from "../demo/setup.js";
import { EXIT } from "../errors.js";
import { verifyAll } from "../verify-reports.js";

export type { DemoRun } from "../demo/runs.js";

/**
 * @example
 * // invocache demo
 */
export const demoCommand: Command = {
  name: "demo",
  help: `Usage: invocache demo [--store URL] [--namespace NS] [--out DIR] [--json]

The whole job in one command. A planner → builder → reviewer pipeline (the
reviewer rejects the first build; attempt 1 is accepted) runs against a
simulated OpenAI-compatible model on a loopback port (150–400 ms a call),
through createFetch and plain fetch:

  run 1, mode auto     misses, calls the model, records into the store
  run 2, mode replay   only hits, zero calls to the model
  then                 every artifact is stamped after each run, signed with the demo's
                       own key (generated once in <out>/keys), and the stamps verified
                       against that key

The namespace is cleared first, so run 1 records even when an earlier demo
filled the store. Modes are passed explicitly, so CI=true changes nothing.
Exits 0 when the story holds (run 2 all hits, no upstream call, stamps verify).

Options:
  --store URL       where to record (default: sqlite://.invocache/cache.sqlite under the
                    working directory)
  --namespace NS    the namespace to clear and record into (default: demo)
  --out DIR         where artifacts, stamps and the demo's signing key (DIR/keys) go
                    (default: .invocache/demo)
  --json            {"ok", "store", "namespace", "cleared", "model", "outDir", "runs": [{"run",
                    "runId", "mode", "upstreamCalls", "hits", "misses", "ms", "savedMs", "spent",
                    "saved", "contentHash", "steps": [{"step", "role", "kind", "artifact", "id",
                    "attempt", "occurrence", "hit", "ms", "verdict", "reason"}]}], "key": {"keyid",
                    "privateKey", "publicKey", "generated"}, "stamps": [verify rows], "savedMs",
                    "saved": {"inputTokens", "outputTokens", "usd", …}, "prices"}
  -h, --help        this help

Examples:
  invocache demo
  npm run demo
  invocache demo --store memory:// --json | jq '.runs[] | {mode, upstreamCalls}'
  invocache demo && invocache ls --namespace demo
`,
  async run(argv, io) {
    const opts = demoOptions(argv, io);
    const human = !opts.json;
    const store = openStore(opts.storeUrl);
    const model = await startSimulatedModel();
    try {
      // 1. A clean namespace and output folder, and the demo's signing key.
      const { cleared, demoKey } = await prepareDemo(store, opts.namespace, opts.outDir);
      const where = { ...opts, storeUrl: store.url, modelUrl: model.baseUrl, cleared, demoKey };
      if (human) printSetting(io, where);

      // 2. Run 1 records, run 2 replays.
      const runs: DemoRun[] = [];
      for (const plan of DEMO_RUNS) {
        if (human) printRunHeader(io, plan);
        const run = await runOnce(plan, {
          store,
          namespace: opts.namespace,
          model,
          outDir: opts.outDir,
          demoKey,
          projectPath: io.cwd,
          onStep: human ? (r) => printStep(io, r) : undefined,
        });
        runs.push(run);
        if (human) printRunSummary(io, run, runs[0]);
      }

      // 3. Every artifact's stamps, verified against the demo's key.
      const artifacts = artifactsOf(runs);
      const reports = await verifyAll(
        io,
        artifacts.map((a) => join(opts.outDir, a)),
        { trust: [demoKey.trusted] },
      );

      // 4. Whether the story held, told as JSON or for a person.
      const [first, second] = runs as [DemoRun, DemoRun];
      const ok = storyHolds(first, second, reports);
      if (opts.json) {
        printJson(io, demoJson({ ...where, ok, cwd: io.cwd, runs, reports }));
        return ok ? EXIT.ok : EXIT.failed;
      }
      printStamps(io, artifacts, reports, opts.shownOut, demoKey);
      printOutcome(io, ok, first, second);
      printLookAround(io, { ...opts, storeUrl: opts.storeUrl, demoKey }, first);
      return ok ? EXIT.ok : EXIT.failed;
    } finally {
      await model.close();
      await store.close();
    }
  },
};
