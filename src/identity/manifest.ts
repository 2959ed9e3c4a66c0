/**
 * Building the manifest: the exact, documented pre-image of an identity
 * (docs/identity.md). Validation lives here so every bad field is a
 * `TypeError` naming it, before anything is hashed.
 */

import type { JsonValue } from "../json/index.js";
import { toJsonValue } from "../json/index.js";
import type { NormalizationRule } from "../normalize/index.js";
import {
  type NormalizeOptions,
  normalizedParts,
  type PreparedNormalizer,
  prepareNormalizer,
  type SecretRedactor,
  scannerFor,
} from "../normalize/internal.js";
import { escapedInside, smallCanonicalJson } from "./canonical-json.js";
import {
  type ConversationPieces,
  escapedPrompts,
  preparedConversationPieces,
  preparedConversationPrompt,
} from "./conversation.js";
import type { ManifestValue, ModelManifest } from "./manifest-types.js";

export { assertManifest } from "./schema.js";

/** A model call as the caller describes it. Only the fields of the manifest are hashed. */
export interface InvocationRequest {
  /** Agent role: planner, builder, reviewer… */
  role: string;
  /** The prompt text (normalized before hashing). Give this or `conversation`. */
  prompt?: string | undefined;
  /**
   * The prompt as structured JSON (an SDK call's messages, system prompt…),
   * used when `prompt` is absent: the manifest's prompt is its canonical JSON
   * with every string normalized on its own (docs/identity.md). Adapters pass
   * what the SDK sent here and let the identity normalize it, once.
   */
  conversation?: unknown;
  /** Model name; null, undefined and "" are the same. */
  model?: string | null | undefined;
  /** The task the step works on (normalized before hashing). */
  task?: string | null | undefined;
  /** Run-scoped project root: becomes `{project}` in prompt and task. Not hashed itself. */
  projectPath?: string | null | undefined;
  /** Other output-affecting settings (temperature, tools…), hashed as canonical JSON. */
  params?: Readonly<Record<string, unknown>> | null | undefined;
  /** Anything else (cwd, session ids, call timestamps) is accepted and never hashed. */
  [other: string]: unknown;
}

/** Options of `invocationIdentity` that are not part of the request. */
export interface IdentityOptions
  extends Pick<
    NormalizeOptions,
    "homeDir" | "tmpDirs" | "roots" | "rules" | "secrets" | "disableRules"
  > {
  /** Retry number of this step: integer >= 0, default 0. */
  attempt?: number | undefined;
  /** Hashes of the input artifacts (e.g. from `hashArtifact`); order does not matter. */
  inputArtifactHashes?: readonly string[] | undefined;
}

/**
 * The manifest that {@link invocationIdentity} hashes for this request.
 *
 * @example
 * invocationManifest({ role: "builder", prompt: "Build it", model: "gpt-5" }, { attempt: 1 })
 * // { attempt: 1, inputs: [], model: "gpt-5", prompt: "Build it", role: "builder", task: "" }
 */
export function invocationManifest(
  req: InvocationRequest,
  opts: IdentityOptions = {},
): ModelManifest {
  const built = buildManifest(req, opts);
  // The prompt's escaped pieces go with the manifest for whoever hashes it.
  if (built.pieces?.escaped !== undefined) escapedPrompts.set(built.manifest, built.pieces);
  return built.manifest;
}

/** A manifest just made, with what was worked out on the way that its hash can use. */
export interface BuiltManifest {
  manifest: ModelManifest;
  /** The canonical JSON of `params` (small params with no secret: the text the secret check looked up). */
  paramsText: string | undefined;
  /** The conversation's prompt and its pieces escaped again (a conversation request). */
  pieces: ConversationPieces | undefined;
}

/**
 * {@link invocationManifest}, also giving what was worked out on the way.
 * Only for a caller that hashes the manifest at once, before anyone else can
 * see or change it (invocationIdentity): nothing here is checked against the
 * manifest again, and nothing is kept for it (no entry in escapedPrompts).
 * With `promptLater`, a conversation's prompt is left "" and only its
 * escaped pieces are made: the hash reads those (builtManifestIdentity
 * fills the prompt in from them if it ever needs the text).
 */
