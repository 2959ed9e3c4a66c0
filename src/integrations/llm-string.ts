/**
 * LangChain's `llm_string` (the second argument of `BaseCache.lookup`) parsed
 * back into a model and params, so a LangChain cache entry is keyed by the
 * same recipe as every other invocation (docs/integrations.md, "What is in
 * the key"). LangChain builds it as `key:JSON.stringify(value)` pairs, sorted
 * and joined by commas; values are compact JSON, so a scanner that respects
 * strings and brackets finds where each value ends.
 */
import { SECRET_QUERY_PARAM } from "../adapters/index.js";

/** Where the model name can be, in the order they are tried. */
const MODEL_KEYS = ["model", "model_name", "modelName", "model_id", "modelId", "deployment"];

/**
 * Keys that never enter the identity: credentials (also never stored), and
 * transport or bookkeeping that does not change the answer (where the call
 * goes, how long it may take, how often it is retried). Credentials are the
 * exact names of `SECRET_QUERY_PARAMS`, the list `createFetch` drops query
 * parameters by: a substring match (`/secret|password/`) would drop real
 * settings such as `secret_sauce` or `password_policy` from the key, so two
 * calls that differ in them would share one answer.
 */
export const LLM_STRING_IGNORED: readonly string[] = [
  "baseURL",
  "basePath",
  "configuration",
  "clientOptions",
  "dangerouslyAllowBrowser",
  "organization",
  "timeout",
  "maxRetries",
  "maxConcurrency",
  "signal",
  "callbacks",
  "tags",
  "metadata",
  "runName",
  "runId",
];

/** The model and params an `llm_string` stands for. */
export interface LlmStringParts {
  model: string | null;
  params: Record<string, unknown>;
}

/**
 * Parse an `llm_string`. Credentials and the transport keys of
 * {@link LLM_STRING_IGNORED} are dropped; an entry that is not `key:JSON`
 * (a custom model's own format) keeps the whole string as `":llm_string"`,
 * so nothing that could change the answer is lost.
 *
 * @example
 * describeLlmString('_type:"openai",apiKey:"sk-x",model:"gpt-5",temperature:0,tools:[{"type":"function"}]')
 * // { model: "gpt-5", params: { _type: "openai", temperature: 0, tools: [{ type: "function" }] } }
 */
export function describeLlmString(llmString: string): LlmStringParts {
  if (typeof llmString !== "string") {
    throw new TypeError(`llm_string must be a string, got ${typeof llmString}`);
  }
  const entries = parseEntries(llmString);
  if (entries === undefined) return { model: null, params: { ":llm_string": llmString } };
  const params: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    if (SECRET_QUERY_PARAM.test(key) || LLM_STRING_IGNORED.includes(key)) continue;
    Object.defineProperty(params, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  let model: string | null = null;
  for (const key of MODEL_KEYS) {
    const value = params[key];
    if (typeof value === "string" && value !== "") {
      model ??= value;
      if (value === model) delete params[key]; // an alias of the model, not a setting
    }
  }
  return { model, params };
}

/** `[key, value]` pairs, or undefined when the string is not LangChain's format. */
function parseEntries(s: string): [string, unknown][] | undefined {
  const out: [string, unknown][] = [];
  let i = 0;
  while (i < s.length) {
    const colon = s.indexOf(":", i);
    if (colon <= i) return undefined;
    const key = s.slice(i, colon);
    const end = valueEnd(s, colon + 1);
    const text = s.slice(colon + 1, end);
    if (text !== "undefined") {
      // JSON.stringify of a function or a symbol is undefined: LangChain writes "undefined".
      try {
        out.push([key, JSON.parse(text)]);
      } catch {
        return undefined;
      }
    }
    if (end < s.length && s[end] !== ",") return undefined;
    i = end + 1;
  }
  return out;
}

/** Index just past the JSON value starting at `start`: the next top-level comma, or the end. */
function valueEnd(s: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === "," && depth === 0) return i;
  }
  return s.length;
}

/**
 * Where LangChain wrote a value it could not serialize
 * (`{"lc":1,"type":"not_implemented"}`, e.g. a tool instance a model put in
 * its call options as it is): its path and class, or undefined. Such a value
 * carries none of its content (a tool's schema), so a key holding it would
 * not change when the content does.
 *
 * @example
 * notSerialized({ tools: [{ lc: 1, type: "not_implemented", id: ["langchain", "tools", "DynamicStructuredTool"] }] })
 * // { path: "tools[0]", id: "langchain.tools.DynamicStructuredTool" }
 */
export function notSerialized(value: unknown, path = ""): { path: string; id: string } | undefined {
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = notSerialized(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  const v = value as { lc?: unknown; type?: unknown; id?: unknown };
  if (v.lc === 1 && v.type === "not_implemented") {
    return { path, id: Array.isArray(v.id) ? v.id.join(".") : "unknown" };
  }
  for (const [key, member] of Object.entries(value)) {
    const found = notSerialized(member, path === "" ? key : `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}
