/**
 * A fake model vendor on node:http over 127.0.0.1 (port 0): OpenAI chat
 * completions, the OpenAI Responses API, Anthropic messages and Gemini
 * generateContent, each streamed (SSE) or not. Usage blocks are spelled as
 * the providers' API references show them (cache and reasoning details
 * included), with fixed input counts and one output token per word. Deterministic, and every answer carries a counter
 * (`reply #n`), so a replayed answer is told apart from a live one.
 *
 * It counts the calls it receives, records their method, path, headers and
 * body, and can be told to answer the next calls with faults: a 500, a 429
 * (with `retry-after-ms`), a truncated answer, a stream that breaks midway or
 * ends early. Used by test/adapters and by the examples (standalone).
 *
 * @example
 * const provider = await startFakeProvider();
 * const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${provider.url}/v1` });
 * provider.fail("rate-limit"); // the next call gets a 429
 * await provider.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A scripted answer for one upcoming call. */
export type Fault =
  /** 500 with a JSON error body. */
  | "error"
  /** 429 with `retry-after-ms: 5` and a JSON error body. */
  | "rate-limit"
  /** A complete-looking answer cut by the token limit: `finish_reason: "length"`, `stop_reason: "max_tokens"`, `status: "incomplete"`. */
  | "truncate"
  /** Streams: send half the events, then destroy the connection. */
  | "drop"
  /** Streams: send half the events, then end the response cleanly (no final event). */
  | "cut"
  /** Streams: send half the events, then an in-band error event (HTTP status stays 200). Plain calls: like "error". */
  | "in-band-error";

/** A request the provider received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  /** Lowercase names. */
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** A running fake provider. */
export interface FakeProvider {
  /** `http://127.0.0.1:<port>` (append `/v1` for an SDK base URL). */
  readonly url: string;
  /** Model calls received so far (every POST to a known endpoint). */
  readonly calls: number;
  readonly requests: readonly ReceivedRequest[];
  /** Answer the next calls with these faults, one each, in order. */
  fail(...faults: Fault[]): void;
  /** Stop listening and drop open connections. */
  close(): Promise<void>;
}

export interface FakeProviderOptions {
  /** Delay between streamed events, ms. Default 0. */
  chunkDelayMs?: number;
}

/** Start a fake provider on 127.0.0.1, on a port the OS picks. */
export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const requests: ReceivedRequest[] = [];
  const faults: Fault[] = [];
  const sockets = new Set<Socket>();
  let calls = 0;
  const chunkDelayMs = options.chunkDelayMs ?? 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(error), type: "server_error" } }));
      } else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: unknown;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.push({ method: req.method ?? "GET", path, headers: { ...req.headers }, body });
    const api = apiOf(req.method, path);
    if (api === undefined) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
      return;
    }
    const n = ++calls;
    const fault = faults.shift();
    const b = (body ?? {}) as Record<string, unknown>;
    const common = {
      "x-request-id": `req_fake_${n}`,
      "request-id": `req_fake_${n}`,
      // Must never be recorded: a session cookie and an account id.
      "set-cookie": `__session=cookie-secret-${n}; Path=/; HttpOnly`,
      "openai-organization": "org-fake-secret",
      "x-ratelimit-remaining-requests": String(1000 - n),
    };
    if (
      fault === "error" ||
      fault === "rate-limit" ||
      (fault === "in-band-error" && b.stream !== true)
    ) {
      const status = fault === "rate-limit" ? 429 : 500;
      const message = status === 500 ? "the fake provider failed" : "rate limited";
      res.writeHead(status, {
        ...common,
        "content-type": "application/json",
        ...(status === 429 ? { "retry-after-ms": "5", "retry-after": "0" } : {}),
      });
      res.end(
        JSON.stringify(
          api === "anthropic"
            ? {
                type: "error",
                error: { type: status === 429 ? "rate_limit_error" : "api_error", message },
              }
            : { error: { message, type: status === 429 ? "rate_limit_exceeded" : "server_error" } },
        ),
      );
      return;
    }
    const model =
      api === "gemini"
        ? (/\/models\/([^/:]+):/.exec(path)?.[1] ?? "fake-model")
        : typeof b.model === "string"
          ? b.model
          : "fake-model";
    const text_ = `reply #${n} from ${model} to: ${lastUserText(b)}`;
    const truncated = fault === "truncate";
    if (b.stream === true || (api === "gemini" && path.endsWith(":streamGenerateContent"))) {
      const events = streamEvents(api, n, model, text_, truncated, b);
      res.writeHead(200, {
        ...common,
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
      });
      const half = fault === "drop" || fault === "cut" || fault === "in-band-error";
      const upTo = half ? Math.floor(events.length / 2) : events.length;
      for (let i = 0; i < upTo; i++) {
        res.write(events[i]);
        if (chunkDelayMs > 0) await new Promise((r) => setTimeout(r, chunkDelayMs));
      }
      if (fault === "in-band-error") res.write(inBandError(api));
      if (fault === "drop") {
        res.socket?.destroy();
        return;
      }
      res.end();
      return;
    }
    res.writeHead(200, { ...common, "content-type": "application/json" });
    res.end(JSON.stringify(completion(api, n, model, text_, truncated)));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get calls() {
      return calls;
    },
    requests,
    fail(...more: Fault[]) {
      faults.push(...more);
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Api = "chat" | "responses" | "anthropic" | "gemini";

function apiOf(method: string | undefined, path: string): Api | undefined {
  if (method !== "POST") return undefined;
  if (path.endsWith("/chat/completions")) return "chat";
  if (path.endsWith("/responses")) return "responses";
  if (path.endsWith("/messages")) return "anthropic";
  if (/:(stream)?generateContent$/i.test(path)) return "gemini";
  return undefined;
}

/** The text of the last user turn, whatever the API's shape. */
function lastUserText(b: Record<string, unknown>): string {
  const flatten = (content: unknown): string => {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content
        .map((p) => (typeof p === "string" ? p : ((p as { text?: unknown }).text ?? "")))
        .join(" ");
    }
    return "";
  };
  if (typeof b.input === "string") return b.input;
  if (Array.isArray(b.contents)) {
    const turns = b.contents as { role?: string; parts?: unknown }[];
    const last = [...turns].reverse().find((m) => m.role === undefined || m.role === "user");
    return flatten(last?.parts).slice(0, 80);
  }
  const turns = (
    Array.isArray(b.messages) ? b.messages : Array.isArray(b.input) ? b.input : []
  ) as {
    role?: string;
    content?: unknown;
  }[];
  const last = [...turns].reverse().find((m) => m.role === "user");
  return flatten(last?.content).slice(0, 80);
}

const CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

/** Input tokens the fake reports for every request (fixed, so tests can count). */
export const FAKE_INPUT_TOKENS = 10;

function usage(api: Api, text: string) {
  const out = text.split(" ").length;
  const input = FAKE_INPUT_TOKENS;
  if (api === "anthropic") {
    return {
      input_tokens: input,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: out,
      service_tier: "standard",
    };
  }
  if (api === "responses") {
    return {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: out,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + out,
    };
  }
  if (api === "gemini") {
    return {
      promptTokenCount: input,
      candidatesTokenCount: out,
      totalTokenCount: input + out,
      promptTokensDetails: [{ modality: "TEXT", tokenCount: input }],
    };
  }
  return {
    prompt_tokens: input,
    completion_tokens: out,
    total_tokens: input + out,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function geminiResponse(n: number, model: string, text: string, finish: string | null, u: unknown) {
  return {
    candidates: [
      {
        content: { parts: [{ text }], role: "model" },
        ...(finish === null ? {} : { finishReason: finish }),
        index: 0,
      },
    ],
    usageMetadata: u,
    modelVersion: model,
    responseId: `fake-gemini-${n}`,
  };
}

function responseObject(n: number, model: string, text: string, status: string) {
  return {
    id: `resp_fake_${n}`,
    object: "response",
    created_at: CREATED + n,
    status,
    error: null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: null,
    model,
    output:
      text === ""
        ? []
        : [
            {
              type: "message",
              id: `msg_fake_${n}`,
              status: status === "completed" ? "completed" : "incomplete",
              role: "assistant",
              content: [{ type: "output_text", text, annotations: [] }],
            },
          ],
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: text === "" ? null : usage("responses", text),
  };
}

function completion(api: Api, n: number, model: string, text: string, truncated: boolean) {
  switch (api) {
    case "chat":
      return {
        id: `chatcmpl-fake-${n}`,
        object: "chat.completion",
        created: CREATED + n,
        model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: text, refusal: null },
            logprobs: null,
            finish_reason: truncated ? "length" : "stop",
          },
        ],
        usage: usage(api, text),
      };
    case "responses":
      return responseObject(n, model, text, truncated ? "incomplete" : "completed");
    case "anthropic":
      return {
        id: `msg_fake_${n}`,
        type: "message",
        role: "assistant",
        model,
        content: [{ type: "text", text }],
        stop_reason: truncated ? "max_tokens" : "end_turn",
        stop_sequence: null,
        usage: usage(api, text),
      };
    case "gemini":
      return geminiResponse(n, model, text, truncated ? "MAX_TOKENS" : "STOP", usage(api, text));
  }
}

