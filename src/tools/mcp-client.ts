/**
 * wrapMcpClient: record and replay the calls an official
 * `@modelcontextprotocol/sdk` `Client` makes: `callTool`, `readResource`,
 * `getPrompt` and `listTools`. Returns the same client type; every other
 * member is the client's own. A replayed call never touches the transport,
 * so a replay works with the MCP server stopped (and the client never
 * connected: pass `server`, since the server's name is part of the identity).
 *
 * Only translation lives here: the side-effect rule reads the tool's MCP
 * annotations, which this adapter passes on with each call.
 */

import { manifestArgRules, type ToolArgRules } from "../identity/index.js";
import { checkToolPolicy, type Recorder, type ToolPolicy } from "../recorder/index.js";
import { mcpServerIdentity } from "./mcp-server-identity.js";
import { recordTool } from "./record-tool.js";

/** The part of the SDK `Client` this adapter uses (structural, so the SDK stays an optional peer). */
export interface McpClientLike {
  callTool(
    params: McpCallToolParams,
    resultSchema?: unknown,
    options?: McpRequestOptions,
  ): Promise<unknown>;
  readResource(params: { uri: string }, options?: McpRequestOptions): Promise<unknown>;
  getPrompt(
    params: { name: string; arguments?: Record<string, string> },
    options?: McpRequestOptions,
  ): Promise<unknown>;
  listTools(params?: Record<string, unknown>, options?: McpRequestOptions): Promise<unknown>;
  getServerVersion(): { name: string } | undefined;
}

interface McpCallToolParams {
  name: string;
  arguments?: Record<string, unknown> | undefined;
  [k: string]: unknown;
}
interface McpRequestOptions {
  signal?: AbortSignal | undefined;
  [k: string]: unknown;
}

/** Options of {@link wrapMcpClient}. */
export interface WrapMcpClientOptions {
  recorder: Recorder;
  /**
   * The server in identities. Default: the connected server's name and its
   * transport (a stdio command and arguments, or a URL), so two servers
   * reporting one name never share entries. Required to replay without
   * connecting (give the same string when recording) and for transports
   * that cannot tell servers apart (in-memory).
   */
  server?: string | undefined;
  /**
   * Per-tool side-effect hints and opt-ins, overriding the server's
   * annotations, e.g. `{ send_email: { cacheSideEffects: false }, search: { readOnlyHint: true } }`.
   */
  tools?: Readonly<Record<string, ToolPolicy>> | undefined;
  /**
   * Which normalization rules tool and prompt arguments go through. Default
   * `"roots"`: arguments are data, kept exact but for the checkout/home/tmp
   * roots. `"prompt"`, `"none"` or a list of rule names opt into more or less.
   */
  argRules?: ToolArgRules | undefined;
}

/**
 * @example
 * const client = wrapMcpClient(new Client({ name: "agent", version: "1.0.0" }), {
 *   recorder,
 *   server: "calculator",
 * });
 * if (recorder.modes.tool !== "replay") await client.connect(transport);
 * await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
 */
