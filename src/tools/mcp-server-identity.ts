/**
 * Which MCP server a call went to, for its identity (issue 29 §2). A server's
 * reported name is not enough: every filesystem server says "filesystem",
 * whatever root it serves, and two of them must never share entries. So a
 * connected client is identified by its name *and* its transport: the
 * command and arguments of a stdio server (the roots in them normalized by
 * the tool recipe, so the same server on another checkout is the same
 * server), or the URL of an HTTP/SSE server. A transport that cannot tell
 * servers apart (in-memory, a custom one) requires the `server` option.
 *
 * The MCP SDK keeps a transport's parameters in fields it does not export
 * (`_serverParams`, `_url`); they are read here, in one place, and a missing
 * field falls back to asking the user for `server` rather than guessing.
 */
import { InvocacheError } from "../errors.js";

/** The server's identity cannot be told from the client: pass `server`. */
export class McpServerIdentityError extends InvocacheError {
  constructor(message: string) {
    super("ERR_MCP_SERVER_IDENTITY", message);
  }
}

interface ConnectedLike {
  getServerVersion(): { name: string } | undefined;
  readonly transport?: unknown;
}

/** `name (transport)` for a connected client; the explicit `server` when given. */
export function mcpServerIdentity(client: ConnectedLike, explicit: string | undefined): string {
  if (explicit !== undefined) return explicit;
  const name = client.getServerVersion()?.name;
  if (typeof name !== "string" || name === "") {
    throw new McpServerIdentityError(
      'wrapMcpClient: the client is not connected, and the server is part of each call\'s identity: pass { server: "name" } (the same string when recording) to replay without connecting',
    );
  }
  const where = transportOf(client.transport);
  if (where === undefined) {
    throw new McpServerIdentityError(
      `wrapMcpClient: the server "${name}" is reached through a transport that cannot tell it from another server reporting the same name: pass { server: "a stable name" } to wrapMcpClient`,
    );
  }
  return `${name} (${where})`;
}

function transportOf(transport: unknown): string | undefined {
  if (transport === null || typeof transport !== "object") return undefined;
  const t = transport as { _serverParams?: unknown; _url?: unknown };
  const params = t._serverParams as { command?: unknown; args?: unknown } | undefined;
  if (params !== undefined && typeof params?.command === "string") {
    const args = Array.isArray(params.args) ? params.args.map(String) : [];
    return `stdio: ${[params.command, ...args].join(" ")}`;
  }
  if (t._url instanceof URL) {
    // Credentials and query strings are not the server's name (and may be secrets).
    return `url: ${t._url.origin}${t._url.pathname}`;
  }
  return undefined;
}
