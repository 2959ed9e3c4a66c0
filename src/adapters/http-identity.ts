/**
 * How `createFetch` turns an HTTP request to a model API into an invocation
 * (docs/integrations.md, "Identity mapping"). The body, the host (or its
 * alias), the URL path and the non-credential query count; headers never do,
 * so a key, an org id or an SDK version never changes an identity and is
 * never stored.
 */

import type { CallDescription } from "../invocation/index.js";
import type { JsonValue } from "../json/index.js";
import { setMember } from "./prompt-text.js";

/**
 * Body fields that make up the conversation: passed as
 * `request.conversation`, which the identity canonicalizes and normalizes
 * string by string into the prompt. OpenAI chat/Anthropic `messages`,
 * Anthropic `system`, OpenAI Responses `input`/`instructions`, legacy
 * completions and Responses prompt templates `prompt`, Gemini `contents` and
 * `systemInstruction`.
 */
export const CONVERSATION_FIELDS: readonly string[] = [
  "messages",
  "system",
  "input",
  "instructions",
  "prompt",
  "contents",
  "systemInstruction",
  "system_instruction",
];

/**
 * Body fields left out of the identity because they do not change the
 * answer (and often change on every run). Everything else goes into params.
 *
 * - `user`, `safety_identifier` (OpenAI): end-user ids for abuse monitoring.
 * - `metadata`: tags stored with the request (OpenAI), `user_id` (Anthropic).
 * - `store` (OpenAI): whether the provider keeps a copy for evals/distillation.
 * - `prompt_cache_key`, `prompt_cache_retention` (OpenAI): cache routing hints.
 * - `labels` (Vertex AI): billing labels.
 * - `api_key`: gateways that take the key in the body; never stored.
 *
 * Deliberately NOT volatile: `stream` and `stream_options` (they change what
 * comes back: SSE instead of JSON, an extra usage chunk), `service_tier`,
 * `seed`, `n`, `previous_response_id`.
 */
export const VOLATILE_BODY_FIELDS: readonly string[] = [
  "user",
  "safety_identifier",
  "metadata",
  "store",
  "prompt_cache_key",
  "prompt_cache_retention",
  "labels",
  "api_key",
];

/**
 * Names that carry credentials, compared by exact name (ASCII
 * case-insensitive); a trailing `*` is a prefix. Never in an identity, never
 * stored. The one list for every name-keyed credential check: `createFetch`
 * drops these query parameters, `InvocacheCache` these `llm_string` keys.
 * Exact names, never substrings: `?author=`, `?design=`, `?keywords=`,
 * `?max_tokens=`, a model's `secret_sauce` or `password_policy` change the
 * answer and are kept.
 *
 * - `key` (Google APIs, Gemini), `api_key`, `api-key`, `apikey` (also
 *   LangChain's `apiKey`), `x-api-key`;
 * - `openAIApiKey`, `azureOpenAIApiKey`, `anthropicApiKey` (LangChain's
 *   provider-named key fields);
 * - `token`, `access_token`, `accessToken`, `refresh_token`, `id_token`,
 *   `auth`, `auth_token`, `authorization`;
 * - `code` (Azure Functions function keys), `subscription-key` (Azure API Management);
 * - `sig`, `signature` (Azure SAS, CloudFront and other signed URLs);
 * - `client_secret`, `clientSecret`, `secret`, `password`, `credential`, `credentials`;
 * - `x-amz-*` (AWS SigV4 presigned URLs: credential, signature, security token),
 *   `x-goog-*` (Google Cloud Storage signed URLs).
 */
export const SECRET_QUERY_PARAMS: readonly string[] = Object.freeze([
  "key",
  "api_key",
  "api-key",
  "apikey",
  "x-api-key",
  "openAIApiKey",
  "azureOpenAIApiKey",
  "anthropicApiKey",
  "token",
  "access_token",
  "accessToken",
  "refresh_token",
  "id_token",
  "auth",
  "auth_token",
  "authorization",
  "code",
  "subscription-key",
  "sig",
  "signature",
  "client_secret",
  "clientSecret",
  "secret",
  "password",
  "credential",
  "credentials",
  "x-amz-*",
  "x-goog-*",
]);

/** {@link SECRET_QUERY_PARAMS} as one anchored, case-insensitive pattern. */
export const SECRET_QUERY_PARAM = new RegExp(
  `^(?:${SECRET_QUERY_PARAMS.map((p) => (p.endsWith("*") ? `${p.slice(0, -1)}.*` : p)).join("|")})$`,
  "i",
);

/**
 * Maps a request's host to the name that goes into the identity: an object
 * keyed by origin (`https://gw.example:8443`), host (`gw.example:8443`) or
 * hostname (`gw.example`), or a function; `undefined` keeps the origin.
 */
