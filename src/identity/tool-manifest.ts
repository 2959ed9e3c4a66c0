/**
 * Tool identities (recipe "tool v2", docs/identity.md): the identity of a tool
 * call is from the same family as a model call's, but a separate, explicit
 * kind. Like git's typed object header ("blob 12\0"), the type is folded into
 * what is hashed twice over: the payload carries `kind: "tool"` (so a stored
 * manifest says what it is, portably, without knowing the hash), and the hash
 * input starts with its own domain tag, so no tool identity can equal a model
 * identity even for a hand-made manifest. Model identities are untouched:
 * their manifest has no `kind` and keeps the v1 domain tag.
 *
 *   sha256( "invocache/tool/v2\n" ‖ WTF-8( JCS(tool manifest) ) ), lowercase hex.
 *
 * Recipe tool v1 ran every string argument through the prompt rule table, so
 * two order UUIDs, two dates or two grep patterns differing in spaces were
 * one call. v2 keeps arguments exact but for the roots (tool-arg-rules.ts)
 * and writes `version: 2` and `argRules` into the manifest. v1 manifests are
 * still read, re-checked and shown (as needing a re-record), never computed
 * for a new call: their identities differ from every v2 identity by the
 * domain tag, so a v1 entry is never served for a v2 request.
 */

import { toJsonValue } from "../json/index.js";
import type { NormalizationRule } from "../normalize/index.js";
import { type PreparedNormalizer, prepareNormalizer, scannerFor } from "../normalize/internal.js";
import { type CanonicalValue, canonicalJson, writeCanonicalJson, wtf8 } from "./canonical-json.js";
import type { IdentityOptions } from "./manifest.js";
import type { ManifestValue } from "./manifest-types.js";
import { createSha256 } from "./sha256.js";
import {
  disabledForArgs,
  extraRulesApply,
  type ManifestArgRules,
  manifestArgRules,
  type ToolArgRules,
} from "./tool-arg-rules.js";

/** Domain tag of tool v1 identities (read only): differs from the model tag from its 10th byte. */
export const TOOL_IDENTITY_DOMAIN_V1 = "invocache/tool/v1\n";
/** Domain tag of tool v2 identities, the recipe this build computes. */
export const TOOL_IDENTITY_DOMAIN_V2 = "invocache/tool/v2\n";
/** The tool recipe version this build computes. */
export const TOOL_IDENTITY_VERSION = 2;

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
  /** The arguments: a JSON object, kept exact but for the rules of `argRules`. */
  args?: Readonly<Record<string, unknown>> | null | undefined;
  /** Which normalization rules the arguments go through. Default `"roots"` (tool-arg-rules.ts). */
  argRules?: ToolArgRules | null | undefined;
  /** Agent role of the step that calls the tool. Default "default". */
  role?: string | null | undefined;
  /** The task of the step (normalized). */
  task?: string | null | undefined;
  /** Run-scoped project root: becomes `{project}` in string arguments and the server. Not hashed itself. */
  projectPath?: string | null | undefined;
  /** Anything else is accepted and never hashed. */
  [other: string]: unknown;
}

/** The pre-image of a tool v2 identity; keys in JCS order. */
export interface ToolManifestV2 {
  /** Arguments, canonical JSON; secrets redacted, strings through the `argRules` only. */
  args: { [key: string]: ManifestValue };
  /** The argument rules the arguments went through. */
  argRules: ManifestArgRules;
  attempt: number;
  /** Input artifact hashes, sorted. */
  inputs: string[];
  kind: "tool";
  method: ToolMethod;
  name: string;
  role: string;
  /** Server name (roots normalized, secrets redacted); "" for a plain function tool. */
  server: string;
  task: string;
  version: 2;
}

