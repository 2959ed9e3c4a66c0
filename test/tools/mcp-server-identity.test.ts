/**
 * Issue 29 §2: two MCP servers that report the same name must not share
 * entries. Two real stdio servers (built with the official SDK) on
 * different roots both call themselves "filesystem"; without a `server`
 * option, B's read of README.md must reach B, never be served A's file.
 * A transport that cannot tell servers apart (in-memory) needs `server`,
 * with an error that says so.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { createRecorder } from "../../src/index.js";
import { McpServerIdentityError, wrapMcpClient } from "../../src/tools/mcp.js";
import { tempDir } from "../helpers/tmp.js";
import { inMemoryClient, newClient, newCounter } from "./helpers.js";

const FS_SERVER = fileURLToPath(new URL("./fixtures/fs-server.ts", import.meta.url));
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function fsClient(root: string, counter: string) {
  const client = newClient();
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", FS_SERVER, root],
      env: { ...(process.env as Record<string, string>), MCP_COUNTER_FILE: counter },
      stderr: "pipe",
    }),
  );
  closers.push(() => client.close());
  return client;
}

const text = (answer: unknown) => (answer as { content: Array<{ text: string }> }).content[0]?.text;

describe("MCP servers that report the same name", () => {
  it("are told apart by their transport: B's read reaches B", async () => {
    const dir = tempDir("mcp-same-name");
    const [a, b] = [join(dir, "a"), join(dir, "b")];
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, "README.md"), "server A\n");
    writeFileSync(join(b, "README.md"), "server B\n");
    const counter = join(dir, "counter.txt");
    const recorder = createRecorder({
      store: `sqlite://${join(dir, "cache.sqlite")}`,
      mode: "auto",
    });
    closers.push(() => recorder.close());

    const clientA = wrapMcpClient(await fsClient(a, counter), { recorder });
    const clientB = wrapMcpClient(await fsClient(b, counter), { recorder });
    expect(text(await clientA.callTool({ name: "read", arguments: { path: "README.md" } }))).toBe(
      "server A\n",
    );
    expect(text(await clientB.callTool({ name: "read", arguments: { path: "README.md" } }))).toBe(
      "server B\n",
    );
    const reads = readFileSync(counter, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("read "));
    expect(reads).toEqual([`read ${a}`, `read ${b}`]);
  });

  it("an in-memory transport needs { server }: a typed error names the option", async () => {
    const recorder = createRecorder({ store: "memory://", mode: "auto" });
    closers.push(() => recorder.close());
    const live = await inMemoryClient(newCounter());
    closers.push(() => live.close());
    const wrapped = wrapMcpClient(live.client, { recorder });
    const error = await wrapped.callTool({ name: "add", arguments: { a: 1, b: 2 } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpServerIdentityError);
    expect(String((error as Error).message)).toContain("server");
  });
});
