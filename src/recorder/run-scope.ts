/**
 * Run scopes (RELOOP layer 2). Inside a run the n-th call with the same
 * identity is occurrence n and has its own entry, so a step repeated without
 * bumping `attempt` still never gets the same output twice. A run also has a
 * content hash: a one-level Merkle root over the identities it served, in
 * order (git's tree-over-blobs shape), so two runs that took the same
 * trajectory are provably identical and a divergence is one comparison.
 *
 * Runs nest: a run opened inside another is part of its parent's trajectory.
 * Occurrences are counted once, by the outermost run, so a retry made inside
 * a helper that opens its own run is never occurrence 0 again (that would
 * serve it the output the gate just rejected). A nested run keeps its own id
 * and its own sub-trajectory (the calls made inside it); every call and
 * verdict also belongs to each enclosing run.
 */
import { randomUUID } from "node:crypto";
import type { Manifest } from "../identity/index.js";
import { sha256Hex } from "../identity/index.js";
import { callKind } from "../identity/internal.js";

/** Domain tag of run content hashes, distinct from the identity tag. */
export const RUN_DOMAIN_V1 = "invocache/run/v1\n";

/** How an occurrence was answered (`pending` until it is). */
export type ServedFrom = "pending" | "hit" | "recorded" | "live" | "failed";

/** The step a call belongs to: what a retry's parent is looked up by. */
export interface ServedStep {
  /** `"model"`, or `"tool:<server>/<name>"`: a tool the builder runs is not the builder's attempt. */
  readonly kind: string;
  readonly role: string;
  readonly task: string;
  readonly attempt: number;
}

/** The step of a call: its kind's step name (a tool's server and name), role, task, attempt. */
export function servedStep(manifest: Manifest): ServedStep {
  const { role, task, attempt } = manifest;
  return { kind: callKind(manifest).step(manifest), role, task, attempt };
}

/** One call made inside a run. */
export interface ServedCall {
  readonly id: string;
  readonly occurrence: number;
  from: ServedFrom;
  /** Role, task and attempt of the call, when the recorder knows them (for `meta.parent`). */
  readonly step?: ServedStep;
}

/** A verdict given inside a run. */
export interface RunVerdict {
  id: string;
  occurrence: number;
  verdict: "accepted" | "rejected";
}

/** What a run exposes while it runs and after it ends. */
export interface RunInfo {
  /** Durable anchor: given by the caller, or a generated `run-<uuid>`. */
  readonly runId: string;
  /** Whether the caller chose the id (only then is the run stored and compared on replay). */
  readonly explicitId: boolean;
  /** The calls served so far, in order. */
  readonly calls: readonly ServedCall[];
  /** Verdicts given so far, in order. */
  readonly verdicts: readonly RunVerdict[];
  /** The enclosing run when this one was opened inside another; undefined for an outermost run. */
  readonly parent: RunInfo | undefined;
  /** False once the run's function has settled; an ended run takes no more calls. */
  readonly active: boolean;
  /** Merkle root over the identities served so far (sha256 hex). */
  contentHash(): string;
}

/**
 * The content hash of a trajectory:
 * `sha256("invocache/run/v1\n" ‖ id_0 "\n" id_1 "\n" … id_n)`, hex.
 *
 * @example
 * runContentHash([]) // sha256 of the tag alone
 */
export function runContentHash(ids: readonly string[]): string {
  return sha256Hex(new TextEncoder().encode(RUN_DOMAIN_V1 + ids.join("\n")));
}

export class RunScope implements RunInfo {
  readonly runId: string;
  readonly explicitId: boolean;
  readonly calls: ServedCall[] = [];
  readonly verdicts: RunVerdict[] = [];
  readonly parent: RunScope | undefined;
  /** The outermost run: the one that counts occurrences. */
  readonly root: RunScope;
  active = true;
  /** Only the root's is used. */
  readonly #counts = new Map<string, number>();
  /**
   * Occurrences given back below the count (a failed call while a later
   * identical one was still going), per identity, in ascending order. Only
   * the root's is used. The next identical call takes the lowest, so the
   * occurrences that end up recorded are always 0..n-1, the numbers a
   * replay of the same run asks for.
   */
  readonly #holes = new Map<string, number[]>();

  constructor(runId: string | undefined, parent?: RunScope) {
    this.parent = parent;
    this.root = parent?.root ?? this;
    if (runId !== undefined && (typeof runId !== "string" || runId === "" || runId.includes(":"))) {
      throw new TypeError(
        `runId must be a non-empty string without ":", got ${JSON.stringify(runId)}`,
      );
    }
    this.explicitId = runId !== undefined;
    this.runId = runId ?? `run-${randomUUID()}`;
  }

