/** The in-process upstream the recorder tests call: counts calls, answers differently each time. */

export interface CountingUpstream {
  /** How many times `fn` ran. */
  calls: number;
  /** The upstream call: resolves to `{ text: "answer <n>", finish_reason: "stop" }` on call n. */
  fn: () => Promise<{ text: string; finish_reason: string }>;
}

/**
 * A fresh counting upstream.
 *
 * @example
 * const u = upstream();
 * await recorder.call(req, u.fn); // { text: "answer 1", ... }
 * expect(u.calls).toBe(1);
 */
export function upstream(): CountingUpstream {
  const u: CountingUpstream = {
    calls: 0,
    fn: async () => {
      u.calls++;
      return { text: `answer ${u.calls}`, finish_reason: "stop" };
    },
  };
  return u;
}
