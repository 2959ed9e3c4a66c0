/**
 * `createFetch`: a drop-in `fetch` for SDKs that take one (OpenAI, Anthropic,
 * the AI SDK providers…). JSON POSTs that look like model calls become
 * invocations; everything else goes straight through, untouched.
 *
 * What is stored: the status, an allowlist of response headers
 * (headers.ts), and the body: parsed JSON, or the SSE events of a stream.
 * Never stored: request headers (API keys), cookies, non-2xx responses
 * (unless chosen with `recordErrors`), truncated or in-band-error answers,
 * streams that did not finish.
 */
import { InvalidOptionError } from "../errors.js";
import { invocationCall } from "../invocation/index.js";
import type { JsonValue } from "../json/index.js";
import {
  answerLive,
  isRecordedStream,
  type Live,
  type RecordedStream,
  type Recorder,
  ReplayMissError,
  resolveReplaySpeed,
} from "../recorder/index.js";
import { BodyChains } from "./body-reuse.js";
import { isCompleteJsonBody, isCompleteSse } from "./completeness.js";
import { safeResponseHeaders } from "./headers.js";
import { checkRecordErrors, retryHeaders } from "./http-errors.js";
import {
  checkHostAliases,
  describeHttpCall,
  type HostAliases,
  looksLikeModelCall,
  VOLATILE_BODY_FIELDS,
  wantsStream,
} from "./http-identity.js";
import { parseProviderJson } from "./json-codec.js";
import { missResponse } from "./miss-answer.js";
import { requireRecorder } from "./recorder-option.js";
import { type SseEvent, sseBody, sseEvents } from "./sse.js";

/** The `fetch` signature SDKs accept. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The recorded head of an HTTP response; `body` is set for a JSON response. */
export type HttpHead = {
  status: number;
  statusText?: string;
  /** Allowlisted response headers only (see `SAFE_RESPONSE_HEADERS`). */
  headers: Record<string, string>;
  body?: JsonValue;
};

/** A recorded HTTP response: a JSON body, or (received without asking to stream) SSE events. */
export type HttpRecording = HttpHead & { sse?: SseEvent[] };

/** What an `isComplete` hook of {@link createFetch} sees. */
export interface HttpResponseView {
  status: number;
  headers: Readonly<Record<string, string>>;
  /** The JSON body, for a JSON response. */
  body?: JsonValue;
  /** The events, for an SSE response. */
  events?: readonly SseEvent[];
}

/** Options of {@link createFetch}. */
export interface CreateFetchOptions {
  recorder: Recorder;
  /** The fetch to call upstream. Default: `globalThis.fetch` at call time. */
  fetch?: FetchLike | undefined;
  /** Body fields left out of the identity. Default {@link VOLATILE_BODY_FIELDS}. */
  volatileFields?: readonly string[] | undefined;
  /** Which JSON POSTs to record. Default: those with a conversation field (`messages`, `input`…) in the body. */
  shouldRecord?: ((url: URL, body: Readonly<Record<string, JsonValue>>) => boolean) | undefined;
  /** An extra completeness check, after the built-in one (truncation, in-band errors, unfinished streams). */
  isComplete?: ((response: HttpResponseView) => boolean) | undefined;
  /** Replay streams as fast as possible (default) or with the recorded gaps: the older spelling of `replaySpeed` 0 / 1. */
  timing?: "none" | "recorded" | undefined;
  /**
   * How fast replayed streams come back: 0 = as fast as possible (the
   * default), 1 = as recorded (the time to the first byte and the gaps
   * between chunks), 2 = twice as fast. A finite number ≥ 0, else
   * `InvalidOptionError` (field `replaySpeed`). Entries recorded without
   * timing replay at once.
   */
  replaySpeed?: number | undefined;
  /**
   * The request's origin (scheme, host, port) is part of the identity; map
   * hosts to one name to share recordings between them, e.g. a gateway and
   * the provider behind it: `{ "gw.example": "openai", "api.openai.com": "openai" }`
   * (keys: origin, host or hostname) or `(url) => name | undefined`.
   */
  hostAliases?: HostAliases | undefined;
  /**
   * HTTP error statuses to record and replay, e.g. `[429, 500]` (with their
   * JSON bodies and retry headers), so a test of retry logic replays offline.
   * Default: none. Network failures and truncated streams are never recorded.
   * Use inside `recorder.run`, so each retry is its own occurrence.
   */
  recordErrors?: readonly number[] | undefined;
  /**
   * How a replay miss reaches the caller. `"response"` (default): an HTTP 404
   * in the provider's error shape (OpenAI-style, Anthropic or Gemini, by host
   * and path) whose message is the miss report, with `x-should-retry: false`
   * and `x-invocache-miss: 1`, so the SDK raises its own `NotFoundError`
   * showing the report and does not retry. `"throw"`: the `ReplayMissError`
   * is thrown from `fetch` (the SDKs wrap it in a connection error).
   */
  onMiss?: "response" | "throw" | undefined;
}

