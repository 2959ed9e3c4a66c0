/**
 * `invocacheMiddleware`: record and replay Vercel AI SDK (v6, language model
 * spec v3) calls with `wrapLanguageModel`. Types only from
 * `@ai-sdk/provider`: nothing here loads `ai` at runtime.
 *
 * Identity: model = `provider:modelId`; conversation = the v3 prompt (the
 * identity makes it canonical JSON, strings normalized); params = every call setting (temperature, tools,
 * responseFormat, providerOptions…) plus `":call"` (`generate` | `stream`),
 * never the abort signal or headers.
 *
 * Stored: the generate result or the stream parts, JSON-encoded by the
 * `$invocache` convention (json-codec.ts: Dates, bytes, URLs). Left out, and
 * left out of live results too so a run reads the same live and replayed:
 * `request` (the provider's request body is the prompt again, un-normalized)
 * and response headers outside the allowlist. Never stored: results that are
 * truncated (`finishReason` `length`) or errors, streams with an `error`
 * part, without a `finish` part, or aborted, and anything holding a value
 * that has no lossless JSON form (those are handed back live).
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Middleware,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
} from "@ai-sdk/provider";
import { invocationCall } from "../invocation/index.js";
import type { JsonValue } from "../json/index.js";
import type { RecordedStream, Recorder } from "../recorder/index.js";
import { safeResponseHeaders } from "./headers.js";
import { decodeJson, encodeJson } from "./json-codec.js";
import { requireRecorder } from "./recorder-option.js";

/** Options of {@link invocacheMiddleware}. */
export interface InvocacheMiddlewareOptions {
  recorder: Recorder;
  /** Replay streams as fast as possible (default) or with the recorded gaps. */
  timing?: "none" | "recorded" | undefined;
}

/** Call settings that never enter the identity. */
const NOT_IN_IDENTITY = new Set(["prompt", "abortSignal", "headers"]);

/**
 * Middleware for `wrapLanguageModel` that records and replays `doGenerate`
 * and `doStream` through `recorder`. Role, task, attempt, project root and
 * input artifacts come from {@link withInvocation}.
 *
 * @example
 * import { generateText, wrapLanguageModel } from "ai";
 * const model = wrapLanguageModel({ model: openai("gpt-5"), middleware: invocacheMiddleware({ recorder }) });
 * const { text } = await withInvocation({ role: "reviewer" }, () => generateText({ model, prompt }));
 */
export function invocacheMiddleware(options: InvocacheMiddlewareOptions): InvocacheMiddleware {
  return middleware(options);
}

/**
 * What {@link invocacheMiddleware} returns: an `@ai-sdk/provider`
 * `LanguageModelV3Middleware`, declared here by its shape so that the package
 * root's types never import that optional peer (a user without the AI SDK,
 * type-checking with `skipLibCheck: false`, must not get an error from our
 * declarations). It is assignable to `wrapLanguageModel`'s `middleware`.
 */
export interface InvocacheMiddleware {
  readonly specificationVersion: "v3";
  // biome-ignore lint/suspicious/noExplicitAny: stands in for the AI SDK's own parameter type
  wrapGenerate(options: any): PromiseLike<any>;
  // biome-ignore lint/suspicious/noExplicitAny: stands in for the AI SDK's own parameter type
  wrapStream(options: any): PromiseLike<any>;
}

