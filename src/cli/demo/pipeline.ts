/**
 * The demo's agent pipeline: planner → builder → reviewer gate, retried with
 * a bumped attempt while the gate rejects. Every model call goes through
 * `createFetch` (plain `fetch`, no SDK) inside `withInvocation`, so the
 * recorder sees role, task, attempt, project root and input artifacts the
 * way a real pipeline would give them. Each step writes its output as an
 * artifact and stamps it with the call that produced it, signed with the
 * demo's key.
 */
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createFetch, withInvocation } from "../../adapters/index.js";
import { hashArtifact } from "../../identity/index.js";
import { type SigningKey, stampArtifact } from "../../provenance/index.js";
import type { Recorder } from "../../recorder/index.js";
import { wrapTool } from "../../tools/index.js";
import { FEEDBACK_MARKER } from "./script.js";

/**
 * The model name the pipeline asks for: a real model's name, so the price
 * table prices the simulated calls as that model's would be (the answers are
 * the simulation's own).
 */
export const DEMO_MODEL = "gpt-4o-mini";
/** The task every step works on. */
export const DEMO_TASK = "DEMO-1: add a slugify() helper with tests";
/** The gate allows this many attempts. */
const MAX_ATTEMPTS = 3;

/** One model call of the pipeline, as the demo reports it. */
export interface StepResult {
  step: number;
  /** The step's role; for a tool call, the tool's name. */
  role: string;
  /** A model call or a tool call (docs/tools.md): both are in the run's trajectory. */
  kind: "model" | "tool";
  /** The artifact file the step wrote (relative to the output folder); "" for a tool call. */
  artifact: string;
  id: string;
  attempt: number;
  occurrence: number;
  hit: boolean;
  /** Wall time of the call, ms. */
  ms: number;
  /** The gate's verdict on this step's output (builder steps). */
  verdict: "accepted" | "rejected" | null;
  reason: string | null;
}

/** Options of {@link runPipeline}. */
export interface PipelineOptions {
  recorder: Recorder;
  /** The model's OpenAI-compatible base URL (`…/v1`). */
  baseUrl: string;
  /** Where artifacts and their stamps are written. */
  outDir: string;
  /** The key every stamp is signed with (the demo's own, from its keys folder). */
  key?: SigningKey | undefined;
  /** The project root; it appears in prompts and normalizes to {project}. */
  projectPath: string;
  /** Called once a step is final: the planner at once, a build and its review once the gate decided. */
  onStep?: ((step: StepResult) => void) | undefined;
}

/**
 * The artifact file names of a run that took `attempts` builds, in step order.
 *
 * @example
 * artifactNames(1) // ["plan.md", "slugify.attempt-0.ts", "review.attempt-0.md"]
 */
export function artifactNames(attempts: number): string[] {
  const names = ["plan.md"];
  for (let a = 0; a < attempts; a++)
    names.push(`slugify.attempt-${a}.ts`, `review.attempt-${a}.md`);
  return names;
}

/** Every artifact name the pipeline may write (for cleaning up). */
export const ALL_ARTIFACTS = artifactNames(MAX_ATTEMPTS);

/**
 * Run the pipeline once through `recorder`.
 *
 * @example
 * const steps = await recorder.run(() => runPipeline({ recorder, baseUrl, outDir, projectPath }), { runId: "demo" });
 */
