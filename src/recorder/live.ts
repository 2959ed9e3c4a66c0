/**
 * `answerLive(value)`: how a call's `fn` says "answer the caller with this,
 * store nothing" (a non-2xx HTTP response, a body that is not JSON), as a
 * returned value the recorder understands rather than an exception thrown
 * through it.
 */

/** A value to hand back to the caller as is, never stored (see {@link answerLive}). */
export class Live<T> {
  readonly #brand = true;
  constructor(readonly value: T) {}
  /** Whether `v` is a live answer (nominal: only `answerLive` makes one). */
  static is(v: unknown): v is Live<unknown> {
    return v instanceof Live && v.#brand;
  }
}

/**
 * Resolve a call's `fn` with this to answer the caller live and store
 * nothing: the value goes back as is, the call counts as a bypass, and
 * inside a run it gives its occurrence back (like a failure, so a retry that
 * succeeds is the occurrence a replay asks for). Single-flight followers make
 * their own call.
 *
 * @example
 * await recorder.call(req, async () => {
 *   const res = await fetch(url, init);
 *   return res.ok ? await res.json() : answerLive({ status: res.status });
 * });
 */
export function answerLive<T>(value: T): Live<T> {
  return new Live(value);
}
