/**
 * aimock fixture files (`{"fixtures": [{"match": {...}, "response": {...}}]}`,
 * what `llmock --record` writes). A fixture keeps a match rule (the last user
 * message, the model, a turn index) and a response description, not the
 * request that was sent: the identity createFetch gives that request (every
 * message, every parameter, the host and path) cannot be rebuilt from it, so
 * each fixture is reported as unreadable with that reason, never guessed.
 */
import type { Translated } from "./exchange.js";

/** Is this parsed JSON an aimock fixture file? */
export function isAimock(doc: unknown): boolean {
  return Array.isArray((doc as { fixtures?: unknown } | null)?.fixtures);
}

/** Every fixture, reported: an aimock fixture is a match rule, not a recorded request. */
export function translateAimock(doc: unknown): Translated {
  if (!isAimock(doc)) throw new TypeError('not an aimock fixture file: it has no "fixtures" list');
  const fixtures = (doc as { fixtures: unknown[] }).fixtures;
  return {
    exchanges: [],
    unreadable: fixtures.map((_, i) => ({
      where: `fixtures[${i}]`,
      reason:
        "an aimock fixture keeps a match rule (userMessage, model), not the request that was sent, so its identity cannot be rebuilt exactly; record the call again through createFetch or the proxy",
    })),
  };
}