export type HostAliases = Readonly<Record<string, string>> | ((url: URL) => string | undefined);

/** Check a `hostAliases` option once, at createFetch time. */
export function checkHostAliases(aliases: unknown): HostAliases | undefined {
  if (aliases === undefined) return undefined;
  if (typeof aliases === "function") return aliases as HostAliases;
  if (aliases === null || typeof aliases !== "object" || Array.isArray(aliases)) {
    throw new TypeError(
      'createFetch: hostAliases must be an object like { "gw.example": "openai" } or a function (url) => name | undefined',
    );
  }
  for (const [k, v] of Object.entries(aliases)) {
    if (typeof v !== "string" || v === "") {
      throw new TypeError(
        `createFetch: hostAliases[${JSON.stringify(k)}] must be a non-empty name, e.g. "openai"`,
      );
    }
  }
  return aliases as HostAliases;
}

/**
 * The `:host` of an identity: the origin (scheme, host, port; the default
 * port is omitted, as the URL standard does), or its alias.
 */
export function identityHost(url: URL, aliases: HostAliases | undefined): string {
  if (aliases === undefined) return url.origin;
  if (typeof aliases === "function") {
    const name = aliases(url);
    if (name === undefined) return url.origin;
    if (typeof name !== "string" || name === "") {
      throw new TypeError(
        `createFetch: hostAliases(${url.origin}) returned ${JSON.stringify(name)}; return a non-empty name or undefined`,
      );
    }
    return name;
  }
  for (const key of [url.origin, url.host, url.hostname]) {
    if (Object.hasOwn(aliases, key)) return aliases[key] as string;
  }
  return url.origin;
}

/**
 * Does a JSON body look like a model call? It must carry a conversation
 * field: `model` alone is not enough, so side-effecting calls that name a
 * model (a fine-tuning job, a batch) and token exchanges go through untouched.
 */
export function looksLikeModelCall(_url: URL, body: Readonly<Record<string, JsonValue>>): boolean {
  return CONVERSATION_FIELDS.some((f) => body[f] !== undefined);
}

/** Will the response be streamed (so it is recorded as events, teed live)? */
export function wantsStream(url: URL, body: Readonly<Record<string, JsonValue>>): boolean {
  return (
    body.stream === true ||
    url.searchParams.get("alt") === "sse" || // Gemini
    /:stream/i.test(url.pathname) // Gemini models/x:streamGenerateContent
  );
}

/**
 * model, conversation and params of a request (see the module comment). The
 * conversation is passed as it is: the identity normalizes it.
 *
 * @example
 * describeHttpCall(new URL("https://api.openai.com/v1/chat/completions"),
 *   { model: "gpt-5", messages, temperature: 0, user: "u-42" }, new Set(VOLATILE_BODY_FIELDS))
 * // { model: "gpt-5", conversation: { messages },
 * //   params: { ":host": "https://api.openai.com", ":path": "/v1/chat/completions", temperature: 0 } }
 */
export function describeHttpCall(
  url: URL,
  body: Readonly<Record<string, JsonValue>>,
  volatile: ReadonlySet<string>,
  hostAliases?: HostAliases,
): CallDescription & {
  conversation: Record<string, JsonValue>;
  params: Record<string, JsonValue>;
} {
  const conversation: Record<string, JsonValue> = {};
  const params: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === "model" && typeof value === "string") continue;
    if (CONVERSATION_FIELDS.includes(key)) setMember(conversation, key, value);
    else if (!volatile.has(key)) setMember(params, key, value);
  }
  // The host too: the same path and body sent to two providers are two
  // questions. A gateway in front of one provider is mapped with hostAliases.
  params[":host"] = identityHost(url, hostAliases);
  params[":path"] = url.pathname;
  const query = keptQuery(url);
  if (query !== undefined) params[":query"] = query;
  return {
    model: typeof body.model === "string" ? body.model : modelFromPath(url.pathname),
    conversation,
    params,
  };
}

/** Query parameters that may change the answer (Azure `api-version`, Gemini `alt`), credentials dropped. */
function keptQuery(url: URL): Record<string, JsonValue> | undefined {
  if (url.search === "") return undefined; // no parameters (a bare "?" is "" too)
  const out: Record<string, JsonValue> = {};
  for (const name of [...new Set(url.searchParams.keys())].sort()) {
    if (SECRET_QUERY_PARAM.test(name)) continue;
    const values = url.searchParams.getAll(name);
    setMember(out, name, values.length === 1 ? (values[0] as string) : values);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Gemini puts the model in the path: `/v1beta/models/gemini-2.5-pro:generateContent`. */
function modelFromPath(path: string): string | null {
  const m = /\/models\/([^/:]+)/.exec(path);
  if (m?.[1] === undefined) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}