/**
 * Create a `fetch` that records and replays model API calls through
 * `recorder`. Identity: `model` from the body; the conversation fields
 * (`messages`, `system`, `input`, `instructions`, `prompt`, `contents`…) as
 * the normalized prompt; every other body field, the URL path and the
 * non-secret query in `params`; role, task, attempt, project root and input
 * artifacts from {@link withInvocation}. Headers never count and are never
 * stored.
 *
 * A replay miss is answered as an HTTP 404 in the provider's error shape,
 * with the miss report as its message (`onMiss`), so the SDK raises its
 * `NotFoundError` (not retried) showing what differs and how to re-record.
 *
 * @example
 * import OpenAI from "openai";
 * const openai = new OpenAI({ fetch: createFetch({ recorder }) });
 * const answer = await withInvocation({ role: "planner", attempt: 0 }, () =>
 *   openai.chat.completions.create({ model: "gpt-5", messages }),
 * );
 */
export function createFetch(options: CreateFetchOptions): typeof globalThis.fetch {
  return createFetchAnswerer(options).fetch;
}

/**
 * A JSON answer (replayed, or just recorded) as its recording, ready to be
 * written to a socket: what `createFetch` would have put in a `Response`.
 */
export interface JsonAnswer {
  /** The recorded status (2xx, or one chosen with `recordErrors`). */
  status: number;
  /** The recorded status text; absent when none was recorded. */
  statusText?: string;
  /** The headers `createFetch`'s Response is built from: the recorded ones, plus `content-type` when none is recorded. */
  headers: Readonly<Record<string, string>>;
  /** The body, byte for byte the text `createFetch`'s Response carries. */
  text: string;
  /** The Response `createFetch` answers with for this recording (built on demand). */
  toResponse(): Response;
}

/** A request body already parsed by the caller of {@link FetchAnswerer.answer}: `JSON.parse(init.body)`. */
export interface ParsedBody {
  /** The parsed body; used only when `init.body` is the string it was parsed from. */
  readonly value: unknown;
}

/** {@link createFetch}'s fetch, and the same call answering JSON as a {@link JsonAnswer}. */
export interface FetchAnswerer {
  /** Exactly what {@link createFetch} returns. */
  fetch: typeof globalThis.fetch;
  /**
   * The same call as `fetch` (same identity, modes, checks and miss
   * answer), but a non-stream JSON answer comes back as a
   * {@link JsonAnswer} instead of a `Response`: a server in front of
   * `createFetch` (`invocache proxy`) writes it to its socket without
   * building a WHATWG Response and reading it back. Streams, misses,
   * pass-through calls and answers not stored come back as a Response.
   * `parsedBody`: a server that has already parsed `init.body` (a string)
   * hands it over as `{ value: JSON.parse(init.body) }`, so the call does
   * not decode and parse it again; everything else is read as `fetch` reads it.
   */
  answer(
    input: string | URL,
    init?: RequestInit,
    parsedBody?: ParsedBody,
  ): Promise<Response | JsonAnswer>;
}

/**
 * {@link createFetch} for servers: its fetch, and `answer`, which hands a
 * JSON answer back as data (see {@link FetchAnswerer}).
 *
 * @example
 * const { answer } = createFetchAnswerer({ recorder });
 * const a = await answer(url, { method: "POST", headers, body });
 * if (a instanceof Response) pipe(a, res); else res.end(a.text);
 */