function middleware(
  options: InvocacheMiddlewareOptions,
): LanguageModelV3Middleware & InvocacheMiddleware {
  const recorder = requireRecorder(options, "invocacheMiddleware", "{ recorder }");
  const timing = options.timing ?? "none";

  return {
    specificationVersion: "v3",

    async wrapGenerate({ doGenerate, params, model }) {
      const [req, opts] = invocationCall(describeModelCall(model, params, "generate"));
      // A live result goes back without an encode/decode trip, found by its box.
      const originals = new WeakMap<object, LanguageModelV3GenerateResult>();
      const unstorable = new WeakSet<object>();
      const value = await recorder.call<JsonValue>(
        req,
        async () => {
          // Live callers see what a replay gives back: no request, allowlisted headers.
          const result = storedGenerate(await doGenerate());
          const { json, lossless } = encodeJson(result);
          const box = { result: json };
          originals.set(box, result);
          if (!lossless) unstorable.add(box);
          return box;
        },
        {
          ...opts,
          signal: params.abortSignal,
          isComplete: (v) =>
            !unstorable.has(v as object) && generateComplete((v as { result: JsonValue }).result),
        },
      );
      const live = originals.get(value as object);
      if (live !== undefined) return live;
      return decodeJson(recordedGenerate(value)) as LanguageModelV3GenerateResult;
    },

    async wrapStream({ doStream, params, model }) {
      const [req, opts] = invocationCall(describeModelCall(model, params, "stream"));
      const originals = new WeakMap<object, LanguageModelV3StreamPart>();
      const unstorable = new WeakSet<object>();
      let cancelUpstream: ((reason: unknown) => void) | undefined;
      const result = await recorder.stream<JsonValue, JsonValue>(
        req,
        async () => {
          const upstream = await doStream();
          const reader = upstream.stream.getReader();
          let cancelled: { reason: unknown } | undefined;
          cancelUpstream = (reason) => {
            cancelled = { reason };
            reader.cancel(reason).catch(() => {});
          };
          const head = encodeJson(storedStreamHead(upstream)).json;
          async function* parts(): AsyncGenerator<JsonValue> {
            for (;;) {
              const { done, value: part } = await reader.read();
              // A cancelled stream ends "cleanly" from the reader's side: it
              // must fail here, or a cut-off stream would be stored.
              if (cancelled !== undefined) throw abortError(cancelled.reason);
              if (done) return;
              const { json, lossless } = encodeJson(part);
              const box = json as { [key: string]: JsonValue }; // parts are objects
              originals.set(box, part);
              if (!lossless || part.type === "error") unstorable.add(box);
              yield box;
            }
          }
          return { head, events: parts() };
        },
        {
          ...opts,
          signal: params.abortSignal,
          timing,
          isComplete: (v) => {
            const events = (v as RecordedStream).events.map((e) => e.data);
            return (
              !events.some((e) => unstorable.has(e as object)) &&
              streamComplete(events as JsonValue[])
            );
          },
        },
      );
      const decodedHead = decodeJson(result.head) as Partial<LanguageModelV3StreamResult>;
      const it = result.events[Symbol.asyncIterator]();
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        async pull(controller) {
          const next = await it.next();
          if (next.done) return controller.close();
          const live = originals.get(next.value as object);
          controller.enqueue(live ?? (decodeJson(next.value) as LanguageModelV3StreamPart));
        },
        cancel(reason) {
          cancelUpstream?.(reason);
          it.return?.().catch(() => {});
        },
      });
      return {
        stream,
        ...(decodedHead.response === undefined ? {} : { response: decodedHead.response }),
      };
    },
  };
}

/** model, prompt and params of a language model call. */
function describeModelCall(
  model: LanguageModelV3,
  params: LanguageModelV3CallOptions,
  call: "generate" | "stream",
): { model: string; conversation: JsonValue; params: Record<string, JsonValue> } {
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    if (!NOT_IN_IDENTITY.has(key) && value !== undefined) settings[key] = value;
  }
  const encodedSettings = encodeJson(settings).json as Record<string, JsonValue>;
  return {
    model: `${model.provider}:${model.modelId}`,
    // The identity canonicalizes and normalizes it (request.conversation).
    conversation: encodeJson(params.prompt).json,
    params: { ...encodedSettings, ":call": call },
  };
}

/**
 * What is kept of a generate result, and what a live caller gets too (so a
 * run reads the same live and replayed): no `request` (the provider's request
 * body is the prompt again, un-normalized), response headers cut to the
 * allowlist.
 */
function storedGenerate(result: LanguageModelV3GenerateResult): LanguageModelV3GenerateResult {
  const { request: _request, ...rest } = result;
  if (rest.response?.headers === undefined) return rest;
  return {
    ...rest,
    response: { ...rest.response, headers: safeResponseHeaders(rest.response.headers) },
  };
}

function recordedGenerate(value: JsonValue): JsonValue {
  const result = (value as { result?: JsonValue } | null)?.result;
  if (result === undefined || result === null || typeof result !== "object") {
    throw new TypeError(
      "invocache: the recording for this identity is not an AI SDK generate result; re-record it with INVOCACHE_MODE=record",
    );
  }
  return result;
}

/** What is kept of a stream result besides its parts. */
function storedStreamHead(result: LanguageModelV3StreamResult): unknown {
  return result.response === undefined
    ? {}
    : { response: { ...result.response, headers: safeResponseHeaders(result.response.headers) } };
}

const INCOMPLETE_FINISH = new Set(["length", "error"]);

function finishOf(value: JsonValue | undefined): string | undefined {
  const reason = (value as { unified?: unknown } | null | undefined)?.unified;
  return typeof reason === "string" ? reason : undefined;
}

function generateComplete(result: JsonValue): boolean {
  const reason = finishOf((result as { finishReason?: JsonValue }).finishReason);
  return reason === undefined || !INCOMPLETE_FINISH.has(reason);
}

function streamComplete(parts: JsonValue[]): boolean {
  const finish = parts.find(
    (p): p is { [k: string]: JsonValue } =>
      p !== null && typeof p === "object" && !Array.isArray(p) && p.type === "finish",
  );
  if (finish === undefined) return false; // ended before its finish part
  const reason = finishOf(finish.finishReason);
  return reason === undefined || !INCOMPLETE_FINISH.has(reason);
}

function abortError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  return new DOMException(
    typeof reason === "string" ? reason : "The stream was cancelled",
    "AbortError",
  );
}
