/**
 * The Python `openai` client through `invocache proxy` (replay) beside the
 * same client against a constant local server answering every call with one
 * prebuilt response (the floor: nothing replays faster than the client's own
 * round trip). Same workload: N distinct calls with ~4 KiB prompts, every
 * answer checked.
 *
 *   INVOCACHE_PYTHON=.venv/bin/python node --import tsx bench/python/run.ts [--calls 300]
 *
 * Needs `npm run build` (the proxy runs from dist/cli/main.js) and a python
 * with `openai` installed. Prints a table and one JSON line. A measurement
 * only when nothing else runs on the machine.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const CLI = resolve(HERE, "../../dist/cli/main.js");
const CLIENT = join(HERE, "openai_client.py");
const PROMPT_BYTES = 4 * 1024;

export interface PythonClientResult {
  calls: number;
  /** calls/s of the client against the constant server. */
  constant: number;
  /** calls/s of the client recording through the proxy (upstream: a local echo server). */
  record: number;
  /** calls/s of the client replaying through the proxy. */
  replay: number;
  /** replay / constant. */
  ratio: number;
}

function chat(content: string): string {
  return JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1700000000,
    model: "gpt-bench",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1000, completion_tokens: 4, total_tokens: 1004 },
  });
}

/** A server on 127.0.0.1: `constant` answers one prebuilt body, `echo` answers "answer to call #i". */
async function server(kind: "constant" | "echo"): Promise<{ url: string; server: Server }> {
  const prebuilt = Buffer.from(chat("constant answer"));
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body = prebuilt;
      if (kind === "echo") {
        const text = Buffer.concat(chunks).toString("utf8");
        const n = /call #(\d+)/.exec(text)?.[1] ?? "?";
        body = Buffer.from(chat(`answer to call #${n}`));
      }
      res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
      res.end(body);
    });
  });
  await new Promise<void>((done) => s.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, server: s };
}

function run(
  command: string,
  args: readonly string[],
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(command, args);
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString("utf8");
    });
    child.on("close", (code) => done({ code, out, err }));
  });
}

async function client(
  python: string,
  baseUrl: string,
  calls: number,
  expect: "echo" | "constant",
): Promise<number> {
  const r = await run(python, [CLIENT, baseUrl, String(calls), String(PROMPT_BYTES), expect]);
  if (r.code !== 0) throw new Error(`python client failed (${r.code}): ${r.err}${r.out}`);
  const result = JSON.parse(r.out.trim().split("\n").pop() ?? "{}") as {
    calls: number;
    steady_ms: number;
  };
  return (result.calls - 1) / (result.steady_ms / 1e3);
}

async function proxy(args: readonly string[]): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [CLI, "proxy", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const url = await new Promise<string>((done, fail) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m !== null) done(m[0]);
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString("utf8");
    });
    child.once("exit", (code) => fail(new Error(`proxy exited ${code}: ${out}`)));
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Record N calls through the proxy, replay them, and run the same client against the constant server. */
export async function pythonClientBench(
  python: string,
  calls: number,
): Promise<PythonClientResult> {
  const dir = mkdtempSync(join(tmpdir(), "invocache-bench-python-"));
  const constant = await server("constant");
  const echo = await server("echo");
  try {
    const store = `sqlite://${join(dir, "cache.sqlite")}`;
    const recording = await proxy([
      "--store",
      store,
      "--mode",
      "auto",
      "--upstream",
      `openai=${echo.url}`,
    ]);
    const record = await client(python, `${recording.url}/openai/v1`, calls, "echo");
    await recording.stop();
    echo.server.close();
    const replaying = await proxy([
      "--store",
      store,
      "--mode",
      "replay",
      "--upstream",
      `openai=${echo.url}`,
    ]);
    const replay = await client(python, `${replaying.url}/openai/v1`, calls, "echo");
    await replaying.stop();
    const floor = await client(python, `${constant.url}/v1`, calls, "constant");
    return { calls, constant: floor, record, replay, ratio: replay / floor };
  } finally {
    constant.server.close();
    echo.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const python = process.env.INVOCACHE_PYTHON ?? "python3";
  const i = process.argv.indexOf("--calls");
  const calls = i > 0 ? Number(process.argv[i + 1]) : 300;
  const r = await pythonClientBench(python, calls);
  const f = (n: number) => n.toFixed(0).padStart(6);
  console.log(`Python openai client, ${calls} distinct calls, ${PROMPT_BYTES}-byte prompts`);
  console.log(`  constant server        ${f(r.constant)} calls/s`);
  console.log(
    `  invocache proxy replay ${f(r.replay)} calls/s  (${r.ratio.toFixed(2)}x the constant server)`,
  );
  console.log(`  invocache proxy record ${f(r.record)} calls/s  (upstream: a local echo server)`);
  console.log(JSON.stringify(r));
}