  /**
   * Reserve the next occurrence of `id`. Calls are ordered by when they start
   * (synchronously, in call order), so concurrent calls that finish in any
   * order still give the same trajectory and content hash.
   */
  reserve(id: string, step?: ServedStep): ServedCall {
    const counts = this.root.#counts;
    const holes = this.root.#holes.get(id);
    let occurrence: number;
    if (holes !== undefined && holes.length > 0) {
      occurrence = holes.shift()!;
      if (holes.length === 0) this.root.#holes.delete(id);
    } else {
      occurrence = counts.get(id) ?? 0;
      counts.set(id, occurrence + 1);
    }
    const call: ServedCall = { id, occurrence, from: "pending", ...(step ? { step } : {}) };
    for (const scope of this.#chain()) scope.calls.push(call);
    return call;
  }

  /**
   * Give back the occurrence of a call that failed (or was answered live):
   * it never recorded, so the next identical call takes it. When it is the
   * latest reservation of its identity the count goes back down (and past
   * any holes just below it); when a later identical call is still going it
   * keeps its number and this one becomes a hole, taken lowest first by the
   * next reservation. Without the hole, three identical concurrent misses
   * that each give back (a LangChain cache lookup, a 429 the SDK retries)
   * would leave their retries at occurrences 1, 2, 3: recorded under numbers
   * a replay of the same run, which counts from 0, never asks for. Either way
   * the call leaves the trajectory and the content hash.
   */
  release(call: ServedCall): void {
    call.from = "failed";
    for (const scope of this.#chain()) {
      const i = scope.calls.lastIndexOf(call);
      if (i >= 0) scope.calls.splice(i, 1);
    }
    const root = this.root;
    const { id, occurrence } = call;
    let count = root.#counts.get(id) ?? 0;
    if (occurrence >= count) return; // already given back
    const holes = root.#holes.get(id) ?? [];
    if (holes.includes(occurrence)) return;
    if (occurrence === count - 1) {
      count = occurrence;
      // Holes right below the new top are free too: the count drops past them.
      while (holes.length > 0 && holes[holes.length - 1] === count - 1) {
        holes.pop();
        count--;
      }
    } else {
      holes.push(occurrence);
      holes.sort((a, b) => a - b);
    }
    root.#counts.set(id, count);
    if (holes.length > 0) root.#holes.set(id, holes);
    else root.#holes.delete(id);
  }

  /** Record a verdict in this run and every enclosing one. */
  addVerdict(verdict: RunVerdict): void {
    for (const scope of this.#chain()) scope.verdicts.push(verdict);
  }

  /** How many occurrences of `id` the outermost run holds (nested runs included; holes not counted). */
  occurrences(id: string): number {
    return (this.root.#counts.get(id) ?? 0) - (this.root.#holes.get(id)?.length ?? 0);
  }

  /**
   * The latest answered occurrence of `id`, for verdicts: in this run first,
   * then in the enclosing ones (a helper's run may judge its caller's call).
   */
  lastServed(id: string): ServedCall | undefined {
    for (const scope of this.#chain()) {
      for (let i = scope.calls.length - 1; i >= 0; i--) {
        const c = scope.calls[i]!;
        if (c.id === id && c.from !== "pending" && c.from !== "failed") return c;
      }
    }
    return undefined;
  }

  /**
   * The attempt a retry retries: the latest answered call of the whole
   * trajectory (the outermost run's) of the same kind, role and task at
   * `attempt - 1`. A pipeline that feeds the gate's feedback into the
   * retry's prompt changes its identity, so this is looked up by step,
   * not recomputed from the retry's manifest.
   */
  previousAttempt(step: ServedStep): ServedCall | undefined {
    const calls = this.root.calls;
    for (let i = calls.length - 1; i >= 0; i--) {
      const c = calls[i]!;
      if (c.from === "pending" || c.from === "failed" || c.step === undefined) continue;
      const same = c.step.kind === step.kind && c.step.role === step.role;
      if (same && c.step.task === step.task && c.step.attempt === step.attempt - 1) return c;
    }
    return undefined;
  }

  /** This run and its ancestors, innermost first. */
  *#chain(): Generator<RunScope> {
    for (let s: RunScope | undefined = this; s !== undefined; s = s.parent) yield s;
  }

  contentHash(): string {
    return runContentHash(this.calls.map((c) => c.id));
  }
}
