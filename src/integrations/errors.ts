/** Errors of the framework integrations (InvocacheError subclasses, each naming its fix). */
import { InvocacheError } from "../index.js";

/**
 * A framework asked an integration for something invocache does not do on
 * purpose: LangGraph's `clearCache()` (recordings are never deleted behind
 * the user's back), code `ERR_INTEGRATION_UNSUPPORTED`; or a LangChain cache
 * key holding a value LangChain could not serialize (a tool instance whose
 * schema would not count), code `ERR_INTEGRATION_KEY`.
 *
 * @example
 * await graph.clearCache() // IntegrationError ERR_INTEGRATION_UNSUPPORTED
 */
export class IntegrationError extends InvocacheError {
  /** The integration and method, e.g. `"InvocacheNodeCache.clear"`. */
  readonly operation: string;

  constructor(
    operation: string,
    message: string,
    code: "ERR_INTEGRATION_UNSUPPORTED" | "ERR_INTEGRATION_KEY" = "ERR_INTEGRATION_UNSUPPORTED",
  ) {
    super(code, message);
    this.operation = operation;
  }
}
