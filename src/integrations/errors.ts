/** Errors of the framework integrations (InvocacheError subclasses, each naming its fix). */
import { InvocacheError } from "../index.js";

/**
 * A framework asked an integration for something invocache does not do on
 * purpose, e.g. LangGraph's `clearCache()` (recordings are never deleted
 * behind the user's back: prune them with the CLI).
 *
 * @example
 * await graph.clearCache() // IntegrationError ERR_INTEGRATION_UNSUPPORTED
 */
export class IntegrationError extends InvocacheError {
  /** The integration and method, e.g. `"InvocacheNodeCache.clear"`. */
  readonly operation: string;

  constructor(operation: string, message: string) {
    super("ERR_INTEGRATION_UNSUPPORTED", message);
    this.operation = operation;
  }
}
