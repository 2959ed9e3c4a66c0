/** Tool-call adapters of the root entry point (no optional peer is loaded here). */
export {
  type AiSdkToolLike,
  type RecordAiSdkToolsOptions,
  recordAiSdkTools,
} from "./ai-sdk-tool.js";
export { type WrapToolOptions, wrapTool } from "./wrap-tool.js";
