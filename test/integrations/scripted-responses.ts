/**
 * A scripted OpenAI Responses API on 127.0.0.1 (port 0) for agent loops: it
 * hands off when offered a `transfer_to_*` tool, calls `lookup_order` once
 * when offered it, then answers with the tool's output. Deterministic, with
 * a counter in every answer (`reply #n`) so a replay is told from a live
 * call. It also accepts trace uploads (`/v1/traces/ingest`), counted apart.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ScriptedResponses {
  readonly url: string;
  /** Model calls (`POST …/responses`) answered so far. */
  readonly calls: number;
  /** Trace upload requests received. */
  readonly traces: number;
  /** The bodies of the model calls, in order. */
  readonly bodies: readonly Record<string, unknown>[];
  /** Answer the next model calls with a 429 (`retry-after-ms: 1`), one each. */
  rateLimit(times: number): void;
  close(): Promise<void>;
}

interface Item {
  type?: string;
  role?: string;
  name?: string;
  call_id?: string;
  output?: unknown;
  content?: unknown;
}

export async function startScriptedResponses(): Promise<ScriptedResponses> {
  let calls = 0;
  let traces = 0;
  let limited = 0;
  const bodies: Record<string, unknown>[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path.endsWith("/traces/ingest")) {
      traces++;
      res.writeHead(204).end();
      return;
    }
    if (req.method !== "POST" || !path.endsWith("/responses")) {
      res.writeHead(404, { "content-type": "application/json" }).end("{}");
      return;
    }
    if (limited > 0) {
      limited--;
      res
        .writeHead(429, { "content-type": "application/json", "retry-after-ms": "1" })
        .end(JSON.stringify({ error: { message: "rate limited", type: "rate_limit_exceeded" } }));
      return;
    }
    const n = ++calls;
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    bodies.push(body);
    res.writeHead(200, { "content-type": "application/json", "x-request-id": `req_${n}` });
    res.end(JSON.stringify(answer(n, body)));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get calls() {
      return calls;
    },
    get traces() {
      return traces;
    },
    bodies,
    rateLimit(times) {
      limited += times;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answer(n: number, body: Record<string, unknown>) {
  const tools = ((body.tools ?? []) as { name?: string }[]).map((t) => t.name ?? "");
  const input = (Array.isArray(body.input) ? body.input : []) as Item[];
  const answered = new Set(
    input.filter((i) => i.type === "function_call_output").map((i) => i.call_id),
  );
  const model = typeof body.model === "string" ? body.model : "fake-model";
  const handoff = tools.find((t) => t.startsWith("transfer_to_"));
  if (handoff !== undefined && !answered.has("call_handoff")) {
    return response(n, model, functionCall(n, handoff, "call_handoff", {}));
  }
  if (tools.includes("lookup_order") && !answered.has("call_lookup")) {
    return response(n, model, functionCall(n, "lookup_order", "call_lookup", { order: "42" }));
  }
  const output = input.find(
    (i) => i.call_id === "call_lookup" && i.type === "function_call_output",
  );
  const text = `reply #${n}: ${String(output?.output ?? "no tool output")}`;
  return response(n, model, {
    type: "message",
    id: `msg_${n}`,
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [] }],
  });
}

function functionCall(n: number, name: string, callId: string, args: unknown) {
  return {
    type: "function_call",
    id: `fc_${n}`,
    call_id: callId,
    name,
    arguments: JSON.stringify(args),
    status: "completed",
  };
}

function response(n: number, model: string, item: unknown) {
  return {
    id: `resp_${n}`,
    object: "response",
    created_at: 1_767_225_600 + n,
    status: "completed",
    error: null,
    incomplete_details: null,
    model,
    output: [item],
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    },
  };
}