export function createFetchAnswerer(options: CreateFetchOptions): FetchAnswerer {
  const recorder = requireRecorder(options, "createFetch", "{ recorder, fetch? }");
  if (options.fetch !== undefined && typeof options.fetch !== "function") {
    throw new TypeError("createFetch: options.fetch must be a fetch function");
  }
  const base: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const volatile = new Set(options.volatileFields ?? VOLATILE_BODY_FIELDS);
  const shouldRecord = options.shouldRecord ?? looksLikeModelCall;
  const replaySpeed = resolveReplaySpeed(options.replaySpeed, options.timing, "createFetch");
  const hostAliases = checkHostAliases(options.hostAliases);
  const recordErrors = checkRecordErrors(options.recordErrors);
  const onMiss = checkOnMiss(options.onMiss);
  // An agent loop's bodies, each its predecessor plus new messages: parsed from where it ended.
  const bodies = new BodyChains();
  const admit = (res: Response): HttpHead | Response => admitWith(res, recordErrors);
  const complete = (view: HttpResponseView): boolean =>
    // A chosen error answer is complete as it is: its body is the error.
    (view.status >= 400 && recordErrors.has(view.status)) ||
    ((view.body !== undefined ? isCompleteJsonBody(view.body) : isCompleteSse(view.events ?? [])) &&
      (options.isComplete?.(view) ?? true));

  const call = async (
    input: string | URL | Request,
    init: RequestInit | undefined,
    raw: boolean,
    parsedBody?: ParsedBody,
  ): Promise<Response | JsonAnswer> => {
    const seen = await readJsonPost(input, init, bodies, parsedBody);
    if (seen === undefined || !shouldRecord(seen.url, seen.body)) return base(input, init);
    if (onMiss === "throw") return recorded(seen, input, init, raw);
    try {
      return await recorded(seen, input, init, raw);
    } catch (error) {
      if (error instanceof ReplayMissError) return missResponse(seen.url, error.message);
      throw error;
    }
  };
  const invocacheFetch: FetchLike = (input, init) => call(input, init, false) as Promise<Response>;

  /** A model call: recorded, replayed or (a miss in replay) thrown as ReplayMissError. */
  const recorded = async (
    seen: { url: URL; body: Record<string, JsonValue> },
    input: string | URL | Request,
    init: RequestInit | undefined,
    raw: boolean,
  ): Promise<Response | JsonAnswer> => {
    const [req, callOpts] = invocationCall(
      describeHttpCall(seen.url, seen.body, volatile, hostAliases),
    );
    const userSignal =
      init?.signal ?? (input instanceof Request ? input.signal : undefined) ?? undefined;
    // Our own controller too: cancelling a replayed-live body stops the
    // upstream. Made on first use, and the signals combined only when going
    // upstream: a hit never needs them, and AbortSignal.any costs tens of µs
    // (the SDKs always pass a signal).
    let upstream: AbortController | undefined;
    const upstreamController = () => {
      upstream ??= new AbortController();
      return upstream;
    };
    const live = () => {
      const own = upstreamController().signal;
      const signal = userSignal === undefined ? own : AbortSignal.any([userSignal, own]);
      return base(input instanceof Request ? input.clone() : input, { ...init, signal });
    };
    const opts = { ...callOpts, signal: userSignal };
    // A response that must not be stored (non-2xx not chosen by recordErrors,
    // not JSON/SSE, unparsable) comes back as answerLive(response): the
    // caller gets it, nothing is stored.
    if (!wantsStream(seen.url, seen.body)) {
      const value = await recorder.call<HttpRecording | Response>(
        req,
        () => recordPlain(live, admit),
        {
          ...opts,
          isComplete: (v) => complete(viewOf(v as HttpRecording)),
        },
      );
      if (value instanceof Response) return value;
      const recording = asRecording(value, recordErrors);
      return raw && recording.body !== undefined
        ? jsonAnswer(recording as HttpHead)
        : toResponse(recording);
    }
    const result = await recorder.stream<HttpHead, SseEvent, Response>(
      req,
      () => recordStream(live, admit),
      {
        ...opts,
        replaySpeed,
        isComplete: (v) => complete(streamView(v as RecordedStream<HttpHead, SseEvent>)),
      },
    );
    if ("live" in result) return result.live;
    const head = asHead(result.head, recordErrors);
    if (head.body !== undefined) return raw ? jsonAnswer(head) : toResponse(head);
    return new Response(
      sseBody(result.events, (reason) => upstreamController().abort(reason)),
      init200(head, "text/event-stream"),
    );
  };
  return {
    fetch: invocacheFetch as typeof globalThis.fetch,
    answer: (input, init, parsedBody) => call(input, init, true, parsedBody),
  };
}

function checkOnMiss(value: unknown): "response" | "throw" {
  if (value === undefined || value === "response" || value === "throw") return value ?? "response";
  throw new InvalidOptionError(
    "onMiss",
    `createFetch: onMiss must be "response" (a replay miss answered as an HTTP 404 carrying the miss report, the default) or "throw" (the ReplayMissError thrown from fetch), got ${JSON.stringify(value)}`,
  );
}

