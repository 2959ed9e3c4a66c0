/**
 * The `invocache/mcp` subpath: the MCP client adapter for the optional peer
 * `@modelcontextprotocol/sdk`. The SDK is not imported at run time here: the
 * adapter is structural, so only the user's own SDK is loaded.
 *
 * `wrapTool` and `recordAiSdkTools` (no peer loaded either) are exported from
 * the root `invocache` only: both were also exported here until issue 31
 * removed the duplicates (docs/tools.md lists where each wrapper lives).
 */

export { type McpClientLike, type WrapMcpClientOptions, wrapMcpClient } from "./mcp-client.js";
export { McpServerIdentityError } from "./mcp-server-identity.js";