export function wrapMcpClient<C extends McpClientLike>(
  client: C,
  options: WrapMcpClientOptions,
): C {
  if (client === null || typeof client !== "object" || typeof client.callTool !== "function") {
    throw new TypeError(
      "wrapMcpClient: client must be an MCP SDK Client (from @modelcontextprotocol/sdk/client)",
    );
  }
  if (options === null || typeof options !== "object" || options.recorder === undefined) {
    throw new TypeError("wrapMcpClient: pass { recorder, server? }");
  }
  const { recorder, argRules } = options;
  manifestArgRules(argRules, "wrapMcpClient"); // a bad setting fails here
  /** Annotations seen in tools/list answers through the recorder (live or replayed): decide with them only offline. */
  const annotations = new Map<string, ToolPolicy>();

  const serverName = (): string =>
    mcpServerIdentity(client as Parameters<typeof mcpServerIdentity>[0], options.server);

  const listTools = async (params?: Record<string, unknown>, opts?: McpRequestOptions) => {
    const { _meta: _m, ...args } = params ?? {};
    const result = await recordTool<{ tools?: Array<{ name: string; annotations?: ToolPolicy }> }>({
      recorder,
      name: "tools/list",
      server: serverName(),
      method: "tools/list",
      args,
      policy: { readOnlyHint: true },
      signal: opts?.signal,
      live: () => client.listTools(params, opts).then(wireJson),
    });
    for (const t of result?.tools ?? []) {
      if (t?.annotations !== undefined) annotations.set(t.name, t.annotations);
    }
    return result;
  };

  /**
   * The tool's hints: the server's annotations from tools/list, overridden
   * per tool by `options.tools`. When none are known yet, tools/list is asked
   * once, through the recorder and in every mode, so the run's trajectory is
   * the same whether it is recorded, replayed or served from a shared cache.
   */
  let lookup: Promise<unknown> | undefined;
  /**
   * The annotations the connected server gives now, asked once per wrapped
   * client straight from the server, never through the recorder: a recorded
   * tools/list may predate a re-annotation (a tool that became destructive),
   * and the side-effect rule must not be decided by a stale answer while the
   * server is there to ask (issue 29 §4). Only a client that never connected
   * (an offline replay) decides from the recorded list.
   */
  let live: Promise<Map<string, ToolPolicy>> | undefined;
  const liveAnnotations = () =>
    (live ??= client.listTools().then((answer) => {
      const found = new Map<string, ToolPolicy>();
      const tools = (answer as { tools?: Array<{ name: string; annotations?: ToolPolicy }> }).tools;
      for (const t of tools ?? [])
        if (t?.annotations !== undefined) found.set(t.name, t.annotations);
      return found;
    }));
  const policyOf = async (name: string): Promise<ToolPolicy | undefined> => {
    const override = options.tools?.[name];
    if (!annotations.has(name) && override === undefined) {
      // Asked through the recorder in every mode, so the run's trajectory is
      // the same recorded, replayed or offline.
      lookup ??= listTools();
      await lookup;
    }
    if (client.getServerVersion() !== undefined) {
      return { ...(await liveAnnotations()).get(name), ...override };
    }
    return { ...annotations.get(name), ...override };
  };

  const overrides: Partial<McpClientLike> = {
    async callTool(params, resultSchema, opts) {
      if (params === null || typeof params !== "object" || typeof params.name !== "string") {
        throw new TypeError("callTool: params must be { name, arguments? }");
      }
      return recordTool({
        recorder,
        name: params.name,
        server: serverName(),
        method: "tools/call",
        args: params.arguments ?? {},
        argRules,
        policy: checkToolPolicy(await policyOf(params.name), params.name),
        signal: opts?.signal,
        live: () => client.callTool(params, resultSchema, opts).then(wireJson),
      });
    },
    readResource(params, opts) {
      return recordTool({
        recorder,
        name: params?.uri,
        server: serverName(),
        method: "resources/read",
        args: {},
        policy: checkToolPolicy(
          { readOnlyHint: true, ...options.tools?.[params?.uri] },
          params?.uri,
        ),
        signal: opts?.signal,
        live: () => client.readResource(params, opts).then(wireJson),
      });
    },
    getPrompt(params, opts) {
      return recordTool({
        recorder,
        name: params?.name,
        server: serverName(),
        method: "prompts/get",
        args: params?.arguments ?? {},
        argRules,
        policy: { readOnlyHint: true },
        signal: opts?.signal,
        live: () => client.getPrompt(params, opts).then(wireJson),
      });
    },
    listTools,
  };

  return new Proxy(client, {
    get(target, prop) {
      if (typeof prop === "string" && Object.hasOwn(overrides, prop)) {
        return overrides[prop as keyof McpClientLike];
      }
      const value = Reflect.get(target, prop, target);
      // Methods run on the client itself (it has private fields).
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * An MCP answer as it was on the wire: it arrived as JSON, but the SDK's
 * schema parse adds `undefined` members (e.g. `title`) that JSON drops.
 * Only those are dropped; anything else non-JSON is still refused.
 */
function wireJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(wireJson);
  if (
    value !== null &&
    typeof value === "object" &&
    Object.getPrototypeOf(value) === Object.prototype
  ) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      Object.defineProperty(out, k, {
        value: wireJson(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
