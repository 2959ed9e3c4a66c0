/**
 * The one redaction of everything that leaves the process: span status and
 * exception events, warning events and process warnings, the messages of the
 * errors invocache builds. It is the store's redaction (the same scanner:
 * secret env values in every spelling, known key shapes), applied to text
 * instead of a stored value, so a key the store would have written as
 * `{secret:openai-api-key}` is exported the same way, never verbatim.
 *
 * Prompt text is not removed: the store keeps prompts, and a span or an
 * error that quotes one says no more than the cassette does. Secrets inside
 * it are redacted like everywhere else (docs/observability.md, "Secrets").
 */
import { createSecretScanner, type SecretScanner } from "./redact.js";

/**
 * `text` with every secret replaced by its placeholder. `scanner` is the
 * recorder's (its `secrets` options); without one, the built-in key shapes
 * and the secret env variables of `process.env`, read now.
 *
 * @example
 * redactOutward("401: bad key sk-proj-…") // "401: bad key {secret:openai-api-key}"
 */
export function redactOutward(text: string, scanner?: SecretScanner): string {
  if (typeof text !== "string") text = String(text);
  if (text === "") return text;
  return (scanner ?? createSecretScanner()).redactString(text, "", []);
}

/** What an exporter may see of an error: its name, message and stack, redacted. */
export interface OutwardError {
  /** The error's name (`TypeError`), or `Error` for a thrown non-error. */
  name: string;
  /** Its message, redacted. */
  message: string;
  /** Its stack, redacted, when it has one. */
  stack?: string;
}

/**
 * An error (or any thrown value) as it may leave the process: name, message
 * and stack redacted with {@link redactOutward}. The error itself is not
 * changed: the caller still gets the error it threw.
 *
 * @example
 * redactOutwardError(new Error("key sk-proj-…")).message // "key {secret:openai-api-key}"
 */
export function redactOutwardError(error: unknown, scanner?: SecretScanner): OutwardError {
  const s = scanner ?? createSecretScanner();
  if (error instanceof Error) {
    const out: OutwardError = {
      name: redactOutward(error.name, s),
      message: redactOutward(error.message, s),
    };
    if (typeof error.stack === "string") out.stack = redactOutward(error.stack, s);
    return out;
  }
  return { name: "Error", message: redactOutward(safeString(error), s) };
}

/** `String(value)`, or a fixed text when even that throws (a hostile toString). */
function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "(a value that cannot be turned into text)";
  }
}
