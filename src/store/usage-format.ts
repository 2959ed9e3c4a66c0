/**
 * The stored form of token usage: `meta.usage` of an entry (its type and
 * the check the envelope makes on every read). Part of the entry format, so
 * it lives with the envelope; src/usage reads usage out of responses into
 * this form and sums it, and the store never imports src/usage.
 */

/** Tokens of one call. `inputTokens` counts every input token, cached ones included (the OpenTelemetry GenAI convention). */
export interface Usage {
  /** Which response shape the numbers were read from, e.g. `openai.chat`, `anthropic.messages`. */
  shape: UsageShape;
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the provider's prompt cache (part of `inputTokens`). */
  cacheReadTokens?: number;
  /** Input tokens written to the provider's prompt cache (part of `inputTokens`). */
  cacheWriteTokens?: number;
  /** Reasoning tokens (part of `outputTokens`). */
  reasoningTokens?: number;
  /** The model the response names (e.g. `gpt-4o-2024-08-06`), when it names one. */
  model?: string;
}

export type UsageShape =
  | "openai.chat"
  | "openai.responses"
  | "anthropic.messages"
  | "gemini.generateContent"
  | "ai-sdk";

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** A stored count, as `usageProblem` checks it: an integer >= 0 (the bound is applied when it is read). */
function storedCount(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

const USAGE_KEYS = new Set([
  "shape",
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "reasoningTokens",
  "model",
]);
const OPTIONAL_COUNTS = ["cacheReadTokens", "cacheWriteTokens", "reasoningTokens"] as const;

const SHAPES = new Set<string>([
  "openai.chat",
  "openai.responses",
  "anthropic.messages",
  "gemini.generateContent",
  "ai-sdk",
]);

/**
 * Why a stored `meta.usage` is malformed (`"inputTokens must be …"`), or
 * undefined when it is a valid {@link Usage}.
 */
export function usageProblem(value: unknown): string | undefined {
  // Read on every hit: no key list or array literal is built unless a field is wrong.
  const u = obj(value);
  if (u === undefined) return "must be an object";
  for (const k in u) {
    if (!USAGE_KEYS.has(k) && Object.hasOwn(u, k)) return `has an unknown field "${k}"`;
  }
  if (typeof u.shape !== "string" || !SHAPES.has(u.shape))
    return `shape must be one of ${[...SHAPES].join(", ")}`;
  if (storedCount(u.inputTokens) === undefined) return "inputTokens must be an integer >= 0";
  if (storedCount(u.outputTokens) === undefined) return "outputTokens must be an integer >= 0";
  for (let i = 0; i < OPTIONAL_COUNTS.length; i++) {
    const k = OPTIONAL_COUNTS[i]!;
    if (k in u && storedCount(u[k]) === undefined) return `${k} must be an integer >= 0`;
  }
  if ("model" in u && (typeof u.model !== "string" || u.model === ""))
    return "model must be a non-empty string";
  return undefined;
}
