/**
 * Recorder modes and how one is chosen: option, else `INVOCACHE_MODE`, else
 * `replay` when `CI` is set (CI never makes a live, paid call unless asked),
 * else `auto`.
 */

/**
 * - `replay`: serve recordings; a miss is a `ReplayMissError`.
 * - `auto`: serve recordings; record what is missing.
 * - `record`: always call through and (re)write the recording.
 * - `passthrough`: always call through; neither read nor write.
 * - `verify`: call through and compare with the recording; write nothing.
 */
export type Mode = "replay" | "auto" | "record" | "passthrough" | "verify";

export const MODES: readonly Mode[] = ["replay", "auto", "record", "passthrough", "verify"];

/**
 * The mode a recorder runs in.
 *
 * @example
 * resolveMode(undefined, { CI: "true" }) // "replay"
 * resolveMode(undefined, { INVOCACHE_MODE: "record", CI: "true" }) // "record"
 */
export function resolveMode(
  option?: Mode,
  env: Record<string, string | undefined> = process.env,
): Mode {
  if (option !== undefined) {
    if (!MODES.includes(option)) {
      throw new TypeError(`mode must be one of ${MODES.join(", ")}; got ${JSON.stringify(option)}`);
    }
    return option;
  }
  const fromEnv = env.INVOCACHE_MODE?.trim();
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!MODES.includes(fromEnv as Mode)) {
      throw new TypeError(
        `INVOCACHE_MODE must be one of ${MODES.join(", ")}; got ${JSON.stringify(fromEnv)}`,
      );
    }
    return fromEnv as Mode;
  }
  const ci = env.CI?.trim().toLowerCase();
  if (ci !== undefined && ci !== "" && ci !== "0" && ci !== "false") return "replay";
  return "auto";
}
