/**
 * Recorder modes and how one is chosen: option, else `INVOCACHE_MODE`, else
 * `replay` when `CI` is set (CI never makes a live, paid call unless asked),
 * else `auto`. An unknown mode is an `InvalidOptionError` that maps the
 * record modes VCR, vcrpy and Polly users know to ours.
 */
import { InvalidOptionError } from "../errors.js";

/**
 * - `replay`: serve recordings; a miss is a `ReplayMissError`.
 * - `auto`: serve recordings; record what is missing.
 * - `record`: always call through and (re)write the recording.
 * - `passthrough`: always call through; neither read nor write.
 * - `verify`: call through and compare with the recording; write nothing.
 * - `once`: `replay` when the store already holds recordings (the cassette
 *   exists), else `auto`; decided at the first call (once.ts).
 */
export type Mode = "replay" | "auto" | "record" | "passthrough" | "verify" | "once";

export const MODES: readonly Mode[] = ["replay", "auto", "record", "passthrough", "verify", "once"];

/** Other tools' record modes (VCR, vcrpy, Polly.js) and ours, for the unknown-mode error. */
const KNOWN_ELSEWHERE: Readonly<Record<string, string>> = {
  new_episodes: 'VCR\'s "new_episodes" (and Polly\'s replay with recordIfMissing) is "auto"',
  none: 'VCR\'s "none" (and Polly\'s replay without recordIfMissing) is "replay"',
  all: 'VCR\'s "all" (and Polly\'s "record") is "record"',
  stopped: 'Polly\'s "stopped" has no equivalent; "replay" never calls upstream',
};

const MAPPING =
  'VCR/vcrpy/Polly names map as: once → "once", new_episodes → "auto", none → "replay", all → "record" (docs/cassettes.md, "Modes and misses")';

/**
 * The error for a mode that is not one of ours: names where it came from,
 * what is accepted, and ours for a mode another tool calls by that name.
 */
export function unknownModeError(field: string, got: unknown): InvalidOptionError {
  const known = typeof got === "string" ? KNOWN_ELSEWHERE[got.toLowerCase()] : undefined;
  return new InvalidOptionError(
    field,
    `${field} must be one of ${MODES.join(", ")}; got ${JSON.stringify(got)}. ${known ?? MAPPING}`,
  );
}

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
      throw unknownModeError("mode", option);
    }
    return option;
  }
  const fromEnv = env.INVOCACHE_MODE?.trim();
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!MODES.includes(fromEnv as Mode)) {
      throw unknownModeError("INVOCACHE_MODE", fromEnv);
    }
    return fromEnv as Mode;
  }
  const ci = env.CI?.trim().toLowerCase();
  if (ci !== undefined && ci !== "" && ci !== "0" && ci !== "false") return "replay";
  return "auto";
}
