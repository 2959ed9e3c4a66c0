/**
 * `invocache proxy` as a real child process: one ready line with the
 * address, a clean drain on SIGTERM (an in-flight stream finishes and its
 * recording is on disk), a second signal mid-drain does not kill it, exit 0;
 * bad flags are usage errors.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildCli, builtCli } from "../cli/helpers.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";
import { tempDir } from "../helpers/tmp.js";

beforeAll(async () => {
  await buildCli();
}, 180_000);

const children: ChildProcess[] = [];
let provider: FakeProvider | undefined;
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  await provider?.close();
});

interface Started {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, [builtCli(), "proxy", ...args], {
    env: { ...process.env, INVOCACHE_MODE: "", CI: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stderr?.on("data", (d) => {
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d) => {
      out += d.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out)?.[0];
      if (url !== undefined && out.includes("\n")) {
        resolve({ child, url, stderr: () => err, exited });
      }
    });
    void exited.then(({ code }) => reject(new Error(`proxy exited ${code}: ${err}`)));
  });
}

describe("invocache proxy (CLI)", () => {
  it("prints one ready line, drains an in-flight stream on SIGTERM (twice), exits 0, and the recording is on disk", async () => {
    provider = await startFakeProvider({ chunkDelayMs: 60 });
    const store = `sqlite://${join(tempDir("proxy-cli"), "cache.sqlite")}`;
    const p = await start([
      "--store",
      store,
      "--mode",
      "auto",
      "--upstream",
      `openai=${provider.url}`,
    ]);
    const body = JSON.stringify({
      model: "gpt-fake",
      stream: true,
      messages: [{ role: "user", content: "a long streamed answer please" }],
    });
    const res = await fetch(`${p.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
      body,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    // Mid-stream: stop, then stop again while draining.
    p.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 50));
    p.child.kill("SIGTERM");
    let text = new TextDecoder().decode(first.value);
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      text += new TextDecoder().decode(next.value);
    }
    expect(text).toContain("[DONE]");
    const { code, signal } = await p.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(p.stderr()).toContain("stopping");

    // The acknowledged recording is on disk: a replay proxy serves it with the provider gone.
    // (Same upstream URL: the origin is part of the identity.)
    const upstream = provider.url;
    await provider.close();
    provider = undefined;
    const again = await start([
      "--store",
      store,
      "--mode",
      "replay",
      "--upstream",
      `openai=${upstream}`,
    ]);
    const replayed = await fetch(`${again.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(replayed.status).toBe(200);
    expect(await replayed.text()).toContain("[DONE]");
    again.child.kill("SIGINT");
    expect((await again.exited).code).toBe(0);
  }, 60_000);

  it("refuses a public bind without --token, and bad flags, as usage errors (exit 2)", () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [builtCli(), "proxy", ...args], { encoding: "utf8" });
    const open = run("--host", "0.0.0.0", "--store", "memory://");
    expect(open.status).toBe(2);
    expect(open.stderr).toContain("--token");
    expect(run("--mode", "sometimes", "--store", "memory://").status).toBe(2);
    expect(run("--upstream", "nourl", "--store", "memory://").status).toBe(2);
    expect(run("--replay-speed", "-1", "--store", "memory://").status).toBe(2);
    const help = run("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("--upstream NAME=URL");
  });
});
