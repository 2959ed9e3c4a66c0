/** Shared bits of the tool tests: real MCP clients over each transport. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { buildServer, type Counter } from "./fixtures/mcp-server.js";

export const SERVER_SCRIPT = fileURLToPath(new URL("./fixtures/mcp-server.ts", import.meta.url));

export function newCounter(): Counter {
  return { executions: 0, byTool: {} };
}

export function newClient(): Client {
  return new Client({ name: "invocache-test", version: "1.0.0" });
}

/** A client connected to an in-process server over the in-memory transport. */
export async function inMemoryClient(
  counter: Counter,
): Promise<{ client: Client; close: () => Promise<void> }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = buildServer(counter);
  await server.connect(serverSide);
  const client = newClient();
  await client.connect(clientSide);
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** A client connected to a child-process server over stdio. */
export async function stdioClient(
  counterFile: string,
): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", SERVER_SCRIPT, "stdio"],
    env: { ...(process.env as Record<string, string>), MCP_COUNTER_FILE: counterFile },
    stderr: "pipe",
  });
  const client = newClient();
  await client.connect(transport);
  return { client, transport };
}

export async function httpClient(url: URL): Promise<Client> {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

export function countLines(file: string): number {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}
