/**
 * The side-effect step, first in the call pipeline (docs/recorder.md, "The
 * call pipeline"): a kind of call with side effects (tools) is asked the
 * side-effect rule (tool-policy.ts) before anything else, so "send the
 * email" is never replayed from a shared cache. Its own file: tool-policy.ts
 * is the policy's vocabulary, shared with the public types, and must not
 * depend on the pipeline's context.
 */
import { callKindNamed } from "../identity/internal.js";
import type { CallContext, Core } from "./core.js";
import { sideEffectBypass } from "./tool-policy.js";

/** What the side-effect rule reads: the store's URL (a cassette or a shared store). */
export type SideEffectDeps = Pick<Core, "store">;

/**
 * Why this call must run live and unstored, or undefined when the cache may
 * answer it: only a kind with side effects is asked.
 */
export function sideEffectRule(deps: SideEffectDeps, c: CallContext): string | undefined {
  const spec = callKindNamed(c.kind);
  if (!spec.sideEffects) return undefined;
  return sideEffectBypass(spec.callee(c.manifest), c.mode, deps.store.url, c.opts.tool);
}
