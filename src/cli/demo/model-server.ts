/**
 * The demo's simulated model: an OpenAI-compatible chat completions endpoint
 * on a loopback port (127.0.0.1, port chosen by the OS). Deterministic text,
 * realistic latency (150–400 ms, derived from the request so it is
 * repeatable too), no network, no key. It counts the calls it serves: the
 * demo's proof that a replay makes none.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { reply } from "./script.js";

/** A running simulated model. */
export interface SimulatedModel {
  /** `http://127.0.0.1:<port>/v1`: the base URL an OpenAI-compatible client takes. */
  readonly baseUrl: string;
  /** Chat completions served so far. */
  readonly calls: number;
  close(): Promise<void>;
}

/** Options of {@link startSimulatedModel}. */
export interface SimulatedModelOptions {
  /** Latency range in ms, inclusive. Default [150, 400]. */
  latencyMs?: readonly [number, number];
}

/**
 * Start the simulated model.
 *
 * @example
 * const model = await startSimulatedModel();
 * const res = await fetch(`${model.baseUrl}/chat/completions`, { method: "POST", body });
 * await model.close();
 */
export async function startSimulatedModel(
  options: SimulatedModelOptions = {},
): Promise<SimulatedModel> {
  const [lo, hi] = options.latencyMs ?? [150, 400];
  const sockets = new Set<Socket>();
  let calls = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      send(res, 500, { error: { message: String(error), type: "server_error" } });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      return send(res, 404, { error: { message: `no route ${req.method} ${path}` } });
    }
    const raw = Buffer.concat(chunks);
    let body: { model?: unknown; messages?: unknown };
    try {
      body = JSON.parse(raw.toString("utf8")) as typeof body;
    } catch {
      return send(res, 400, { error: { message: "body is not JSON", type: "invalid_request" } });
    }
    const messages = Array.isArray(body.messages)
      ? (body.messages as Array<{ role?: unknown; content?: unknown }>)
      : [];
    const system = messages.find((m) => m.role === "system")?.content;
    const user = messages.filter((m) => m.role === "user").at(-1)?.content;
    const text = reply(String(system ?? ""), String(user ?? ""));
    calls++;
    const digest = createHash("sha256").update(raw).digest();
    await sleep(lo + (digest.readUInt32BE(0) % (hi - lo + 1)));
    const model = typeof body.model === "string" ? body.model : "sim-1";
    send(res, 200, {
      id: `chatcmpl-sim-${digest.toString("hex").slice(0, 24)}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      usage: usageOf(raw.length, text.length),
      system_fingerprint: "fp_sim",
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get calls() {
      return calls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A usage block spelled as OpenAI's chat completions reference shows it
 * (details included). Counts estimate a tokenizer: a token per 4 bytes of
 * the request and per 4 characters of the reply; nothing is cached.
 */
function usageOf(requestBytes: number, replyChars: number) {
  const prompt = Math.ceil(requestBytes / 4);
  const completion = Math.ceil(replyChars / 4);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "x-request-id": `req_sim_${Date.now().toString(36)}`,
  });
  res.end(body);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
