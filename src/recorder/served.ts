/**
 * Served-calls memory for calls outside every run: the last served call per
 * id, so a verdict can find what it judges. Bounded (oldest forgotten first).
 */
import type { ServedCall } from "./run-scope.js";

const LIMIT = 10_000;

export class ServedMemory {
  readonly #lastServed = new Map<string, ServedCall>();

  /** The id remembered last: already the newest, so it is replaced where it is. */
  #newest: string | undefined;

  remember(call: ServedCall): void {
    // The same call again (a loop of hits) is already newest: no delete and re-insert.
    if (this.#newest !== call.id) this.#lastServed.delete(call.id);
    this.#newest = call.id;
    this.#lastServed.set(call.id, call);
    if (this.#lastServed.size > LIMIT)
      this.#lastServed.delete(this.#lastServed.keys().next().value as string);
  }

  get(id: string): ServedCall | undefined {
    return this.#lastServed.get(id);
  }
}
