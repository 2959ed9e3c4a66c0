/**
 * The one path every tool adapter takes: a tool call, already translated to
 * a `{ kind: "tool" }` request, goes through the public `recorder.call`. Here
 * only translation of failures happens (naming the tool); replay policy stays
 * in the recorder.
 */

import { type ToolCallDescription, toolInvocationCall } from "../invocation/index.js";
import { assertJsonValue } from "../json/index.js";
import type { Recorder } from "../recorder/index.js";
import { EntryTooLargeError, ToolCallError, ToolResultError } from "../recorder/index.js";

/**
 * One tool call as an adapter describes it: the translator contract's tool
 * description (src/invocation; its `policy` already checked by the
 * translator, so never checked twice), the recorder and the live call.
 */
export interface ToolCall extends ToolCallDescription {
  recorder: Recorder;
  /** The live call. */
  live: () => Promise<unknown>;
}

/** Record or replay one tool call; role, task, attempt and inputs come from `withInvocation`. */
export async function recordTool<R>(call: ToolCall): Promise<R> {
  const { name } = call;
  const label = `${call.server ? `${call.server}/` : ""}${name}`;
  // The one translator contract (src/invocation): the context's role, task,
  // attempt and inputs, the tool's policy and signal.
  const [req, opts] = toolInvocationCall(call);
  const live = async (): Promise<unknown> => {
    let result: unknown;
    try {
      call.signal?.throwIfAborted();
      result = await call.live();
      call.signal?.throwIfAborted();
    } catch (error) {
      const aborted = call.signal?.aborted === true;
      throw new ToolCallError(
        name,
        aborted
          ? `invocache: tool ${JSON.stringify(label)} was aborted; nothing was recorded. Call it again to record it.`
          : `invocache: tool ${JSON.stringify(label)} failed (${errorText(error)}); nothing was recorded. ` +
              "Fix the tool or its server, or return an error result (MCP isError: true) if the failure is part of the answer: results are recorded, thrown errors never are.",
        error,
      );
    }
    try {
      assertJsonValue(result, "result");
    } catch (error) {
      throw new ToolResultError(
        name,
        `invocache: tool ${JSON.stringify(label)} returned a result that is not JSON (${errorText(error)}); nothing was recorded. ` +
          "Return plain JSON (convert Dates, Maps, class instances; use null, not undefined).",
        error,
      );
    }
    return result;
  };
  try {
    return (await call.recorder.call(req, live, opts)) as R;
  } catch (error) {
    if (call.signal?.aborted === true && error === call.signal.reason) {
      // Aborted before the live call started (the recorder checks first).
      throw new ToolCallError(
        name,
        `invocache: tool ${JSON.stringify(label)} was aborted; nothing was recorded. Call it again to record it.`,
        error,
      );
    }
    if (error instanceof EntryTooLargeError) {
      throw new ToolResultError(
        name,
        `invocache: tool ${JSON.stringify(label)} returned ${error.bytes} bytes, over the ${error.limit}-byte entry limit; it was not recorded (never truncated). ` +
          "Return less, or raise createRecorder({ maxEntryBytes }).",
        error,
      );
    }
    throw error;
  }
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
