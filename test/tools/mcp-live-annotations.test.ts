/**
 * Issue 29 §4: the side-effect rule of an MCP tool is decided from the
 * server's live tools/list whenever the server is reachable, never from a
 * recorded one. A real stdio server (built with the official SDK) first
 * annotates `touch` read-only, so on a shared SQLite store in `auto` mode
 * its call is cached; the server is then re-annotated destructive, and the
 * same call on the same store must run live, not be served from the store.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { createRecorder } from "../../src/index.js";
import { wrapMcpClient } from "../../src/tools/mcp.js";
import { tempDir } from "../helpers/tmp.js";
import { newClient } from "./helpers.js";

const FS_SERVER = fileURLToPath(new URL("./fixtures/fs-server.ts", import.meta.url));
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function session(dir: string, store: string, counter: string, annotation: string) {
  const client = newClient();
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", FS_SERVER, dir],
      env: {
        ...(process.env as Record<string, string>),
        MCP_COUNTER_FILE: counter,
        FS_TOUCH_ANNOTATION: annotation,
      },
      stderr: "pipe",
    }),
  );
  const recorder = createRecorder({ store, mode: "auto" });
  closers.push(async () => {
    await client.close();
    await recorder.close();
  });
  return wrapMcpClient(client, { recorder, server: "fs" });
}

const touches = (counter: string) =>
  readFileSync(counter, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("touch ")).length;

describe("MCP annotations come from the live server", () => {
  it("a tool re-annotated destructive runs live, though a recorded list said read-only", async () => {
    const dir = tempDir("mcp-annotations");
    const store = `sqlite://${join(dir, "cache.sqlite")}`;
    const counter = join(dir, "counter.txt");

    const before = await session(dir, store, counter, "readonly");
    await before.callTool({ name: "touch", arguments: { name: "a.txt" } });
    await before.callTool({ name: "touch", arguments: { name: "a.txt" } });
    expect(touches(counter)).toBe(1); // read-only: the second call was a hit

    const after = await session(dir, store, counter, "destructive");
    await after.callTool({ name: "touch", arguments: { name: "a.txt" } });
    expect(touches(counter)).toBe(2); // destructive now: never served from the store
  });
});
