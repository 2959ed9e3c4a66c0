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
  const own: Record<string, unknown> = { ...opts };
  for (const key of CALL_ONLY_KEYS) delete own[key];
  return { ...defaults, ...own };
}

/** True when `opts` gives no identity option (the recorder's defaults apply as they are). */
function onlyCallOptions(opts: CallOptions): boolean {
  for (const key in opts) if (!CALL_ONLY.has(key)) return false;
  return true;
}
