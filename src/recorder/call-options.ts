/**
 * A call's options split in two: those that only steer the call (its
 * signal, completeness check, callbacks, run, tool policy, upstream time)
 * and the identity options, which override the recorder's defaults for this
 * call's manifest. The call-only keys are listed once, here.
 */
import type { IdentityOptions } from "../identity/index.js";
import type { CallOptions } from "./types.js";

/** The options that only steer the call, never its identity. */
export const CALL_ONLY_KEYS = [
  "signal",
  "isComplete",
  "onServed",
  "run",
  "tool",
  "upstreamMs",
] as const satisfies readonly Exclude<keyof CallOptions, keyof IdentityOptions>[];

/** Compiles only when every call-only key of CallOptions is in CALL_ONLY_KEYS (`T` is the unlisted ones). */
type AllListed<T extends never> = T;
export type _CallOnlyKeysComplete = AllListed<
  Exclude<Exclude<keyof CallOptions, keyof IdentityOptions>, (typeof CALL_ONLY_KEYS)[number]>
>;

const CALL_ONLY: ReadonlySet<string> = new Set(CALL_ONLY_KEYS);

/** The options of a call that gives none (shared: never written to). */
export const NO_OPTIONS: CallOptions = Object.freeze({});

/**
 * The identity options of a call: the recorder's `defaults` as they are
 * when the call gives none (most calls), else the defaults with the call's
 * identity options over them.
 *
 * @example
 * identityOptionsOf(defaults, { signal, attempt: 1 }) // { ...defaults, attempt: 1 }
 */
export function identityOptionsOf(defaults: IdentityOptions, opts: CallOptions): IdentityOptions {
  if (opts === NO_OPTIONS || onlyCallOptions(opts)) return defaults;
  const own: Array<[string, unknown]> = [];
  for (const key of Object.keys(opts))
    if (!CALL_ONLY.has(key)) own.push([key, (opts as Record<string, unknown>)[key]]);
  const last = lastMerge.get(defaults);
  if (last !== undefined && sameEntries(last.own, own)) return last.merged;
  const merged: IdentityOptions = { ...defaults, ...Object.fromEntries(own) };
  lastMerge.set(defaults, { own, merged });
  return merged;
}

/**
 * The last merge made over each defaults object. Calls that give the same
 * identity options (an adapter passes `attempt: 0` on every call) get the
 * same merged object back, so what the identity prepares once per options
 * object (the secret scanner, src/normalize/secret-env.ts, and the root
 * matcher) is not prepared again on every call: ~45 µs of a hit. The
 * values are compared by `===`, as the merge copies them by reference: the
 * object returned holds exactly what a fresh merge would.
 */
const lastMerge = new WeakMap<
  IdentityOptions,
  { own: Array<[string, unknown]>; merged: IdentityOptions }
>();

function sameEntries(a: Array<[string, unknown]>, b: Array<[string, unknown]>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++)
    if (a[i]![0] !== b[i]![0] || a[i]![1] !== b[i]![1]) return false;
  return true;
}

/** True when `opts` gives no identity option (the recorder's defaults apply as they are). */
function onlyCallOptions(opts: CallOptions): boolean {
  for (const key in opts) if (!CALL_ONLY.has(key)) return false;
  return true;
}