/** A live response, read whole: JSON, or SSE that arrived without being asked for. */
async function recordPlain(
  live: () => Promise<Response>,
  admit: (res: Response) => HttpHead | Response,
): Promise<HttpRecording | Live<Response>> {
  const res = await live();
  const head = admit(res);
  if (head instanceof Response) return answerLive(head);
  if (isSse(res)) {
    const sse: SseEvent[] = [];
    if (res.body !== null) for await (const e of sseEvents(res.body)) sse.push(e);
    return { ...head, sse };
  }
  const body = await readJson(res);
  return body instanceof Response ? answerLive(body) : { ...head, body };
}

/** A live response as a head and its events, read as they come. */
async function recordStream(
  live: () => Promise<Response>,
  admit: (res: Response) => HttpHead | Response,
): Promise<{ head: HttpHead; events: AsyncIterable<SseEvent> } | Live<Response>> {
  const res = await live();
  const head = admit(res);
  if (head instanceof Response) return answerLive(head);
  if (isSse(res)) return { head, events: res.body === null ? none() : sseEvents(res.body) };
  const body = await readJson(res);
  if (body instanceof Response) return answerLive(body);
  return { head: { ...head, body }, events: none() };
}

async function* none(): AsyncGenerator<SseEvent> {}

/**
 * The head of a storable response, or the response itself when it must pass
 * through unstored: a non-2xx not chosen by `recordErrors`, or not JSON/SSE.
 */
