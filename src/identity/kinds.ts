/**
 * The kinds of call as one table: per kind, how a request becomes a manifest,
 * its identity recipe (and so its domain tag), how a stored manifest is
 * checked, how two manifests are explained (miss reports, `invocache
 * explain`, the viewer's diff), its label, and the declarations the recorder's
 * policy reads (where the kind's default mode comes from, whether the
 * side-effect rule applies). Everything that treats a model call and a tool
 * call differently dispatches through {@link callKind}; only this file and
 * each kind's own recipe file (manifest.ts, tool-manifest.ts) read `kind`
 * (test/architecture/kind-seam.test.ts keeps it so). A new kind is one entry
 * here plus its recipe file and its translator (docs/architecture.md,
 * "Kinds of call").
 */
import { diffJson } from "../json/index.js";
import { explainModel, type FieldDiff } from "./explain.js";
import { type IdentityOptions, type InvocationRequest, invocationManifest } from "./manifest.js";
import type { ModelManifest } from "./manifest-types.js";
import { IDENTITY_DOMAIN_V1, modelManifestIdentity } from "./model-identity.js";
import { type ManifestProblem, manifestProblem } from "./schema.js";
import {
  assertToolManifest,
  isToolKind,
  TOOL_IDENTITY_DOMAIN_V1,
  TOOL_IDENTITY_DOMAIN_V2,
  type ToolInvocationRequest,
  type ToolManifest,
  toolManifest,
  toolManifestIdentity,
  toolRecipeVersion,
} from "./tool-manifest.js";

/** A manifest of any kind, discriminated by `kind` (a model manifest has none). */
export type Manifest = ModelManifest | ToolManifest;

/** A request of any kind, as `recorder.call` takes it. */
export type CallRequest = InvocationRequest | ToolInvocationRequest;

/** The kinds of call, in the order they are listed (modes, docs). */
export const CALL_KINDS = ["model", "tool"] as const;

/** The kind of a call: `"model"` (recipe v1) or `"tool"` (recipe tool v2). */
export type CallKind = (typeof CALL_KINDS)[number];

/** What one kind of call is, for every layer that must tell kinds apart. */
export interface CallKindSpec<M extends Manifest = Manifest, R = CallRequest> {
  readonly kind: CallKind;
  /** The request as its manifest (validated; a bad field is a `TypeError` naming it). */
  readonly manifest: (req: R, opts: IdentityOptions) => M;
  /** The identity of a manifest of this kind. */
  readonly identity: (manifest: M) => string;
  /** The domain tag hashed before the manifest's canonical bytes. */
  readonly domain: (manifest: M) => string;
  /** The first problem that keeps a stored value from being a manifest of this kind. */
  readonly problem: (value: unknown, deep: boolean) => ManifestProblem | undefined;
  /** Which fields make two manifests of this kind differ. */
  readonly explain: (a: M, b: M) => FieldDiff[];
  /** Whether a recording of `other` is worth naming as "nearest" to a missed `wanted`. */
  readonly related: (wanted: M, other: M) => boolean;
  /**
   * The model the accounting and spans name: a model call's model. A tool
   * manifest has no model field: `undefined` at run time, as it always was
   * (the accounts and spans were written against that; left as is).
   */
  readonly model: (manifest: M) => string;
  /** What is called: a model call's model, a tool call's tool name. */
  readonly callee: (manifest: M) => string;
  /** The CLI's label (its "model" column): the model, or `tool <server>/<name>`. */
  readonly label: (manifest: M) => string;
  /** What a run scope compares steps by, besides role, task and attempt. */
  readonly step: (manifest: M) => string;
  /**
   * The environment variable that sets this kind's mode; without it (or
   * unset), the kind takes the recorder's mode.
   */
  readonly modeEnv: string | undefined;
  /**
   * The call may act on the world: in `auto` mode on a shared store the
   * recorder's side-effect rule runs it live unless its effects say
   * otherwise (recorder/tool-policy.ts).
   */
  readonly sideEffects: boolean;
  /** A verify-mode divergence is reported path by path (and fails a replay run). */
  readonly diffsResponses: boolean;
  /** Calls of this kind carry token usage and a price (a model call does; a tool call never). */
  readonly priced: boolean;
  /** The texts the normalization table wrote into the manifest (what a newer table would re-normalize). */
  readonly normalizedTexts: (manifest: M) => string[];
}