/** A mid-stream error event, as each API sends one (HTTP status already 200). */
function inBandError(api: Api): string {
  switch (api) {
    case "chat":
      return `data: ${JSON.stringify({ error: { message: "overloaded", type: "server_error" } })}\n\n`;
    case "responses":
      return `event: error\ndata: ${JSON.stringify({ type: "error", code: "server_error", message: "overloaded", param: null, sequence_number: 99 })}\n\n`;
    case "anthropic":
      return `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`;
    case "gemini":
      return `data: ${JSON.stringify({ error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } })}\n\n`;
  }
}

/** The SSE blocks of a streamed answer, as the real APIs spell them. */
function streamEvents(
  api: Api,
  n: number,
  model: string,
  text: string,
  truncated: boolean,
  b: Record<string, unknown>,
): string[] {
  const words = text.split(/(?<= )/); // keep the spaces with the words
  const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
  const named = (type: string, v: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...v })}\n\n`;
  switch (api) {
    case "chat": {
      const base = {
        id: `chatcmpl-fake-${n}`,
        object: "chat.completion.chunk",
        created: CREATED + n,
        model,
      };
      const out = [
        data({
          ...base,
          choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
        }),
        ...words.map((w) =>
          data({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] }),
        ),
        data({
          ...base,
          choices: [{ index: 0, delta: {}, finish_reason: truncated ? "length" : "stop" }],
        }),
      ];
      const opts = b.stream_options as { include_usage?: boolean } | undefined;
      if (opts?.include_usage) out.push(data({ ...base, choices: [], usage: usage(api, text) }));
      out.push("data: [DONE]\n\n");
      return out;
    }
    case "responses": {
      let seq = 0;
      const ev = (type: string, v: Record<string, unknown>) =>
        named(type, { sequence_number: seq++, ...v });
      const item = {
        type: "message",
        id: `msg_fake_${n}`,
        status: "in_progress",
        role: "assistant",
        content: [],
      };
      const final = responseObject(n, model, text, truncated ? "incomplete" : "completed");
      return [
        ev("response.created", { response: responseObject(n, model, "", "in_progress") }),
        ev("response.in_progress", { response: responseObject(n, model, "", "in_progress") }),
        ev("response.output_item.added", { output_index: 0, item }),
        ev("response.content_part.added", {
          item_id: item.id,
          output_index: 0,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [] },
        }),
        ...words.map((w) =>
          ev("response.output_text.delta", {
            item_id: item.id,
            output_index: 0,
            content_index: 0,
            delta: w,
          }),
        ),
        ev("response.output_text.done", {
          item_id: item.id,
          output_index: 0,
          content_index: 0,
          text,
        }),
        ev("response.content_part.done", {
          item_id: item.id,
          output_index: 0,
          content_index: 0,
          part: { type: "output_text", text, annotations: [] },
        }),
        ev("response.output_item.done", { output_index: 0, item: final.output[0] }),
        ev(truncated ? "response.incomplete" : "response.completed", { response: final }),
      ];
    }
    case "anthropic": {
      const message = {
        id: `msg_fake_${n}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: FAKE_INPUT_TOKENS,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
          output_tokens: 1,
          service_tier: "standard",
        },
      };
      return [
        named("message_start", { message }),
        named("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        named("ping", {}),
        ...words.map((w) =>
          named("content_block_delta", { index: 0, delta: { type: "text_delta", text: w } }),
        ),
        named("content_block_stop", { index: 0 }),
        named("message_delta", {
          delta: { stop_reason: truncated ? "max_tokens" : "end_turn", stop_sequence: null },
          usage: { output_tokens: words.length },
        }),
        named("message_stop", {}),
      ];
    }
    case "gemini": {
      // Every chunk carries the usage so far; the last one has the totals and the finish reason.
      const out: string[] = [];
      words.forEach((w, i) => {
        const last = i === words.length - 1;
        const count = i + 1;
        out.push(
          data(
            geminiResponse(n, model, w, last ? (truncated ? "MAX_TOKENS" : "STOP") : null, {
              promptTokenCount: FAKE_INPUT_TOKENS,
              ...(last ? { candidatesTokenCount: count } : {}),
              totalTokenCount: FAKE_INPUT_TOKENS + (last ? count : 0),
              promptTokensDetails: [{ modality: "TEXT", tokenCount: FAKE_INPUT_TOKENS }],
            }),
          ),
        );
      });
      return out;
    }
  }
}
