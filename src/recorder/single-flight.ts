/**
 * In-process single-flight: concurrent calls for one entry share one
 * upstream call, and each caller's own signal and policy apply to its own
 * wait. A follower that aborts rejects alone; when the leader aborts, the
 * followers take over (one leads, the others follow it); a follower whose
 * `isComplete` refuses the shared answer calls upstream itself (not stored:
 * the entry is the leader's). A follower did not go upstream: it is counted
 * as a hit with the leader's time, and gets its own copy.
 */
import { type Answer, type CallContext, type Core, completeness } from "./core.js";
import { countBypass, countHit } from "./lookup.js";
import { callUpstream, untilAborted } from "./upstream.js";

/** An in-process upstream call that identical calls wait on. */
interface Flight {
  promise: Promise<Answer>;
  /** The leader's signal: when it aborts, the followers take over. */
  signal: AbortSignal | undefined;
}

export class SingleFlight {
  readonly #flights = new Map<string, Flight>();

  /** Lead with `lead` when no identical call is in flight, else follow the one that is. */
  async run(core: Core, c: CallContext, lead: () => Promise<Answer>): Promise<Answer> {
    for (;;) {
      const flight = this.#flights.get(c.key);
      if (flight === undefined) return this.#lead(c, lead);
      const shared = await this.#follow(c, flight);
      if (shared === undefined) continue; // the leader gave up or its answer is not shareable
      const complete = completeness(core, c);
      if (complete !== undefined && !complete(shared.value)) {
        return bypass(core, c, "the shared answer failed this call's isComplete");
      }
      countHit(core, c, shared.durationMs ?? 0);
      return {
        value: structuredClone(shared.value),
        hit: true,
        shared: true,
        // What the follower saved: the leader's model time and tokens.
        ...(shared.durationMs === undefined ? {} : { durationMs: shared.durationMs }),
        ...(shared.usage === undefined ? {} : { usage: shared.usage }),
      };
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

/** Call upstream without reading or writing, counted as a bypass. */
export async function bypass(core: Core, c: CallContext, reason: string): Promise<Answer> {
  countBypass(core, c, reason);
  const got = await callUpstream(c.fn, c.opts.signal);
  return {
    value: got.value,
    hit: false,
    bypass: reason,
    ...(got.kind === "value" ? {} : { unshareable: true }),
    ...(got.kind === "live" ? { live: true } : {}),
  };
}