const MODEL: CallKindSpec<ModelManifest, InvocationRequest> = {
  kind: "model",
  manifest: invocationManifest,
  identity: modelManifestIdentity,
  domain: () => IDENTITY_DOMAIN_V1,
  problem: (value, deep) => manifestProblem(value, { deep }),
  explain: explainModel,
  // Any model recording may be the nearest: they are ranked by what differs.
  related: () => true,
  model: (m) => m.model,
  callee: (m) => m.model,
  label: (m) => m.model,
  step: () => "model",
  modeEnv: undefined,
  sideEffects: false,
  diffsResponses: false,
  priced: true,
  normalizedTexts: (m) => [m.prompt, m.task],
};

const TOOL: CallKindSpec<ToolManifest, ToolInvocationRequest> = {
  kind: "tool",
  manifest: toolManifest,
  identity: toolManifestIdentity,
  domain: (m) => (toolRecipeVersion(m) === 2 ? TOOL_IDENTITY_DOMAIN_V2 : TOOL_IDENTITY_DOMAIN_V1),
  problem: (value) => {
    try {
      assertToolManifest(value, "$.manifest");
      return undefined;
    } catch (error) {
      return { why: (error as Error).message };
    }
  },
  explain: explainByPath,
  related: (wanted, other) => other.name === wanted.name && other.server === wanted.server,
  model: () => undefined as unknown as string, // no model: see CallKindSpec.model
  callee: (m) => m.name,
  label: (m) => {
    // Recipe tool v1 (arguments normalized like a prompt) is read, never served for a new call.
    const kind = toolRecipeVersion(m) === 2 ? "tool" : "tool(v1, re-record)";
    return `${kind} ${m.server ? `${m.server}/` : ""}${m.name}`;
  },
  step: (m) => `tool:${m.server}/${m.name}`,
  modeEnv: "INVOCACHE_TOOL_MODE",
  sideEffects: true,
  diffsResponses: true,
  priced: false,
  // Recipe v1 normalized the arguments' strings like a prompt; both recipes the task and server.
  normalizedTexts: (m) => [JSON.stringify(m.args ?? {}), m.task ?? "", m.server ?? ""],
};

const TABLE: { readonly [K in CallKind]: CallKindSpec } = {
  model: MODEL as unknown as CallKindSpec, // widened once, here: each entry reads only its own kind
  tool: TOOL as unknown as CallKindSpec,
};

/** The kind of a request or a manifest: `"tool"` when it says so, else `"model"`. */
export function kindOf(value: unknown): CallKind {
  return isToolKind(value) ? "tool" : "model";
}

/**
 * The table entry of a request's or manifest's kind.
 *
 * @example
 * callKind({ role: "planner", prompt: "Plan" }).kind // "model"
 * callKind(manifest).label(manifest) // "gpt-5", or "tool docs/search"
 */
export function callKind(value: unknown): CallKindSpec {
  return TABLE[kindOf(value)];
}

/** The table entry of a kind by name. */
export function callKindNamed(kind: CallKind): CallKindSpec {
  return TABLE[kind];
}

/** A manifest as a model call's, or undefined for another kind. */
export function asModelManifest(manifest: Manifest): ModelManifest | undefined {
  return manifest.kind === undefined ? manifest : undefined;
}

/** A manifest as a tool call's, or undefined for another kind. */
export function asToolManifest(manifest: Manifest): ToolManifest | undefined {
  return manifest.kind === "tool" ? manifest : undefined;
}

/**
 * The fields in which two manifests differ (empty when they share an
 * identity): the field list of their kind, or every differing path when the
 * kinds differ. The one explanation miss reports, `invocache explain` and the
 * viewer's diff read.
 *
 * @example
 * explainIdentity(m0, m1) // [{ field: "attempt", summary: "attempt: 0 → 1" }]
 * explainIdentity(toolA, toolB) // [{ field: "args", summary: 'args.q: "a" → "b"' }]
 */
export function explainIdentity(a: Manifest, b: Manifest): FieldDiff[] {
  const kind = kindOf(a);
  if (kind !== kindOf(b)) return explainByPath(a, b);
  return TABLE[kind].explain(a, b);
}

/** Every differing path of two manifests, e.g. `args.q: "a" → "b"`, by top-level field. */
function explainByPath(a: Manifest, b: Manifest): FieldDiff[] {
  return diffJson(a, b).map((d) => {
    const path = d.path.replace(/^\$\.?/, "");
    const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v));
    return {
      field: path.split(/[.[]/)[0] as FieldDiff["field"],
      summary: `${path}: ${show(d.expected)} → ${show(d.actual)}`,
    };
  });
}