export function buildManifest(
  req: InvocationRequest,
  opts: IdentityOptions,
  promptLater = false,
): BuiltManifest {
  if (req === null || typeof req !== "object") {
    throw new TypeError("request must be an object like { role, prompt, model?, task?, params? }");
  }
  if (opts === null || typeof opts !== "object") {
    throw new TypeError(
      "identity options must be an object like { attempt?, inputArtifactHashes? }",
    );
  }
  if (typeof req.role !== "string" || req.role === "") {
    throw new TypeError(
      `request.role must be a non-empty string (e.g. "planner"), got ${describe(req.role)}`,
    );
  }
  if (req.prompt !== undefined && typeof req.prompt !== "string") {
    throw new TypeError(`request.prompt must be a string, got ${describe(req.prompt)}`);
  }
  if (req.prompt === undefined && req.conversation === undefined) {
    throw new TypeError(
      "request.prompt must be a string (or give request.conversation, the messages as JSON), got undefined",
    );
  }
  if (req.prompt !== undefined && req.conversation !== undefined) {
    throw new TypeError(
      "request has both prompt and conversation; give one (prompt: text, conversation: the messages as JSON)",
    );
  }
  const model = optionalString(req.model, "request.model");
  const task = optionalString(req.task, "request.task");
  const projectPath = req.projectPath ?? undefined;
  if (projectPath !== undefined && typeof projectPath !== "string") {
    throw new TypeError(`request.projectPath must be a string path, got ${describe(projectPath)}`);
  }

  const attempt = opts.attempt ?? 0;
  if (typeof attempt !== "number" || !Number.isSafeInteger(attempt) || attempt < 0) {
    throw new TypeError(
      `attempt must be an integer >= 0 (0 for the first try, n for the n-th retry), got ${describe(attempt)}`,
    );
  }

  const normalize = normalizeOptions(projectPath, opts);
  const inputHashes = inputs(opts.inputArtifactHashes);
  const pieces =
    req.prompt === undefined
      ? preparedConversationPieces(req.conversation, normalize, undefined, !promptLater)
      : promptLater && req.prompt.length >= PARTS_MIN
        ? longPromptPieces(normalize, req.prompt)
        : undefined;
  const manifest: ModelManifest = {
    attempt,
    inputs: inputHashes,
    model,
    prompt: pieces === undefined ? normalize.normalize(req.prompt!) : (pieces.prompt ?? ""),
    role: req.role,
    task: task === "" ? "" : normalize.normalize(task),
  };
  let paramsText: string | undefined;
  if (req.params != null) {
    if (typeof req.params !== "object" || Array.isArray(req.params)) {
      throw new TypeError(
        "request.params must be a plain object of JSON values, e.g. { temperature: 0.2 }",
      );
    }
    const params = toJsonValue(req.params, "request.params");
    if (params === null || typeof params !== "object" || Array.isArray(params)) {
      throw new TypeError(
        "request.params must serialize to a plain object (its toJSON returned something else)",
      );
    }
    if (Object.keys(params).length > 0) {
      // The secret rule applies to params too (a key in a header-like param).
      const scanner = scannerFor(opts.secrets);
      // Small params' canonical JSON serves twice: the key of the secret
      // check's clean set, and the params' member of the identity's text.
      paramsText = smallCanonicalJson(params, CLEAN_TEXT_MAX);
      // Only for our own scanners: a caller's redactor is not known to scan
      // each string alone (see redactParams), so it keeps the JSON.stringify key.
      const own = typeof (opts.secrets as SecretRedactor | undefined)?.redactString !== "function";
      const value =
        scanner === undefined
          ? params
          : redactParams(scanner, params, own ? paramsText : undefined);
      if (value !== params) paramsText = undefined;
      manifest.params = value as Record<string, ManifestValue>;
    }
  }
  return { manifest, paramsText, pieces };
}

/**
 * How often each normalization rule fired on a request's prompt (or each
 * string of its conversation) and task: what a miss report shows. Call it on
 * a request `invocationManifest` accepted.
 *
 * @example
 * requestRulesFired({ role: "r", prompt: "at 2026-09-09T10:00:00Z" }) // { timestamp: 1 }
 */
export function requestRulesFired(
  req: InvocationRequest,
  opts: IdentityOptions = {},
): Record<string, number> {
  const normalize = normalizeOptions(req.projectPath ?? undefined, opts);
  const counts: Record<string, number> = {};
  const add = (text: string) => {
    for (const [rule, n] of Object.entries(normalize.explain(text).counts)) {
      counts[rule] = (counts[rule] ?? 0) + n;
    }
  };
  if (req.prompt === undefined) preparedConversationPrompt(req.conversation, normalize, counts);
  else add(req.prompt);
  add(typeof req.task === "string" ? req.task : "");
  return counts;
}

/**
 * The request's normalization, resolved once for its prompt (every string of
 * its conversation) and task, on first use; made per request, never kept:
 * the options and the environment they read may change between requests.
 */
function normalizeOptions(
  projectPath: string | undefined,
  opts: IdentityOptions,
): PreparedNormalizer {
  const options: NormalizeOptions = {
    projectPath,
    homeDir: opts.homeDir,
    tmpDirs: opts.tmpDirs,
    roots: opts.roots,
    rules: opts.rules as readonly NormalizationRule[] | undefined,
    secrets: opts.secrets,
    disableRules: opts.disableRules,
  };
  return prepareNormalizer(options);
}

