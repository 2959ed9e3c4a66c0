/**
 * Per-kind modes: a run can replay the model and run tools live (or the
 * reverse). `createRecorder({ mode: { model: "replay", tool: "verify" } })`.
 * A kind left out takes the recorder's single mode (option, `INVOCACHE_MODE`,
 * CI default), or its kind's environment variable when the kind table names
 * one (`INVOCACHE_TOOL_MODE` for tools, identity/kinds.ts).
 */
import { CALL_KINDS, type CallKind, callKindNamed } from "../identity/internal.js";
import { MODES, type Mode, resolveMode, unknownModeError } from "./mode.js";

/** The kinds of invocation a recorder answers (identity's kind table). */
export type InvocationKind = "model" | "tool";

// Spelled out above for the public API report; the table's list must agree
// (a kind added to identity's table fails to compile here until it is added).
const SAME_KINDS: [InvocationKind, CallKind] extends [CallKind, InvocationKind] ? true : never =
  true;
void SAME_KINDS;

/** A mode per kind. */
export interface KindModes {
  model?: Mode | undefined;
  tool?: Mode | undefined;
}

/** Both kinds resolved. */
export type ResolvedModes = Readonly<Record<InvocationKind, Mode>>;

/**
 * Resolve the `mode` option (one mode or one per kind).
 *
 * @example
 * resolveKindModes({ model: "replay", tool: "verify" }, {}) // { model: "replay", tool: "verify" }
 * resolveKindModes("auto", { INVOCACHE_TOOL_MODE: "passthrough" }) // { model: "auto", tool: "passthrough" }
 */
export function resolveKindModes(
  option: Mode | KindModes | undefined,
  env: Record<string, string | undefined> = process.env,
): ResolvedModes {
  const modes = {} as Record<InvocationKind, Mode>;
  if (option !== null && typeof option === "object") {
    for (const key of Object.keys(option)) {
      if (!(CALL_KINDS as readonly string[]).includes(key)) {
        throw new TypeError(
          `mode: unknown kind ${JSON.stringify(key)}; use { ${CALL_KINDS.map((k) => `${k}?: Mode`).join(", ")} }`,
        );
      }
    }
    const base = resolveMode(undefined, env);
    for (const kind of CALL_KINDS) {
      const given = option[kind];
      modes[kind] = given === undefined ? fromEnv(env, kind, base) : resolveMode(given, env);
    }
    return Object.freeze(modes);
  }
  // One mode for all: it sets every kind; left out, each kind's variable may.
  const base = resolveMode(option, env);
  for (const kind of CALL_KINDS) {
    modes[kind] = option === undefined ? fromEnv(env, kind, base) : base;
  }
  return Object.freeze(modes);
}

/** The mode a kind's environment variable sets, or `fallback` (unset, or the kind has none). */
function fromEnv(env: Record<string, string | undefined>, kind: CallKind, fallback: Mode): Mode {
  const name = callKindNamed(kind).modeEnv;
  const v = name === undefined ? undefined : env[name]?.trim();
  if (v === undefined || v === "") return fallback;
  if (!MODES.includes(v as Mode)) {
    throw unknownModeError(name as string, v);
  }
  return v as Mode;
}
