/**
 * wrapTool: record and replay any async tool function (arguments in, JSON
 * result out). Returns a function of the same signature.
 */
import { manifestArgRules, type ToolArgRules } from "../identity/index.js";
import type { Recorder } from "../recorder/index.js";
import { checkToolPolicy, type ToolPolicy } from "../recorder/index.js";
import { recordTool } from "./record-tool.js";

/** Options of {@link wrapTool}. Side-effect hints have MCP's names and defaults. */
export interface WrapToolOptions<A extends unknown[]> extends ToolPolicy {
  /** The tool's name, part of its identity. Default: the function's name. */
  name?: string | undefined;
  recorder: Recorder;
  /** A server or toolbox name, part of the identity. Default "". */
  server?: string | undefined;
  /**
   * The arguments that make up the identity. Default: every argument the
   * function receives, as `{ arguments: [...all arguments] }`, so no two calls
   * with different arguments share an identity. Map them yourself to leave
   * out what is not the question, e.g. an AI SDK `execute(input, { toolCallId })`:
   * `args: (input) => ({ input })` (recordAiSdkTools does this for you).
   */
  args?: ((...args: A) => Record<string, unknown>) | undefined;
  /**
   * Which normalization rules string arguments go through. Default `"roots"`:
   * arguments are data, kept exact but for the checkout/home/tmp roots (the
   * same file on another machine). `"prompt"`: the whole prompt table (UUIDs,
   * timestamps, whitespace become noise); `"none"`: nothing; or a list of rule
   * names, e.g. `["root:project", "uuid"]`. Secrets are always redacted.
   */
  argRules?: ToolArgRules | undefined;
  /** The abort signal of a call, if any (e.g. `(_input, o) => o.abortSignal`). */
  signal?: ((...args: A) => AbortSignal | undefined) | undefined;
}

/**
 * Wrap a tool function so its calls are recorded and replayed like model calls.
 *
 * @example
 * const getWeather = wrapTool(async ({ city }: { city: string }) => fetchWeather(city), {
 *   name: "get_weather",
 *   recorder,
 *   readOnlyHint: true,
 * });
 * await getWeather({ city: "Oslo" }); // recorded; replayed on the next run
 */
export function wrapTool<A extends unknown[], R>(
  fn: (...args: A) => Promise<R> | R,
  options: WrapToolOptions<A>,
): (...args: A) => Promise<R> {
  if (typeof fn !== "function") throw new TypeError("wrapTool: fn must be a function");
  if (options === null || typeof options !== "object" || options.recorder === undefined) {
    throw new TypeError(
      'wrapTool: pass { recorder, name? }, e.g. wrapTool(fn, { recorder, name: "search" })',
    );
  }
  const name = options.name ?? fn.name;
  if (typeof name !== "string" || name === "") {
    throw new TypeError(
      'wrapTool: the tool needs a name (its identity depends on it); pass { name: "search" } for an anonymous function',
    );
  }
  if (options.server !== undefined && typeof options.server !== "string") {
    throw new TypeError(`wrapTool ${name}: server must be a string`);
  }
  const { recorder, args: toArgs, signal: toSignal, argRules } = options;
  manifestArgRules(argRules, name); // a bad setting fails here, not at the first call
  const policy: ToolPolicy = checkToolPolicy(
    {
      readOnlyHint: options.readOnlyHint,
      destructiveHint: options.destructiveHint,
      idempotentHint: options.idempotentHint,
      openWorldHint: options.openWorldHint,
      cacheSideEffects: options.cacheSideEffects,
    },
    name,
  ) as ToolPolicy;
  const wrapped = (...a: A): Promise<R> => {
    const signal = toSignal?.(...a);
    return recordTool<R>({
      recorder,
      name,
      server: options.server ?? "",
      method: "tools/call",
      args: toArgs ? toArgs(...a) : defaultArgs(a, signal),
      argRules,
      policy,
      signal,
      live: async () => fn(...a),
    });
  };
  Object.defineProperty(wrapped, "name", { value: name });
  return wrapped;
}

/**
 * Every argument the function receives, in one shape: `{ arguments: [...] }`.
 * Never the first argument alone (a second one would be dropped, and
 * `t({ args: [1, 2] })` would equal `t(1, 2)`). Only the call's abort signal
 * (the one the `signal` option returns) is left out.
 */
function defaultArgs(
  a: readonly unknown[],
  signal: AbortSignal | undefined,
): Record<string, unknown> {
  // The call's abort signal (named by the `signal` option) controls the call; it is not data.
  return { arguments: signal === undefined ? [...a] : a.filter((x) => x !== signal) };
}
