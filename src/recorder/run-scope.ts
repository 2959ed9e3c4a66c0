/**
 * Run scopes (RELOOP layer 2). Inside a run the n-th call with the same
 * identity is occurrence n and has its own entry, so a step repeated without
 * bumping `attempt` still never gets the same output twice. A run also has a
 * content hash: a one-level Merkle root over the identities it served, in
 * order (git's tree-over-blobs shape), so two runs that took the same
 * trajectory are provably identical and a divergence is one comparison.
 */
import { randomUUID } from "node:crypto";
import { sha256Hex } from "../identity/sha256.js";

/** Domain tag of run content hashes, distinct from the identity tag. */
export const RUN_DOMAIN_V1 = "invocache/run/v1\n";

/** How an occurrence was answered (`pending` until it is). */
export type ServedFrom = "pending" | "hit" | "recorded" | "live" | "failed";

/** One call made inside a run. */
export interface ServedCall {
  readonly id: string;
  readonly occurrence: number;
  from: ServedFrom;
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
  readonly #counts = new Map<string, number>();

  constructor(runId: string | undefined) {
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
  reserve(id: string): ServedCall {
    const occurrence = this.#counts.get(id) ?? 0;
    this.#counts.set(id, occurrence + 1);
    const call: ServedCall = { id, occurrence, from: "pending" };
    this.calls.push(call);
    return call;
  }

  /**
   * Give back the occurrence of a call that failed. When it is the latest
   * reservation of its identity the count goes back down; a concurrent later
   * reservation keeps its number and this one is only marked failed. Either
   * way it leaves the trajectory and the content hash.
   */
  release(call: ServedCall): void {
    call.from = "failed";
    const i = this.calls.lastIndexOf(call);
    if (i >= 0) this.calls.splice(i, 1);
    if (this.#counts.get(call.id) === call.occurrence + 1)
      this.#counts.set(call.id, call.occurrence);
  }

  /** How many occurrences of `id` this run has reserved. */
  occurrences(id: string): number {
    return this.#counts.get(id) ?? 0;
  }

  /** The latest answered occurrence of `id`, for verdicts. */
  lastServed(id: string): ServedCall | undefined {
    for (let i = this.calls.length - 1; i >= 0; i--) {
      const c = this.calls[i]!;
      if (c.id === id && c.from !== "pending" && c.from !== "failed") return c;
    }
    return undefined;
  }

  contentHash(): string {
    return runContentHash(this.calls.map((c) => c.id));
  }
}