export async function runPipeline(opts: PipelineOptions): Promise<StepResult[]> {
  const { recorder, baseUrl, outDir, projectPath } = opts;
  // The simulated model listens on a new port each run: one name for it keeps
  // the identities (and the README's table) stable.
  const fetch = createFetch({ recorder, hostAliases: { [new URL(baseUrl).host]: "simulated" } });
  const steps: StepResult[] = [];

  const step = async (
    role: string,
    attempt: number,
    inputs: string[],
    system: string,
    user: string,
    artifact: string,
  ): Promise<{ text: string; result: StepResult }> => {
    const startedOn = new Date();
    const t0 = performance.now();
    const text = await withInvocation(
      { role, task: DEMO_TASK, attempt, projectPath, inputArtifactHashes: inputs },
      async () => {
        const res = await fetch(`${baseUrl}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            model: DEMO_MODEL,
            temperature: 0,
            messages: [
              { role: "system", content: system },
              { role: "user", content: user },
            ],
          }),
        });
        if (!res.ok) throw new Error(`the simulated model answered HTTP ${res.status}`);
        const body = (await res.json()) as { choices?: Array<{ message?: { content?: string } }> };
        return body.choices?.[0]?.message?.content ?? "";
      },
    );
    const ms = performance.now() - t0;
    // The pipeline is sequential, so recorder.last is this call.
    const served = recorder.last!;
    const path = join(outDir, artifact);
    await writeFile(path, text);
    await stampArtifact(path, {
      id: served.id,
      manifest: served.manifest,
      occurrence: served.occurrence,
      replayed: served.hit,
      startedOn,
      finishedOn: new Date(),
      key: opts.key,
    });
    const result: StepResult = {
      step: steps.length + 1,
      role,
      kind: "model",
      artifact,
      id: served.id,
      attempt,
      occurrence: served.occurrence,
      hit: served.hit,
      ms,
      verdict: null,
      reason: null,
    };
    steps.push(result);
    return { text, result };
  };

  // A tool call between build and review: "run the tests" of the draft. It is
  // recorded and replayed like the model calls, and takes its place in the
  // trajectory (idempotent: running the same tests again changes nothing).
  const runTests = wrapTool(
    async ({ draft }: { draft: string }) => {
      const tests = draft.split("test(").length - 1;
      return { tests, passed: tests };
    },
    { name: "run_tests", recorder, idempotentHint: true },
  );
  const toolStep = async (attempt: number, draft: string) => {
    const t0 = performance.now();
    const report = await withInvocation(
      { role: "builder", task: DEMO_TASK, attempt, projectPath },
      () => runTests({ draft }),
    );
    const served = recorder.last!;
    const result: StepResult = {
      step: steps.length + 1,
      role: "run_tests",
      kind: "tool",
      artifact: "",
      id: served.id,
      attempt,
      occurrence: served.occurrence,
      hit: served.hit,
      ms: performance.now() - t0,
      verdict: null,
      reason: null,
    };
    steps.push(result);
    return { report, result };
  };

  // Volatile on purpose: the run's time, a session id and the absolute
  // checkout path. Normalization turns them into {timestamp}, {uuid} and
  // {project}, so the next run asks the same question and hits.
  const plan = await step(
    "planner",
    0,
    [],
    "You are the planner of a coding agent. Answer with a short numbered plan.",
    `Task: ${DEMO_TASK}\nRepository: ${projectPath}\nRequested at ${new Date().toISOString()} by session ${randomUUID()}.`,
    "plan.md",
  );
  opts.onStep?.(plan.result);
  const planHash = await hashArtifact(join(outDir, "plan.md"));

  let feedback = "";
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const draftName = `slugify.attempt-${attempt}.ts`;
    const build = await step(
      "builder",
      attempt,
      [planHash],
      "You are the builder of a coding agent. Answer with the code only.",
      `Plan:\n${plan.text}\nWrite ${projectPath}/src/slugify.ts.${feedback === "" ? "" : `\n${FEEDBACK_MARKER}\n${feedback}`}`,
      draftName,
    );
    const draftHash = await hashArtifact(join(outDir, draftName));
    const tests = await toolStep(attempt, build.text);
    const review = await step(
      "reviewer",
      attempt,
      [planHash, draftHash],
      "You are the reviewer, the gate of a coding agent. First line ACCEPT or REJECT, then why.",
      `Plan:\n${plan.text}\nDraft (attempt ${attempt}):\n${build.text}\nTests: ${tests.report.passed}/${tests.report.tests} passed`,
      `review.attempt-${attempt}.md`,
    );
    const [first = "", ...rest] = review.text.trim().split("\n");
    const accepted = first.trim() === "ACCEPT";
    const reason = rest.join(" ").trim();
    // RELOOP layer 3: the gate's verdict is stored with the builder's entry,
    // and a replay checks that the same verdict comes back.
    await recorder.verdict(build.result.id, accepted ? "accepted" : "rejected", { reason });
    build.result.verdict = accepted ? "accepted" : "rejected";
    build.result.reason = reason;
    opts.onStep?.(build.result);
    opts.onStep?.(tests.result);
    opts.onStep?.(review.result);
    if (accepted) break;
    feedback = reason;
  }
  return steps;
}
