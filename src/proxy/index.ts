// The record/replay proxy (`invocache/proxy`): any language's SDK points its
// base URL at it and gets createFetch's identities. Re-exports only.

export { type ProviderShape, providerShape } from "./answers.js";
export { CONTEXT_FIELDS, HEADER_PREFIX, type ProxyContext } from "./context.js";
export { ProxyError } from "./errors.js";
export { createProxy, type InvocacheProxy, type ProxyOptions } from "./server.js";
export { BUILTIN_UPSTREAMS, parseUpstreamFlag } from "./upstreams.js";
