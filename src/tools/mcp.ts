/**
 * The `invocache/mcp` subpath: tool adapters for optional peers
 * (`@modelcontextprotocol/sdk`, `ai`). Neither is imported at run time here:
 * the adapters are structural, so only the user's own SDK is loaded.
 */

export {
  type AiSdkToolLike,
  type RecordAiSdkToolsOptions,
  recordAiSdkTools,
} from "./ai-sdk-tool.js";
export { type McpClientLike, type WrapMcpClientOptions, wrapMcpClient } from "./mcp-client.js";
export { McpServerIdentityError } from "./mcp-server-identity.js";
export { type WrapToolOptions, wrapTool } from "./wrap-tool.js";
