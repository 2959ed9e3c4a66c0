/**
 * The demo's two runs of its pipeline: run 1 in `auto` (misses, calls the
 * model, records), run 2 in `replay` (only hits, no call reaches the
 * model). Each run has its own recorder and its own run id, so each has its
 * own stored run record (the viewer shows both). Whether the story held is
 * decided here too: run 1 reached the model, run 2 did not, every stamp
 * verifies.
 */
import { createRecorder, type Mode } from "../../recorder/index.js";
import type { Store } from "../../store/index.js";
import type { Spend } from "../../usage/index.js";
import type { SimulatedModel } from "./model-server.js";
import { runPipeline, type StepResult } from "./pipeline.js";
import type { DemoKey } from "./setup.js";

/** One run of the demo pipeline, as `demo --json` reports it. */
export interface DemoRun {
  run: number;
  /** Its run id: its record is stored as `<namespace>:run:<runId>`. */
  runId: string;
  mode: Mode;
  upstreamCalls: number;
  hits: number;
  misses: number;
  /** Wall time of the whole run, ms. */
  ms: number;
  /** Recorded call time the hits did not spend, ms (recorder.stats.savedMs). */
  savedMs: number;
  /** Tokens and dollars the run's upstream calls cost (recorder.stats.spent). */
  spent: Spend;
  /** Tokens and dollars the run's hits did not spend again (recorder.stats.saved). */
  saved: Spend;
  /** The run's content hash: a Merkle root over the identities it called, in order. */
  contentHash: string;
  steps: StepResult[];
}

/** A run the demo makes: its number, its mode, and what that mode does (for the reader). */
export interface DemoRunPlan {
  n: number;
  mode: Mode;
  blurb: string;
}

/** The demo's runs, in order. */
export const DEMO_RUNS: readonly DemoRunPlan[] = [
  {
    n: 1,
    mode: "auto",
    blurb: "replays what is recorded, calls the model for the rest and records it",
  },
  {
    n: 2,
    mode: "replay",
    blurb: "every call must be a hit (a miss is an error), so none reaches the model",
  },
];

/** What every run works with. */
export interface RunContext {
  store: Store;
  namespace: string;
  model: SimulatedModel;
  outDir: string;
  demoKey: DemoKey;
  projectPath: string;
  /** Called as each step is answered (the human output prints it). */
  onStep?: ((r: StepResult) => void) | undefined;
}

/** Each run has its own id, so each has its own stored run record (the viewer shows both). */
const runIdOf = (n: number): string => `demo-${n}`;

/**
 * Run the pipeline once, in `plan.mode`, with a recorder of its own.
 *
 * @example
 * const first = await runOnce(DEMO_RUNS[0]!, ctx); // first.upstreamCalls > 0
 */
export async function runOnce(plan: DemoRunPlan, ctx: RunContext): Promise<DemoRun> {
  const recorder = createRecorder({ store: ctx.store, namespace: ctx.namespace, mode: plan.mode });
  const before = ctx.model.calls;
  const t0 = performance.now();
  let contentHash = "";
  try {
    const steps = await recorder.run(
      async (run) => {
        const out = await runPipeline({
          recorder,
          baseUrl: ctx.model.baseUrl,
          outDir: ctx.outDir,
          key: ctx.demoKey.key,
          projectPath: ctx.projectPath,
          onStep: ctx.onStep,
        });
        contentHash = run.contentHash();
        return out;
      },
      { runId: runIdOf(plan.n) },
    );
    const { hits, misses, savedMs, spent, saved } = recorder.stats;
    return {
      run: plan.n,
      runId: runIdOf(plan.n),
      mode: plan.mode,
      upstreamCalls: ctx.model.calls - before,
      hits,
      misses,
      ms: round(performance.now() - t0),
      savedMs: round(savedMs),
      spent: { ...spent },
      saved: spendOf(saved),
      contentHash,
      steps: steps.map((x) => ({ ...x, ms: round(x.ms) })),
    };
  } finally {
    await recorder.close();
  }
}

/** The artifacts the runs wrote; tool calls write none (and are not stamped): only model steps do. */
export function artifactsOf(runs: readonly DemoRun[]): string[] {
  return [
    ...new Set(
      runs.flatMap((r) => r.steps.flatMap((x) => (x.artifact === "" ? [] : [x.artifact]))),
    ),
  ];
}

/** The demo's story held: run 1 reached the model, run 2 only hit, every stamp verified. */
export function storyHolds(
  first: DemoRun,
  second: DemoRun,
  stamps: readonly { ok: boolean }[],
): boolean {
  return (
    first.upstreamCalls > 0 &&
    second.upstreamCalls === 0 &&
    second.steps.every((x) => x.hit) &&
    stamps.every((r) => r.ok)
  );
}

/** The tokens and dollars of a tally's spend (without its time). */
function spendOf(s: Spend & { ms?: number }): Spend {
  const { ms: _ms, ...spend } = s;
  return spend;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
