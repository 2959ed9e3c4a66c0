/**
 * Tool identities (recipe "tool v1", docs/identity.md): the identity of a tool
 * call is from the same family as a model call's, but a separate, explicit
 * kind. Like git's typed object header ("blob 12\0"), the type is folded into
 * what is hashed twice over: the payload carries `kind: "tool"` (so a stored
 * manifest says what it is, portably, without knowing the hash), and the hash
 * input starts with its own domain tag, so no tool identity can equal a model
 * identity even for a hand-made manifest. Model identities are untouched:
 * their manifest has no `kind` and keeps the v1 domain tag.
 *
 *   sha256( "invocache/tool/v1\n" ‖ WTF-8( JCS(tool manifest) ) ), lowercase hex.
 */

import { toJsonValue } from "../json/value.js";
import { type PreparedNormalizer, prepareNormalizer } from "../normalize/normalize.js";
import type { NormalizationRule } from "../normalize/rules.js";
import { scannerFor } from "../normalize/secrets-rule.js";
import { type CanonicalValue, canonicalJson, writeCanonicalJson, wtf8 } from "./canonical-json.js";
import type { IdentityOptions } from "./manifest.js";
import type { ManifestValue } from "./manifest-types.js";
import { createSha256 } from "./sha256.js";

/** Domain tag of tool identities: differs from the model tag from its 10th byte. */
export const TOOL_IDENTITY_DOMAIN_V1 = "invocache/tool/v1\n";

/** What kind of MCP request or function call a tool manifest describes. */
export type ToolMethod = "tools/call" | "resources/read" | "prompts/get" | "tools/list";

export const TOOL_METHODS: readonly ToolMethod[] = [
  "tools/call",
  "resources/read",
  "prompts/get",
  "tools/list",
];

/** A tool call as the caller describes it. Only the manifest's fields are hashed. */
export interface ToolInvocationRequest {
  /** Marks the request as a tool call (a model request has no `kind`). */
  kind: "tool";
  /** Tool name (for `resources/read`, the resource URI). */
  name: string;
  /** MCP server name, or "" for a plain function tool. */
  server?: string | null | undefined;
  /** What is called. Default `"tools/call"`. */
  method?: ToolMethod | undefined;
  /** The arguments: a JSON object; string values are normalized like a prompt. */
  args?: Readonly<Record<string, unknown>> | null | undefined;
  /** Agent role of the step that calls the tool. Default "default". */
  role?: string | null | undefined;
  /** The task of the step (normalized). */
  task?: string | null | undefined;
  /** Run-scoped project root: becomes `{project}` in string arguments. Not hashed itself. */
  projectPath?: string | null | undefined;
  /** Anything else is accepted and never hashed. */
  [other: string]: unknown;
}

/** The pre-image of a tool identity; keys in JCS order. */
export interface ToolManifest {
  /** Arguments, canonical JSON; strings normalized, secrets redacted. */
  args: { [key: string]: ManifestValue };
  attempt: number;
  /** Input artifact hashes, sorted. */
  inputs: string[];
  kind: "tool";
  method: ToolMethod;
  name: string;
  role: string;
  server: string;
  task: string;
}

const TOOL_KEYS = [
  "args",
  "attempt",
  "inputs",
  "kind",
  "method",
  "name",
  "role",
  "server",
  "task",
] as const;

/** True when a request (or a manifest) is of the tool kind. */
export function isToolKind(value: unknown): boolean {
  return (
    value !== null && typeof value === "object" && (value as { kind?: unknown }).kind === "tool"
  );
}

/**
 * The manifest {@link toolIdentity} hashes.
 *
 * @example
 * toolManifest({ kind: "tool", name: "read_file", args: { path: "/tmp/x/a.txt" } })
 * // { args: { path: "{tmp}/a.txt" }, attempt: 0, inputs: [], kind: "tool",
 * //   method: "tools/call", name: "read_file", role: "default", server: "", task: "" }
 */
