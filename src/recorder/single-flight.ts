/**
 * The share step (docs/recorder.md, "The call pipeline"): in-process
 * single-flight. Concurrent calls for one entry share one upstream call, and
 * each caller's own signal and policy apply to its own wait. A follower that
 * aborts rejects alone; when the leader aborts, the followers take over (one
 * leads, the others follow it); a follower whose `isComplete` refuses the
 * shared answer calls upstream itself (not stored: the entry is the
 * leader's; the pipeline makes that call). A follower did not go upstream:
 * it is counted as a hit with the leader's time, and gets its own copy.
 */
import { untilAborted } from "./abortable.js";
import { countHit } from "./call-events.js";
import { type Answer, type CallContext, type Core, completeness } from "./core.js";

/** What sharing an answer reads: the call's `isComplete` default and the hit counters. */
export type ShareDeps = Pick<Core, "opts" | "stats" | "events">;

/** An in-process upstream call that identical calls wait on. */
interface Flight {
  promise: Promise<Answer>;
  /** The leader's signal: when it aborts, the followers take over. */
  signal: AbortSignal | undefined;
}

export class SingleFlight {
  readonly #flights = new Map<string, Flight>();

  /**
   * Lead with `lead` when no identical call is in flight, else follow the
   * one that is and answer with `follow(its answer)`.
   */
  async run(
    c: CallContext,
    lead: () => Promise<Answer>,
    follow: (shared: Answer) => Answer | Promise<Answer>,
  ): Promise<Answer> {
    for (;;) {
      const flight = this.#flights.get(c.key);
      if (flight === undefined) return this.#lead(c, lead);
      const shared = await this.#follow(c, flight);
      if (shared === undefined) continue; // the leader gave up or its answer is not shareable
      return follow(shared);
    }
  }

  #lead(c: CallContext, lead: () => Promise<Answer>): Promise<Answer> {
    const mine: Flight = { promise: lead(), signal: c.opts.signal };
    this.#flights.set(c.key, mine);
    const forget = () => this.#land(c.key, mine);
    mine.promise.then(forget, forget);
    return mine.promise;
  }

  /** The leader's answer, or undefined when this follower must take over. */
  async #follow(c: CallContext, flight: Flight): Promise<Answer | undefined> {
    let shared: Answer;
    try {
      shared = await untilAborted(flight.promise, c.opts.signal);
    } catch (error) {
      if (c.opts.signal?.aborted) throw error;
      if (flight.signal?.aborted === true) {
        // The leader gave up on its own; nothing was stored. Take over.
        this.#land(c.key, flight);
        return undefined;
      }
      throw error; // the upstream failed: the same call would fail the same way
    }
    if (shared.unshareable === true) {
      this.#land(c.key, flight);
      return undefined;
    }
    return shared;
  }

  #land(key: string, flight: Flight): void {
    if (this.#flights.get(key) === flight) this.#flights.delete(key);
  }
}

/**
 * A follower's answer: its own copy of the leader's, counted as a hit with
 * the leader's time, or undefined when this call's `isComplete` refuses it
 * (the pipeline then calls upstream for this call alone).
 */
export function shareAnswer(deps: ShareDeps, c: CallContext, shared: Answer): Answer | undefined {
  const complete = completeness(deps, c);
  if (complete !== undefined && !complete(shared.value)) return undefined;
  countHit(deps, c, shared.durationMs ?? 0);
  return {
    value: structuredClone(shared.value),
    hit: true,
    shared: true,
    // What the follower saved: the leader's model time and tokens.
    ...(shared.durationMs === undefined ? {} : { durationMs: shared.durationMs }),
    ...(shared.usage === undefined ? {} : { usage: shared.usage }),
  };
}