function admitWith(res: Response, recordErrors: ReadonlySet<number>): HttpHead | Response {
  const chosenError = !res.ok && recordErrors.has(res.status);
  if (!res.ok && !chosenError) return res;
  const json = isJsonType(mediaType(res.headers.get("content-type")));
  // A recorded error answer must be JSON: an error stream is never stored.
  if (chosenError ? !json : !isSse(res) && !json) return res;
  const head: HttpHead = {
    status: res.status,
    headers: chosenError
      ? { ...safeResponseHeaders(res.headers), ...retryHeaders(res.headers) }
      : safeResponseHeaders(res.headers),
  };
  if (res.statusText !== "") head.statusText = res.statusText;
  return head;
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The parsed body, or (says JSON, is not) a copy of the response to hand over unstored. */
async function readJson(res: Response): Promise<JsonValue | Response> {
  // Bytes first, decoded strictly: res.text() would turn invalid UTF-8 into
  // U+FFFD and drop a BOM, and a repaired body must neither be stored nor
  // reach the caller in place of what the server sent.
  const bytes = new Uint8Array(await res.arrayBuffer());
  try {
    return parseProviderJson(STRICT_UTF8.decode(bytes));
  } catch {
    // Says JSON, is not (or is not UTF-8): hand it over byte for byte, never store it.
    const headers = new Headers(res.headers);
    headers.delete("content-encoding");
    headers.delete("content-length");
    return new Response(bytes, { status: res.status, statusText: res.statusText, headers });
  }
}

function isSse(res: Response): boolean {
  return mediaType(res.headers.get("content-type")) === "text/event-stream";
}

function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function isJsonType(type: string): boolean {
  return type === "application/json" || type.endsWith("+json");
}

function viewOf(r: HttpRecording): HttpResponseView {
  return {
    status: r.status,
    headers: r.headers,
    ...(r.body === undefined ? {} : { body: r.body }),
    ...(r.sse === undefined ? {} : { events: r.sse }),
  };
}

function streamView({ head, events }: RecordedStream<HttpHead, SseEvent>): HttpResponseView {
  const { status, headers } = head;
  return head.body === undefined
    ? { status, headers, events: events.map((e) => e.data) }
    : { status, headers, body: head.body };
}

/** Build the Response the SDK reads: same status, kept headers, same body. */
function toResponse(r: HttpRecording): Response {
  if (r.body !== undefined) {
    return new Response(JSON.stringify(r.body), init200(r, "application/json"));
  }
  const events = r.sse ?? [];
  return new Response(
    sseBody(
      (async function* () {
        yield* events;
      })(),
    ),
    init200(r, "text/event-stream"),
  );
}

/** A JSON recording as the data `toResponse` builds its Response from (`head.body` is set). */
function jsonAnswer(head: HttpHead): JsonAnswer {
  const init = init200(head, "application/json");
  const text = JSON.stringify(head.body);
  if (Array.isArray(init.headers) || init.headers instanceof Headers) {
    // Hand-edited header pairs: read as Headers reads them.
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    return { ...answerHead(head), headers, text, toResponse: () => new Response(text, init) };
  }
  return {
    ...answerHead(head),
    headers: init.headers as Record<string, string>,
    text,
    toResponse: () => new Response(text, init),
  };
}

function answerHead(head: HttpHead): { status: number; statusText?: string } {
  return head.statusText === undefined
    ? { status: head.status }
    : { status: head.status, statusText: head.statusText };
}

function init200(head: HttpHead, type: string): ResponseInit {
  // The recorded headers as they are (Response copies them into its own
  // Headers anyway), plus the default type when none is recorded, in any case.
  const recorded = head.headers;
  if (Array.isArray(recorded)) {
    // Pairs (a hand-edited recording): read as Headers reads them.
    const pairs = new Headers(recorded);
    if (!pairs.has("content-type")) pairs.set("content-type", type);
    return withStatus(head, pairs);
  }
  let typed = false;
  for (const name in recorded) {
    if (Object.hasOwn(recorded, name) && name.toLowerCase() === "content-type") typed = true;
  }
  return withStatus(head, typed ? recorded : { ...recorded, "content-type": type });
}

function withStatus(head: HttpHead, headers: NonNullable<ResponseInit["headers"]>): ResponseInit {
  return {
    status: head.status,
    ...(head.statusText === undefined ? {} : { statusText: head.statusText }),
    headers,
  };
}

function asHead(value: unknown, recordErrors: ReadonlySet<number> = new Set()): HttpHead {
  const v = value as Partial<HttpHead> | null;
  if (
    v === null ||
    typeof v !== "object" ||
    typeof v.status !== "number" ||
    ((v.status < 200 || v.status > 299) && !recordErrors.has(v.status)) ||
    v.headers === null ||
    typeof v.headers !== "object"
  ) {
    throw new TypeError(
      "invocache: the recording for this identity is not an HTTP response recorded by createFetch; re-record it with INVOCACHE_MODE=record",
    );
  }
  return v as HttpHead;
}

function asRecording(value: unknown, recordErrors: ReadonlySet<number>): HttpRecording {
  if (isRecordedStream(value)) {
    throw new TypeError(
      "invocache: the recording for this identity is a stream but the request did not ask to stream; re-record it with INVOCACHE_MODE=record",
    );
  }
  const r = asHead(value, recordErrors) as HttpRecording;
  if (r.body === undefined && !Array.isArray(r.sse)) return asHead(undefined);
  return r;
}

/** URL and parsed body of a JSON POST, or undefined for anything to pass through. */
async function readJsonPost(
  input: string | URL | Request,
  init: RequestInit | undefined,
  bodies: BodyChains,
  parsedBody?: ParsedBody,
): Promise<{ url: URL; body: Record<string, JsonValue> } | undefined> {
  const isRequest = typeof Request !== "undefined" && input instanceof Request;
  const method = (init?.method ?? (isRequest ? input.method : "GET")).toUpperCase();
  if (method !== "POST") return undefined;
  let url: URL;
  let contentType: string | null;
  try {
    url = new URL(isRequest ? input.url : String(input));
    const headers = init?.headers ?? (isRequest ? input.headers : undefined);
    // A Headers (what the SDKs pass) is read as it is; anything else through
    // a copy, which also checks it (a malformed one passes through).
    contentType = (headers instanceof Headers ? headers : new Headers(headers)).get("content-type");
  } catch {
    return undefined;
  }
  if (contentType !== null && !isJsonType(mediaType(contentType))) return undefined;
  let body: unknown;
  if (parsedBody !== undefined && typeof init?.body === "string") {
    body = parsedBody.value; // the caller's JSON.parse(init.body): not parsed twice
  } else {
    let text: string | undefined;
    if (init?.body !== undefined && init.body !== null) text = bodyText(init.body);
    else if (isRequest && input.body !== null) text = await input.clone().text();
    if (text === undefined) return undefined;
    try {
      body = bodies.parse(text); // JSON.parse(text), the conversation's earlier messages reused
    } catch {
      return undefined; // malformed: the API will say so; nothing is stored
    }
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  return { url, body: body as Record<string, JsonValue> };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function bodyText(body: NonNullable<RequestInit["body"]>): string | undefined {
  try {
    if (typeof body === "string") return body;
    if (body instanceof ArrayBuffer) return utf8.decode(body);
    if (ArrayBuffer.isView(body)) {
      return utf8.decode(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
    }
  } catch {
    return undefined;
  }
  return undefined; // streams, forms, blobs: not a JSON call we can read without consuming it
}
