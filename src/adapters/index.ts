// Adapters: put invocache in front of real SDKs and workflow steps. Re-exports only.

export {
  type CallDescription,
  currentInvocation,
  DEFAULT_ROLE,
  type InvocationContext,
  invocationCall,
  type ResolvedInvocation,
  withInvocation,
} from "../invocation/index.js";
export {
  type InvocacheMiddleware,
  type InvocacheMiddlewareOptions,
  invocacheMiddleware,
} from "./ai-sdk.js";
export { isCompleteJsonBody, isCompleteSse } from "./completeness.js";
export {
  type CreateFetchOptions,
  createFetch,
  createFetchAnswerer,
  type FetchAnswerer,
  type FetchLike,
  type HttpHead,
  type HttpRecording,
  type HttpResponseView,
  type JsonAnswer,
  type ParsedBody,
} from "./fetch.js";
export {
  SAFE_RESPONSE_HEADER_PREFIXES,
  SAFE_RESPONSE_HEADERS,
  safeResponseHeaders,
} from "./headers.js";
export {
  CONVERSATION_FIELDS,
  describeHttpCall,
  type HostAliases,
  SECRET_QUERY_PARAM,
  SECRET_QUERY_PARAMS,
  VOLATILE_BODY_FIELDS,
} from "./http-identity.js";
export { decodeJson, type Encoded, encodeJson } from "./json-codec.js";
export {
  MISS_HEADERS,
  MISS_STATUS,
  type MissShape,
  missErrorBody,
  missResponse,
  missShapeFor,
} from "./miss-answer.js";
export { promptText } from "./prompt-text.js";
export { requireRecorder } from "./recorder-option.js";
export { formatSse, parseBlock, type SseEvent, SseParser, sseData } from "./sse.js";
export { type StepRequest, type WrapStepOptions, wrapStep } from "./wrap-step.js";
