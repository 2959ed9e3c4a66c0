/**
 * What `id`, `explain` and `normalize` accept as "an invocation": a request
 * file (`{ request, options }` or a bare request), a manifest, or a stored
 * entry, turned into the manifest and identity the library computes.
 */
import {
  assertManifest,
  type IdentityOptions,
  type InvocationRequest,
  invocationManifest,
  isManifestField,
  type Manifest,
  manifestIdentity,
} from "../identity/index.js";
import type { NormalizeOptions } from "../normalize/index.js";
import { validateEntry } from "../store/index.js";
import { UsageError } from "./errors.js";

/** An invocation read from a file, stdin or a store. */
export interface LoadedInvocation {
  /** Where it came from, for messages: a path, `stdin`, or `<store> <key>`. */
  label: string;
  kind: "request" | "manifest" | "entry";
  manifest: Manifest;
  /** The identity, recomputed from the manifest. */
  id: string;
  /** For requests: the raw prompt and task and the normalization options, to explain normalization. */
  request?: { prompt: string; task: string; normalize: NormalizeOptions };
}

/** Command-line overrides of a request file's options. */
export interface InvocationOverrides {
  attempt?: number | undefined;
  /** Extra input artifact hashes (`sha256:<hex>`). */
  inputs?: readonly string[] | undefined;
}

const OPTION_KEYS = new Set(["attempt", "inputArtifactHashes", "homeDir", "tmpDirs", "roots"]);
const FORMAT_HINT =
  'expected { "request": { "role", "prompt", … }, "options": { "attempt", … } }, a bare request { "role", "prompt", … }, a manifest, or an entry; see `invocache id --help`';

/**
 * The invocation a parsed document describes.
 *
 * @throws UsageError naming the file and the field when it is not one.
 * @example
 * invocationFromDocument({ request: { role: "planner", prompt: "Plan it" }, options: { attempt: 1 } }, "req.json")
 * // { kind: "request", manifest: { attempt: 1, … }, id: "…" }
 */
export function invocationFromDocument(
  doc: unknown,
  label: string,
  overrides: InvocationOverrides = {},
): LoadedInvocation {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw new UsageError(`${label} is not an object: ${FORMAT_HINT}`);
  }
  const obj = doc as Record<string, unknown>;
  const hasOverrides = overrides.attempt !== undefined || (overrides.inputs?.length ?? 0) > 0;

  if ("v" in obj && "manifest" in obj && "meta" in obj) {
    noOverrides(hasOverrides, label, "an entry");
    let manifest: Manifest;
    try {
      manifest = validateEntry(obj, label).manifest;
    } catch (error) {
      throw new UsageError(
        `${label} looks like an entry but is not a valid one: ${firstLine(error)}`,
        {
          cause: error,
        },
      );
    }
    return { label, kind: "entry", manifest, id: manifestIdentity(manifest) };
  }

  const keys = Object.keys(obj);
  if ("attempt" in obj && "inputs" in obj && keys.every(isManifestField)) {
    noOverrides(hasOverrides, label, "a manifest");
    let manifest: Manifest;
    try {
      manifest = assertManifest(obj, label);
    } catch (error) {
      throw new UsageError(firstLine(error), { cause: error });
    }
    return { label, kind: "manifest", manifest, id: manifestIdentity(manifest) };
  }

  let request: unknown = obj;
  let options: Record<string, unknown> = {};
  if ("request" in obj && !("role" in obj)) {
    const extra = keys.find((k) => k !== "request" && k !== "options");
    if (extra !== undefined) {
      throw new UsageError(
        `${label}: unknown top-level field ${JSON.stringify(extra)}; ${FORMAT_HINT}`,
      );
    }
    request = obj.request;
    if (obj.options !== undefined) {
      if (obj.options === null || typeof obj.options !== "object" || Array.isArray(obj.options)) {
        throw new UsageError(`${label}: options must be an object; ${FORMAT_HINT}`);
      }
      options = obj.options as Record<string, unknown>;
      const unknown = Object.keys(options).find((k) => !OPTION_KEYS.has(k));
      if (unknown !== undefined) {
        throw new UsageError(
          `${label}: options.${unknown} is not an identity option (use ${[...OPTION_KEYS].join(", ")})`,
        );
      }
    }
  } else {
    const misplaced = ["attempt", "inputArtifactHashes", "inputs"].find((k) => k in obj);
    if (misplaced !== undefined) {
      throw new UsageError(
        `${label}: "${misplaced}" is not a request field and would be ignored; put it under "options" ({ "request": {…}, "options": { "${misplaced === "inputs" ? "inputArtifactHashes" : misplaced}": … } }) or pass --attempt/--input`,
      );
    }
  }
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    throw new UsageError(`${label}: request must be an object; ${FORMAT_HINT}`);
  }

  const identityOptions = { ...options } as IdentityOptions;
  if (overrides.attempt !== undefined) identityOptions.attempt = overrides.attempt;
  if (overrides.inputs !== undefined && overrides.inputs.length > 0) {
    const given = Array.isArray(options.inputArtifactHashes)
      ? (options.inputArtifactHashes as string[])
      : [];
    identityOptions.inputArtifactHashes = [...given, ...overrides.inputs];
  }
  const req = request as InvocationRequest;
  let manifest: Manifest;
  try {
    manifest = invocationManifest(req, identityOptions);
  } catch (error) {
    throw new UsageError(`${label}: ${firstLine(error)}`, { cause: error });
  }
  const normalize: NormalizeOptions = {
    projectPath: typeof req.projectPath === "string" ? req.projectPath : undefined,
    homeDir: identityOptions.homeDir,
    tmpDirs: identityOptions.tmpDirs,
    roots: identityOptions.roots,
  };
  return {
    label,
    kind: "request",
    manifest,
    id: manifestIdentity(manifest),
    request: {
      prompt: req.prompt ?? manifest.prompt, // a conversation: its normalized text
      task: typeof req.task === "string" ? req.task : "",
      normalize,
    },
  };
}

function noOverrides(has: boolean, label: string, what: string): void {
  if (has) {
    throw new UsageError(
      `${label} is ${what}, whose attempt and inputs are fixed; --attempt and --input apply to requests only`,
    );
  }
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split("\n")[0] ?? "";
}
