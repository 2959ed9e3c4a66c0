/**
 * Errors of tool calls (issue 13). Each names the tool and what to do, and
 * each means nothing was stored.
 */
import { InvocacheError } from "../errors.js";
import { formatDiffs, type ValueDiff } from "../json/index.js";

/** A tool threw, was aborted, or its server failed mid-call: nothing was recorded. */
export class ToolCallError extends InvocacheError {
  readonly tool: string;
  constructor(tool: string, message: string, cause: unknown) {
    super("ERR_TOOL_CALL", message, { cause });
    this.tool = tool;
  }
}

/** A tool returned something that cannot be recorded (not JSON). */
export class ToolResultError extends InvocacheError {
  readonly tool: string;
  constructor(tool: string, message: string, cause?: unknown) {
    super("ERR_TOOL_RESULT", message, cause === undefined ? undefined : { cause });
    this.tool = tool;
  }
}

/** A live tool result differs from its recording while the model is strictly replayed. */
export class ToolDivergenceError extends InvocacheError {
  readonly tool: string;
  readonly id: string;
  readonly occurrence: number;
  readonly diffs: readonly ValueDiff[];
  constructor(tool: string, id: string, occurrence: number, diffs: readonly ValueDiff[]) {
    super(
      "ERR_TOOL_DIVERGENCE",
      `invocache: tool ${JSON.stringify(tool)} (${id.slice(0, 12)}, occurrence ${occurrence}) answered differently than when it was recorded, ` +
        `while the model is replayed; the replayed model would see an answer it never saw. Differs in:\n${formatDiffs(diffs)}\n` +
        'Re-record with INVOCACHE_MODE=record if the tool changed on purpose, or replay the tool too (mode: { tool: "replay" }).',
    );
    this.tool = tool;
    this.id = id;
    this.occurrence = occurrence;
    this.diffs = diffs;
  }
}
