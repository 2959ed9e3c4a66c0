/**
 * A tiny typed event emitter (no dependency on node:events, so the recorder
 * runs wherever its store does). Listener errors are isolated: observability
 * must never break a model call.
 */
import type { FieldDiff, Manifest } from "../identity/index.js";
import type { ValueDiff } from "../json/index.js";
import type { CallSummary, Tally, Usage } from "../usage/index.js";

/** Everything a recorder reports. */
export interface RecorderEvents {
  hit: { id: string; occurrence: number; key: string; savedMs: number };
  /** `manifest` is the normalized manifest of the call that missed (for miss logs). */
  miss: { id: string; occurrence: number; key: string; mode: string; manifest: Manifest };
  record: { id: string; occurrence: number; key: string; durationMs: number; usage?: Usage };
  /** Every call, once answered or failed: outcome, tokens, cost, model time (the accounting's input). */
  call: CallSummary;
  /** The call went upstream without reading or writing (passthrough, store outage, not storable). */
  bypass: { id: string; occurrence: number; reason: string };
  /** Something went wrong but the call went on (fail-open). */
  warning: { message: string; error?: unknown; id?: string };
  /** A replayed run came back different: verdict, trajectory or (verify mode) response. */
  divergence: {
    kind: "verdict" | "trajectory" | "response";
    id?: string;
    occurrence?: number;
    runId?: string;
    expected: unknown;
    actual: unknown;
    diffs?: FieldDiff[];
    /** Tool calls in verify mode: the differing paths of the result. */
    fields?: ValueDiff[];
  };
  verdict: { id: string; occurrence: number; verdict: "accepted" | "rejected"; reason?: string };
  /** A run ended; `parentRunId` when it was nested in another. */
  run: {
    runId: string;
    contentHash: string;
    calls: number;
    explicitId: boolean;
    parentRunId?: string;
    /** What the run's calls spent and saved (tokens, dollars, model time). */
    summary: Tally;
  };
}

export type Listener<K extends keyof RecorderEvents> = (event: RecorderEvents[K]) => void;

export class Emitter {
  readonly #listeners = new Map<keyof RecorderEvents, Set<(e: never) => void>>();

  on<K extends keyof RecorderEvents>(name: K, listener: Listener<K>): () => void {
    let set = this.#listeners.get(name);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener as (e: never) => void);
    return () => set.delete(listener as (e: never) => void);
  }

  /** Whether anyone listens to `name`: an event nobody hears need not be built. */
  listening(name: keyof RecorderEvents): boolean {
    const set = this.#listeners.get(name);
    return set !== undefined && set.size > 0;
  }

  emit<K extends keyof RecorderEvents>(name: K, event: RecorderEvents[K]): void {
    const set = this.#listeners.get(name);
    if (set === undefined) return;
    for (const l of set) {
      try {
        (l as Listener<K>)(event);
      } catch {
        // A broken listener must not break the call it observes.
      }
    }
  }
}
