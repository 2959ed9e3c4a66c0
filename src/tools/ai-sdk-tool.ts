/**
 * Vercel AI SDK tools: wrap the `execute` of `tool({ … })` definitions so
 * `generateText`/`streamText` with tools replays the tool executions as well
 * as the model calls (those go through `invocacheMiddleware`). Structural:
 * nothing from `ai` is imported, the user's tool objects are copied with a
 * recorded `execute`. The identity hashes the tool input only, never the
 * SDK's per-call `toolCallId`, messages or abort signal.
 */
import type { ToolArgRules } from "../identity/index.js";
import type { Recorder, ToolPolicy } from "../recorder/index.js";
import { type WrapToolOptions, wrapTool } from "./wrap-tool.js";

interface ExecuteOptions {
  abortSignal?: AbortSignal | undefined;
  [k: string]: unknown;
}

/** The part of an AI SDK tool this helper touches. */
export interface AiSdkToolLike {
  execute?: ((input: never, options: never) => unknown) | undefined;
  [k: string]: unknown;
}

/** Options of {@link recordAiSdkTools}. */
export interface RecordAiSdkToolsOptions {
  recorder: Recorder;
  /** A toolbox name, part of each identity. Default "ai-sdk". */
  server?: string | undefined;
  /** Side-effect hints per tool name (docs/tools.md); without hints a tool is assumed to write. */
  effects?: Readonly<Record<string, ToolPolicy>> | undefined;
  /** Which normalization rules the tools' inputs go through; default "roots" (see {@link WrapToolOptions.argRules}). */
  argRules?: ToolArgRules | undefined;
}

/**
 * Return the same tool set with each `execute` recorded and replayed.
 *
 * @example
 * const tools = recordAiSdkTools(
 *   { weather: tool({ inputSchema, execute: async ({ city }) => lookUp(city) }) },
 *   { recorder, effects: { weather: { readOnlyHint: true } } },
 * );
 * await generateText({ model, tools, prompt: "Weather in Oslo?" });
 */
export function recordAiSdkTools<T extends Record<string, AiSdkToolLike>>(
  tools: T,
  options: RecordAiSdkToolsOptions,
): T {
  if (tools === null || typeof tools !== "object") {
    throw new TypeError(
      "recordAiSdkTools: tools must be an object of AI SDK tools, { name: tool({ … }) }",
    );
  }
  const out: Record<string, AiSdkToolLike> = {};
  for (const [name, t] of Object.entries(tools)) {
    if (typeof t?.execute !== "function") {
      out[name] = t; // a tool without execute is answered by the caller, not run
      continue;
    }
    const execute = t.execute as (input: unknown, o: ExecuteOptions) => Promise<unknown>;
    out[name] = {
      ...t,
      execute: wrapTool(execute, {
        name,
        recorder: options.recorder,
        server: options.server ?? "ai-sdk",
        ...options.effects?.[name],
        args: (input: unknown) => ({ input }),
        argRules: options.argRules,
        signal: (_input: unknown, o: ExecuteOptions) => o?.abortSignal,
      }),
    };
  }
  return out as T;
}
