/**
 * Per-kind modes: a run can replay the model and run tools live (or the
 * reverse). `createRecorder({ mode: { model: "replay", tool: "verify" } })`.
 * A kind left out takes the recorder's single mode (option, `INVOCACHE_MODE`,
 * CI default); `INVOCACHE_TOOL_MODE` sets the tool kind from the environment.
 */
import { MODES, type Mode, resolveMode, unknownModeError } from "./mode.js";

/** The kinds of invocation a recorder answers. */
export type InvocationKind = "model" | "tool";

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
  if (option !== null && typeof option === "object") {
    for (const key of Object.keys(option)) {
      if (key !== "model" && key !== "tool") {
        throw new TypeError(
          `mode: unknown kind ${JSON.stringify(key)}; use { model?: Mode, tool?: Mode }`,
        );
      }
    }
    const base = resolveMode(undefined, env);
    const model = option.model === undefined ? base : resolveMode(option.model, env);
    const tool = option.tool === undefined ? toolFromEnv(env, base) : resolveMode(option.tool, env);
    return Object.freeze({ model, tool });
  }
  const model = resolveMode(option, env);
  return Object.freeze({ model, tool: option === undefined ? toolFromEnv(env, model) : model });
}

function toolFromEnv(env: Record<string, string | undefined>, fallback: Mode): Mode {
  const v = env.INVOCACHE_TOOL_MODE?.trim();
  if (v === undefined || v === "") return fallback;
  if (!MODES.includes(v as Mode)) {
    throw unknownModeError("INVOCACHE_TOOL_MODE", v);
  }
  return v as Mode;
}
