/**
 * docs/proxy.md runs as written: the start command prints the ready line the
 * page shows, and every `sh` block (curl against the proxy, sessions, a
 * replay miss) runs against a real proxy in front of the fake provider.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCli, builtCli } from "../cli/helpers.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";
import { docBlocks, ROOT } from "../helpers/doc-blocks.js";
import { tempDir } from "../helpers/tmp.js";

const doc = readFileSync(join(ROOT, "docs", "proxy.md"), "utf8");
const blocks = docBlocks(doc);
const DOC_URL = "http://127.0.0.1:8787";

let provider: FakeProvider;
let child: ChildProcess;
let url: string;
let readyLine: string;

beforeAll(async () => {
  await buildCli();
  provider = await startFakeProvider();
  // The page's start command, on a free port, in front of the fake provider.
  const start = blocks.find((b) => b.heading === "Start it" && b.lang === "text")!;
  const args = start.body.split("\n")[0]!.trim().split(/\s+/).slice(1);
  const port = args.indexOf("--port");
  args[port + 1] = "0";
  const store = args.indexOf("--store");
  args[store + 1] = `sqlite://${join(tempDir("proxy-doc"), "cache.sqlite")}`;
  args.push("--upstream", `openai=${provider.url}`);
  child = spawn(process.execPath, [builtCli(), ...args], {
    env: { ...process.env, INVOCACHE_MODE: "", CI: "" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  readyLine = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d.toString();
      if (out.includes("\n")) resolve(out.split("\n")[0]!);
    });
    child.once("exit", (code) => reject(new Error(`proxy exited ${code}`)));
  });
  url = /http:\/\/127\.0\.0\.1:\d+/.exec(readyLine)![0];
}, 180_000);

afterAll(async () => {
  child?.kill("SIGTERM");
  await provider?.close();
});

describe("docs/proxy.md", () => {
  it("prints the ready line the page shows", () => {
    const shown = blocks.find((b) => b.heading === "Start it")!.body.split("\n")[1]!;
    const pattern = shown
      .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      .replace("8787", "\\d+")
      .replace("sqlite:///app/\\.invocache/cache\\.sqlite", "sqlite://\\S+");
    expect(readyLine).toMatch(new RegExp(`^${pattern}$`));
  });

  const sh = blocks.filter((b) => b.lang === "sh");
  it("has shell blocks to run", () => {
    expect(sh.length).toBeGreaterThanOrEqual(3);
  });
  for (const block of sh) {
    it(`runs the sh block of "${block.heading}" (line ${block.line})`, async () => {
      const script = block.body.replaceAll(DOC_URL, url);
      // Asynchronously: the fake provider answers from this process's event loop.
      const r = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          "bash",
          ["-e", "-o", "pipefail", "-c", script],
          { encoding: "utf8", env: { ...process.env, OPENAI_API_KEY: "sk-doc-test" } },
          (error, stdout, stderr) =>
            resolve({ status: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
        ),
      );
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      if (block.heading === "Modes and misses") expect(r.stdout.trim()).toBe("404");
    });
  }
});
