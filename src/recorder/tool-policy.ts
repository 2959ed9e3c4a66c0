/**
 * The side-effect rule for tool calls (docs/tools.md). Replaying "send the
 * email" as if it had happened is worse than a miss, so in `auto` mode on a
 * shared store (the cache a workflow engine uses: SQLite, Redis, PostgreSQL,
 * memory) a tool that is neither read-only nor idempotent is never served
 * from the cache and never stored: it runs live every time, unless the user
 * opts that tool in. In a cassette (a test run) and in the explicit modes
 * (`replay`, `record`, `verify`) every tool call is recorded and replayed:
 * there the recording *is* the point.
 */
import type { Mode } from "./mode.js";

/**
 * What a tool does to the world. Same names and defaults as MCP tool
 * annotations: without hints a tool is assumed to write (not read-only), to
 * be destructive, not idempotent and open-world.
 */
export interface ToolEffects {
  /** The tool does not change its environment. Default false. */
  readOnlyHint?: boolean | undefined;
  /** A change may be destructive (only meaningful when not read-only). Default true. */
  destructiveHint?: boolean | undefined;
  /** Calling it again with the same arguments has no further effect. Default false. */
  idempotentHint?: boolean | undefined;
  /** It talks to an open world (the web, other services). Default true. */
  openWorldHint?: boolean | undefined;
}

/** The per-call tool policy the adapters pass to the recorder. */
export interface ToolPolicy extends ToolEffects {
  /**
   * Opt this tool in to being served from a shared cache in `auto` mode even
   * though it has side effects. Default false.
   */
  cacheSideEffects?: boolean | undefined;
}

/** True when a tool may be served from a shared cache by its hints alone. */
export function isCacheSafe(effects: ToolEffects | undefined): boolean {
  return effects?.readOnlyHint === true || effects?.idempotentHint === true;
}

/**
 * Why a tool call must bypass the cache, or undefined when it may use it.
 * `storeUrl` tells a cassette (`cassette://…`, a test run) from a shared store.
 */
export function sideEffectBypass(
  toolName: string,
  mode: Mode,
  storeUrl: string,
  policy: ToolPolicy | undefined,
): string | undefined {
  if (mode !== "auto") return undefined;
  if (storeUrl.startsWith("cassette://")) return undefined;
  if (isCacheSafe(policy) || policy?.cacheSideEffects === true) return undefined;
  return (
    `tool ${JSON.stringify(toolName)} may have side effects (neither readOnlyHint nor idempotentHint), ` +
    `so in auto mode on a shared store it runs live and is not cached. If replaying it is safe, ` +
    `mark it readOnlyHint/idempotentHint or pass cacheSideEffects: true for this tool`
  );
}

/** Check a `ToolPolicy` given by a user; returns it. */
export function checkToolPolicy(policy: unknown, toolName: string): ToolPolicy | undefined {
  if (policy === undefined) return undefined;
  if (policy === null || typeof policy !== "object" || Array.isArray(policy)) {
    throw new TypeError(
      `tool ${JSON.stringify(toolName)}: effects must be an object like { readOnlyHint: true }`,
    );
  }
  for (const key of [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
    "cacheSideEffects",
  ] as const) {
    const v = (policy as Record<string, unknown>)[key];
    if (v !== undefined && typeof v !== "boolean") {
      throw new TypeError(
        `tool ${JSON.stringify(toolName)}: ${key} must be true or false, got ${typeof v}`,
      );
    }
  }
  return policy as ToolPolicy;
}