/** The pre-image of a tool v1 identity (read only: recorded before v2); keys in JCS order. */
export interface ToolManifestV1 {
  /** Arguments, canonical JSON; strings normalized like a prompt, secrets redacted. */
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

/** A tool manifest of any recipe version a store may hold. */
export type ToolManifest = ToolManifestV1 | ToolManifestV2;

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
const TOOL_KEYS_V2 = [...TOOL_KEYS, "argRules", "version"] as const;

/** The recipe version of a tool manifest: 2 when it says so, else 1. */
export function toolRecipeVersion(manifest: ToolManifest): 1 | 2 {
  return (manifest as { version?: unknown }).version === 2 ? 2 : 1;
}

/** True when a request (or a manifest) is of the tool kind. */
export function isToolKind(value: unknown): boolean {
  return (
    value !== null && typeof value === "object" && (value as { kind?: unknown }).kind === "tool"
  );
}

/**
 * The manifest {@link toolIdentity} hashes (recipe tool v2).
 *
 * @example
 * toolManifest({ kind: "tool", name: "read_file", args: { path: "/tmp/x/a.txt", id: "550e8400-e29b-41d4-a716-446655440000" } })
 * // { args: { id: "550e8400-e29b-41d4-a716-446655440000", path: "{tmp}/a.txt" }, argRules: "roots",
 * //   attempt: 0, inputs: [], kind: "tool", method: "tools/call", name: "read_file",
 * //   role: "default", server: "", task: "", version: 2 }
 */
export function toolManifest(
  req: ToolInvocationRequest,
  opts: IdentityOptions = {},
): ToolManifestV2 {
  const { method, server, role, task, projectPath, attempt } = checkedRequest(req, opts);
  const argRules = manifestArgRules(req.argRules, req.name);
  const roots = {
    projectPath,
    homeDir: opts.homeDir,
    tmpDirs: opts.tmpDirs,
    roots: opts.roots,
    secrets: opts.secrets,
  };
  // Arguments are data: only the rules the tool asked for (default: roots).
  const forArgs = prepareNormalizer({
    ...roots,
    rules: extraRulesApply(argRules)
      ? (opts.rules as readonly NormalizationRule[] | undefined)
      : undefined,
    disableRules: extraRulesApply(argRules)
      ? opts.disableRules
      : disabledForArgs(argRules, Object.keys(opts.roots ?? {})),
  });
  // The server name is data too (a command line, a URL): the same server on
  // another machine has the same name once its roots are placeholders.
  const forServer = prepareNormalizer({ ...roots, disableRules: disabledForArgs("roots", []) });
  // The task is prose: normalized like a prompt, as a model call's is.
  const forTask = prepareNormalizer({
    ...roots,
    rules: opts.rules as readonly NormalizationRule[] | undefined,
    disableRules: opts.disableRules,
  });
  return {
    args: argsOf(req, opts, forArgs),
    argRules,
    attempt,
    inputs: sortedInputs(opts.inputArtifactHashes),
    kind: "tool",
    method,
    name: req.name,
    role,
    server: server === "" ? "" : forServer.normalize(server),
    task: task === "" ? "" : forTask.normalize(task),
    version: 2,
  };
}

/** The checked fields every recipe version reads from a request. */
function checkedRequest(req: ToolInvocationRequest, opts: IdentityOptions) {
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
  return { method, server, role, task, projectPath, attempt };
}

/**
 * The arguments as canonical JSON: key-aware secret redaction first (an
 * "authorization" argument), then `normalize` on every string value.
 */
function argsOf(
  req: ToolInvocationRequest,
  opts: IdentityOptions,
  normalize: PreparedNormalizer,
): { [key: string]: ManifestValue } {
  if (req.args == null) return {};
  if (typeof req.args !== "object" || Array.isArray(req.args)) {
    throw new TypeError(
      `tool ${req.name}: arguments must be a plain object of JSON values, e.g. { path: "a.txt" }`,
    );
  }
  const json = toJsonValue(req.args, `tool ${req.name} arguments`);
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new TypeError(`tool ${req.name}: arguments must serialize to a plain object`);
  }
  const scanner = scannerFor(opts.secrets);
  const redacted = scanner === undefined ? json : (scanner.redact(json).value as ManifestValue);
  return normalizeStrings(redacted, normalize) as { [key: string]: ManifestValue };
}

/**
 * The manifest of recipe tool v1 (every string argument normalized like a
 * prompt). Kept to re-check and explain entries recorded before v2; new
 * calls use {@link toolManifest}.
 */
export function toolManifestV1(
  req: ToolInvocationRequest,
  opts: IdentityOptions = {},
): ToolManifestV1 {
  const { method, server, role, task, projectPath, attempt } = checkedRequest(req, opts);
  // Resolved once for every string of the arguments and the task (on first use).
  const normalize = prepareNormalizer({
    projectPath,
    homeDir: opts.homeDir,
    tmpDirs: opts.tmpDirs,
    roots: opts.roots,
    rules: opts.rules as readonly NormalizationRule[] | undefined,
    secrets: opts.secrets,
  });
  // v1: the prompt rule table on every string value of the arguments.
  const args = argsOf(req, opts, normalize);
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

/** The identity of a tool manifest, under the domain tag of its recipe version. */
export function toolManifestIdentity(manifest: ToolManifest): string {
  const h = createSha256();
  let domain =
    toolRecipeVersion(manifest) === 2 ? TOOL_IDENTITY_DOMAIN_V2 : TOOL_IDENTITY_DOMAIN_V1;
  // cast: ToolManifest is an interface (no index signature) of JSON data, checked when built: canonical JSON takes it as is.
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

/** The identity recipe tool v1 gave a call (to re-check or find entries recorded before v2). */
export function toolIdentityV1(req: ToolInvocationRequest, opts: IdentityOptions = {}): string {
  return toolManifestIdentity(toolManifestV1(req, opts));
}

/** Check that a value read back from a store or cassette is a tool manifest (v1 or v2). */
export function assertToolManifest(value: unknown, where: string): ToolManifest {
  const fail = (why: string): never => {
    throw new TypeError(`${where} is not an invocache tool manifest: ${why}`);
  };
  if (value === null || typeof value !== "object" || Array.isArray(value)) fail("not an object");
  const m = value as Record<string, unknown>;
  if ("version" in m && m.version !== 2) fail("version is not 2 (the only versioned tool recipe)");
  const keys: readonly string[] = m.version === 2 ? TOOL_KEYS_V2 : TOOL_KEYS;
  for (const k of keys) if (!(k in m)) fail(`field ${JSON.stringify(k)} is missing`);
  for (const k of Object.keys(m)) {
    if (!keys.includes(k)) fail(`unknown field ${JSON.stringify(k)}`);
  }
  if (m.version === 2) {
    try {
      manifestArgRules(m.argRules, "manifest");
    } catch (error) {
      fail(`argRules: ${(error as Error).message}`);
    }
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
  // cast: every member of `m` was checked above (kind, name, version, server, args as JSON): it is a ToolManifest.
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
