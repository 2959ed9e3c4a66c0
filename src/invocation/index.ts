// The translation base: the invocation context a step sets (withInvocation)
// and the one contract every translator follows to turn a foreign call into
// the arguments of recorder.call (invocationCall for model calls,
// toolInvocationCall for tool calls). Adapters, integrations and tools all
// build on it; the adapters' index re-exports its public names. Re-exports only.
export {
  type CallDescription,
  currentInvocation,
  DEFAULT_ROLE,
  explicitInvocation,
  type InvocationContext,
  invocationCall,
  type ResolvedInvocation,
  type ToolCallDescription,
  toolInvocationCall,
  withInvocation,
} from "./context.js";
