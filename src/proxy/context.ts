/**
 * A call's identity context at the proxy: what `withInvocation` and the
 * recorder take in-process (role, task, attempt, run, mode), plus the
 * cassette file of a folder store. It comes from `x-invocache-*` headers,
 * or from a session (`/_session/<sid>/…`) for clients that cannot add
 * headers; headers win field by field.
 */
import type { IncomingHttpHeaders } from "node:http";
import { MODES, type Mode } from "../recorder/index.js";
import { ProxyError } from "./errors.js";

/** The context a call through the proxy runs in. Every field is optional. */
export interface ProxyContext {
  role?: string;
  task?: string;
  attempt?: number;
  /** A run scope id: calls with the same run count occurrences together (RELOOP), and end in one run record. */
  run?: string;
  /** The cassette file, relative to a folder store. */
  cassette?: string;
  mode?: Mode;
}

/** The context fields, in the order the headers are documented. */
export const CONTEXT_FIELDS = ["role", "task", "attempt", "run", "cassette", "mode"] as const;

/** Every request header the proxy reads for itself and never forwards starts with this. */
export const HEADER_PREFIX = "x-invocache-";

/**
 * Check one context field, from a header (`text` true: every value a string)
 * or from a session's JSON. Returns the value to keep.
 */
function checkField(
  field: (typeof CONTEXT_FIELDS)[number],
  value: unknown,
  where: string,
): unknown {
  const bad = (expected: string): never => {
    throw new ProxyError(
      "ERR_PROXY_CONTEXT",
      where,
      `${where} must be ${expected}, got ${JSON.stringify(value)}`,
    );
  };
  switch (field) {
    case "attempt": {
      // The library's rule (withInvocation): an integer >= 0.
      const n = typeof value === "string" && /^\d{1,15}$/.test(value) ? Number(value) : value;
      if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
        return bad("an integer >= 0 (0 for the first try)");
      }
      return n;
    }
    case "mode":
      if (typeof value !== "string" || !MODES.includes(value as Mode)) {
        return bad(`one of ${MODES.join(", ")}`);
      }
      return value;
    case "run":
      if (typeof value !== "string" || value === "" || value.includes(":") || value.length > 200) {
        return bad('a run id: a non-empty string without ":" (at most 200 characters)');
      }
      return value;
    case "role":
    case "cassette":
      if (typeof value !== "string" || value === "") return bad("a non-empty string");
      return value;
    case "task":
      if (typeof value !== "string") return bad("a string");
      return value;
  }
}

/**
 * The context `x-invocache-*` headers give. An empty header is no header.
 *
 * @throws ProxyError (400) naming the header when a value is malformed.
 * @example
 * contextFromHeaders({ "x-invocache-attempt": "2" }) // { attempt: 2 }
 */
export function contextFromHeaders(headers: IncomingHttpHeaders): ProxyContext {
  const out: Record<string, unknown> = {};
  for (const field of CONTEXT_FIELDS) {
    const name = `${HEADER_PREFIX}${field}`;
    const raw = headers[name];
    if (raw === undefined) continue;
    if (Array.isArray(raw)) {
      throw new ProxyError(
        "ERR_PROXY_CONTEXT",
        name,
        `${name} was sent more than once; send it once`,
      );
    }
    if (raw === "") continue;
    // Header values are Latin-1 on the wire; a task may be any text, so it
    // may also come percent-encoded (encodeURIComponent).
    const value = field === "task" || field === "role" ? decodeHeader(raw, name) : raw;
    out[field] = checkField(field, value, name);
  }
  return out as ProxyContext;
}

function decodeHeader(raw: string, name: string): string {
  if (!raw.includes("%")) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ProxyError(
      "ERR_PROXY_CONTEXT",
      name,
      `${name} is not valid percent-encoding; send the text as is or encodeURIComponent(text)`,
    );
  }
}

/**
 * A session's context from a control request's JSON body: `replace` (PUT)
 * takes the body as the whole context; otherwise (PATCH) it is merged into
 * `current`, a `null` field deleting it.
 *
 * @throws ProxyError (400) naming the field when the body is not an object or a field is malformed.
 */
export function sessionContext(
  body: unknown,
  current: ProxyContext,
  replace: boolean,
): ProxyContext {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ProxyError(
      "ERR_PROXY_CONTEXT",
      "body",
      `the session body must be a JSON object with any of ${CONTEXT_FIELDS.join(", ")}, e.g. {"attempt":1,"role":"planner"}`,
    );
  }
  const out: Record<string, unknown> = replace ? {} : { ...current };
  for (const [key, value] of Object.entries(body)) {
    if (!(CONTEXT_FIELDS as readonly string[]).includes(key)) {
      throw new ProxyError(
        "ERR_PROXY_CONTEXT",
        key,
        `unknown session field ${JSON.stringify(key)}; the fields are ${CONTEXT_FIELDS.join(", ")}`,
      );
    }
    if (value === null) {
      delete out[key];
      continue;
    }
    out[key] = checkField(key as (typeof CONTEXT_FIELDS)[number], value, key);
  }
  return out as ProxyContext;
}