export function toolManifest(req: ToolInvocationRequest, opts: IdentityOptions = {}): ToolManifest {
  if (!isToolKind(req)) {
    throw new TypeError('tool request must be an object like { kind: "tool", name, args }');
  }
  if (typeof req.name !== "string" || req.name === "") {
    throw new TypeError(
      `tool request.name must be a non-empty string (e.g. "read_file"), got ${describe(req.name)}`,
    );
  }
  const method = req.method ?? "tools/call";
  if (!TOOL_METHODS.includes(method)) {
    throw new TypeError(
      `tool request.method must be one of ${TOOL_METHODS.join(", ")}, got ${describe(method)}`,
    );
  }
  const server = optionalString(req.server, `tool ${req.name}: request.server`);
  const role = optionalString(req.role, `tool ${req.name}: request.role`) || "default";
  const task = optionalString(req.task, `tool ${req.name}: request.task`);
  const projectPath = req.projectPath ?? undefined;
  if (projectPath !== undefined && typeof projectPath !== "string") {
    throw new TypeError(
      `tool ${req.name}: request.projectPath must be a string path, got ${describe(projectPath)}`,
    );
  }
  const attempt = opts.attempt ?? 0;
  if (typeof attempt !== "number" || !Number.isSafeInteger(attempt) || attempt < 0) {
    throw new TypeError(
      `tool ${req.name}: attempt must be an integer >= 0, got ${describe(attempt)}`,
    );
  }
  // Resolved once for every string of the arguments and the task (on first use).
  const normalize = prepareNormalizer({
    projectPath,
    homeDir: opts.homeDir,
    tmpDirs: opts.tmpDirs,
    roots: opts.roots,
    rules: opts.rules as readonly NormalizationRule[] | undefined,
    secrets: opts.secrets,
  });
  let args: { [key: string]: ManifestValue } = {};
  if (req.args != null) {
    if (typeof req.args !== "object" || Array.isArray(req.args)) {
      throw new TypeError(
        `tool ${req.name}: arguments must be a plain object of JSON values, e.g. { path: "a.txt" }`,
      );
    }
    const json = toJsonValue(req.args, `tool ${req.name} arguments`);
    if (json === null || typeof json !== "object" || Array.isArray(json)) {
      throw new TypeError(`tool ${req.name}: arguments must serialize to a plain object`);
    }
    // Key-aware secret redaction first (an "authorization" argument), then the
    // prompt rule table on every string value, so a tmp path or a timestamp in
    // an argument does not break a hit.
    const scanner = scannerFor(opts.secrets);
    const redacted = scanner === undefined ? json : (scanner.redact(json).value as ManifestValue);
    args = normalizeStrings(redacted, normalize) as { [key: string]: ManifestValue };
  }
  return {
    args,
    attempt,
    inputs: sortedInputs(opts.inputArtifactHashes),
    kind: "tool",
    method,
    name: req.name,
    role,
    server,
    task: task === "" ? "" : normalize.normalize(task),
  };
}

/** The identity of a tool manifest. */
export function toolManifestIdentity(manifest: ToolManifest): string {
  const h = createSha256();
  let domain = TOOL_IDENTITY_DOMAIN_V1;
  writeCanonicalJson(manifest as unknown as CanonicalValue, (piece, wellFormed) => {
    const text = domain + piece;
    domain = "";
    h.update(wellFormed ? text : wtf8(text));
  });
  return h.hex();
}

/** The exact bytes hashed for a tool manifest (domain tag excluded). */
export function toolManifestBytes(manifest: ToolManifest): Uint8Array {
  return wtf8(canonicalJson(manifest as unknown as CanonicalValue));
}

/**
 * The stable identity of a tool call: 64 lowercase hex.
 *
 * @example
 * toolIdentity({ kind: "tool", name: "search", server: "docs", args: { q: "retry" } })
 */
export function toolIdentity(req: ToolInvocationRequest, opts: IdentityOptions = {}): string {
  return toolManifestIdentity(toolManifest(req, opts));
}

/** Check that a value read back from a store or cassette is a tool v1 manifest. */
export function assertToolManifest(value: unknown, where: string): ToolManifest {
  const fail = (why: string): never => {
    throw new TypeError(`${where} is not an invocache tool v1 manifest: ${why}`);
  };
  if (value === null || typeof value !== "object" || Array.isArray(value)) fail("not an object");
  const m = value as Record<string, unknown>;
  for (const k of TOOL_KEYS) if (!(k in m)) fail(`field ${JSON.stringify(k)} is missing`);
  for (const k of Object.keys(m)) {
    if (!(TOOL_KEYS as readonly string[]).includes(k)) fail(`unknown field ${JSON.stringify(k)}`);
  }
  if (m.kind !== "tool") fail('kind is not "tool"');
  if (!TOOL_METHODS.includes(m.method as ToolMethod)) fail("method is not a known tool method");
  if (!Number.isSafeInteger(m.attempt) || (m.attempt as number) < 0)
    fail("attempt is not an integer >= 0");
  if (!Array.isArray(m.inputs) || m.inputs.some((x) => typeof x !== "string"))
    fail("inputs is not a list of strings");
  for (const k of ["name", "role", "server", "task"] as const) {
    if (typeof m[k] !== "string") fail(`${k} is not a string`);
  }
  if (m.args === null || typeof m.args !== "object" || Array.isArray(m.args))
    fail("args is not an object");
  toJsonValue(m.args, `${where}.args`);
  return m as unknown as ToolManifest;
}

function normalizeStrings(value: ManifestValue, opts: PreparedNormalizer): ManifestValue {
  if (typeof value === "string") return opts.normalize(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => normalizeStrings(v, opts));
  const out: Record<string, ManifestValue> = {};
  for (const [k, v] of Object.entries(value)) {
    Object.defineProperty(out, k, {
      value: normalizeStrings(v, opts),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function sortedInputs(hashes: readonly string[] | undefined): string[] {
  if (hashes === undefined || hashes === null) return [];
  if (!Array.isArray(hashes) || hashes.some((h) => typeof h !== "string")) {
    throw new TypeError(
      "inputArtifactHashes must be an array of strings (e.g. from hashArtifact())",
    );
  }
  return [...hashes].sort();
}

function optionalString(v: unknown, field: string): string {
  if (v === null || v === undefined) return "";
  if (typeof v !== "string")
    throw new TypeError(`${field} must be a string or null, got ${describe(v)}`);
  return v;
}

function describe(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined)
    return String(v);
  return typeof v;
}