/**
 * From this length (UTF-16 code units) a prompt hashed at once
 * (`promptLater`) is normalized into pieces and escaped piece by piece,
 * never joined: its normalized text would be a string of 64 KB or more
 * when it holds a character past U+00FF, close to V8's large objects (128
 * KB), each a fresh allocation of its own (docs/performance.md, "A fresh
 * page costs ~16 µs on this machine"). Shorter prompts join as before.
 */
const PARTS_MIN = 32 * 1024;

/** A long prompt's normalized text as the manifest's hash reads it: escaped pieces, the text left unbuilt. */
function longPromptPieces(normalize: PreparedNormalizer, prompt: string): ConversationPieces {
  const { pieces, wellFormed } = escapedInside(normalizedParts(normalize, prompt));
  return { prompt: undefined, escaped: pieces, wellFormed, chained: undefined, checkpoints: false };
}

function optionalString(v: unknown, field: string): string {
  if (v === null || v === undefined) return "";
  if (typeof v !== "string")
    throw new TypeError(`${field} must be a string or null, got ${describe(v)}`);
  return v;
}

function inputs(hashes: readonly string[] | undefined): string[] {
  if (hashes === undefined || hashes === null) return [];
  if (!Array.isArray(hashes)) {
    throw new TypeError(
      "inputArtifactHashes must be an array of strings (e.g. from hashArtifact())",
    );
  }
  hashes.forEach((h, i) => {
    if (typeof h !== "string") {
      throw new TypeError(`inputArtifactHashes[${i}] must be a string, got ${describe(h)}`);
    }
  });
  // Sorted by UTF-16 code unit (the default comparison): order never matters,
  // content and multiplicity do.
  return [...hashes].sort();
}

function describe(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined)
    return String(v);
  return typeof v;
}

/**
 * Params texts already found free of secrets, per redactor. An adapter
 * sends the same few settings on every call (`:host`, `:path`,
 * temperature…), and scanning them is not free: a URL holds `://` and a
 * path is a base64-looking run, so every call decoded and searched them
 * again (about 2.5 % of a replayed call). Only texts in which nothing was
 * found are kept, so no secret is ever held here; bounded per redactor
 * (256 texts of at most 4 KiB).
 */
const cleanParams = new WeakMap<SecretRedactor, Set<string>>();
const MAX_CLEAN_PARAMS = 256;
const MAX_CLEAN_PARAMS_TEXT = 4096;
/**
 * The last params text found clean, and its redactor: a program sends the
 * same settings call after call, and comparing one short string is cheaper
 * than the set's lookup (hashing a text built anew on every call, and the
 * WeakMap's). Clean under a redactor is a fact about the pair, so this is
 * the set's answer for that pair; it holds one redactor (its WeakMap entry
 * does not keep it alive otherwise) and one clean text.
 */
let lastCleanRedactor: SecretRedactor | undefined;
let lastCleanText = "";

/** Params' canonical JSON is worked out up to this length (the clean set keeps no longer ones). */
const CLEAN_TEXT_MAX = MAX_CLEAN_PARAMS_TEXT;

/**
 * `params` with its secrets redacted (the same object when it holds none).
 * `canonical`: the params' canonical JSON, when small enough to have it and
 * the scanner is one of invocache's own (which scan each string alone).
 */
function redactParams(
  scanner: SecretRedactor,
  params: JsonValue,
  canonical: string | undefined,
): JsonValue {
  // JSON text is a faithful key: redaction reads strings and keys only, and
  // JSON.stringify spells every string (lone surrogates too) distinctly.
  // The canonical text is as faithful for this: it differs from another
  // params' only by the order of members, and whether our scanners find
  // anything does not depend on that order (each string is scanned alone).
  // Two texts equal in either spelling are the same JSON value.
  const text = canonical ?? JSON.stringify(params);
  if (scanner === lastCleanRedactor && text === lastCleanText) return params;
  let clean = cleanParams.get(scanner);
  if (clean?.has(text) === true) {
    lastCleanRedactor = scanner;
    lastCleanText = text;
    return params;
  }
  const { value, found } = scanner.redact(params);
  // Only small texts: the repeating ones are a few settings, and 256 large
  // params (tool definitions) would otherwise be held in memory.
  if (found.length === 0 && text.length <= MAX_CLEAN_PARAMS_TEXT) {
    if (clean === undefined) {
      clean = new Set();
      cleanParams.set(scanner, clean);
    }
    if (clean.size >= MAX_CLEAN_PARAMS) clean.clear();
    clean.add(text);
    lastCleanRedactor = scanner;
    lastCleanText = text;
  }
  return value;
}
