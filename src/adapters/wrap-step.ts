/**
 * `wrapStep`: `recorder.wrap` that reads the invocation context, for steps
 * in a workflow engine (Temporal activities, Inngest steps, LangGraph nodes,
 * hand-written loops). The step keeps its signature; its result must be JSON.
 */

import { invocationCall } from "../invocation/index.js";
import type { Recorder } from "../recorder/index.js";

/** What a step contributes to its identity; role, task, attempt… come from the context. */
export interface StepRequest {
  prompt?: string;
  model?: string | null;
  params?: Record<string, unknown>;
}

/** Options of {@link wrapStep}. */
export interface WrapStepOptions<A extends unknown[]> {
  /** Step name, in the identity. Default `fn.name`; required for anonymous functions. */
  name?: string;
  /** Prompt, model and params of a call. Default: prompt `""`, params `{ args }`. */
  toRequest?: (...args: A) => StepRequest;
}

/**
 * Memoize an async step as an invocation: role, task, attempt, project root
 * and input artifacts come from {@link withInvocation} (role defaults to
 * `fn:<name>` outside a scope that sets one); the step name is always in
 * params (`":step"`), so two steps called with the same arguments never
 * share a recording.
 *
 * @throws TypeError when `fn` has no name and none is given.
 * @example
 * const summarize = wrapStep(recorder, async (doc: string) => callModel(`Summarize: ${doc}`));
 * await withInvocation({ role: "summarizer", attempt: 0 }, () => summarize(text));
 */
export function wrapStep<A extends unknown[], R>(
  recorder: Recorder,
  fn: (...args: A) => Promise<R>,
  options: WrapStepOptions<A> | ((...args: A) => StepRequest) = {},
): (...args: A) => Promise<R> {
  if (recorder === null || typeof recorder !== "object" || typeof recorder.wrap !== "function") {
    throw new TypeError("wrapStep: recorder must be a recorder (createRecorder())");
  }
  if (typeof fn !== "function") throw new TypeError("wrapStep: fn must be an async function");
  const opts: WrapStepOptions<A> = typeof options === "function" ? { toRequest: options } : options;
  const name = opts.name ?? fn.name;
  if (typeof name !== "string" || name === "") {
    throw new TypeError(
      "wrapStep: the step has no name (anonymous function); pass { name: 'my-step' } so its recordings are told apart",
    );
  }
  const toRequest =
    opts.toRequest ?? ((...args: A): StepRequest => ({ params: { args: args as unknown[] } }));
  return recorder.wrap(fn, (...args: A) => {
    const step = toRequest(...args);
    return invocationCall({
      prompt: step.prompt ?? "",
      model: step.model,
      params: { ...step.params, ":step": name },
      role: `fn:${name}`,
    });
  });
}
