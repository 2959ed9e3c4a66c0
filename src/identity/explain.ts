/**
 * Which fields make two model manifests' identities differ, in words a person
 * can act on: the model entry of the kind table (kinds.ts), through which
 * `explainIdentity`, miss reports, `invocache explain` and the viewer read.
 */
import { createRequire } from "node:module";
import type * as Diff from "diff";
import { type CanonicalValue, canonicalJson } from "./canonical-json.js";
import type { ManifestValue, ModelManifest } from "./manifest-types.js";
import type { ToolManifestV2 } from "./tool-manifest.js";

/** One differing manifest field (of a model manifest, or of a tool manifest). */
export interface FieldDiff {
  field:
    | "attempt"
    | "inputs"
    | "model"
    | "params"
    | "prompt"
    | "role"
    | "task"
    | keyof ToolManifestV2;
  /** One line: `attempt: 0 → 1`, `params.temperature: 0.2 → 0.7`, `prompt: 2 changes`. */
  summary: string;
  /** For prompt and task, a word diff with `[-removed-]{+added+}` marks and context. */
  diff?: string;
  /** For params, every differing key path. */
  paths?: string[];
}

const CONTEXT = 40;
const MAX_HUNKS = 6;
// Beyond this many word edits a diff is neither readable nor cheap (O(N·D)):
// fall back to the common prefix/suffix window.
const MAX_DIFF_EDIT = 200;

/** The fields in which two model manifests differ (empty when they share an identity). */
export function explainModel(a: ModelManifest, b: ModelManifest): FieldDiff[] {
  const out: FieldDiff[] = [];
  if (a.attempt !== b.attempt)
    out.push({ field: "attempt", summary: `attempt: ${a.attempt} → ${b.attempt}` });
  if (a.role !== b.role) out.push({ field: "role", summary: `role: ${q(a.role)} → ${q(b.role)}` });
  if (a.model !== b.model)
    out.push({ field: "model", summary: `model: ${q(a.model)} → ${q(b.model)}` });
  const params = paramPaths(a.params ?? {}, b.params ?? {}, "params");
  if (params.length > 0) {
    const shown = params.slice(0, 8).join("; ");
    out.push({
      field: "params",
      summary: params.length > 8 ? `${shown}; …${params.length - 8} more` : shown,
      paths: params,
    });
  }
  for (const field of ["task", "prompt"] as const) {
    if (a[field] !== b[field]) {
      const d = textDiff(a[field], b[field]);
      out.push({ field, summary: `${field}: ${d.summary}`, diff: d.diff });
    }
  }
  if (canonicalJson(a.inputs) !== canonicalJson(b.inputs)) {
    const removed = multisetMinus(a.inputs, b.inputs);
    const added = multisetMinus(b.inputs, a.inputs);
    const parts = [...removed.map((h) => `-${h}`), ...added.map((h) => `+${h}`)];
    out.push({ field: "inputs", summary: `inputs: ${parts.join(", ")}` });
  }
  return out;
}

function q(s: string): string {
  return JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);
}

function multisetMinus(a: readonly string[], b: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const x of b) counts.set(x, (counts.get(x) ?? 0) + 1);
  const out: string[] = [];
  for (const x of a) {
    const n = counts.get(x) ?? 0;
    if (n > 0) counts.set(x, n - 1);
    else out.push(x);
  }
  return out;
}

function isObject(v: ManifestValue | undefined): v is { [key: string]: ManifestValue } {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Differing leaf paths, `params.tools[0].name: "a" → "b"`. */
function paramPaths(
  a: ManifestValue | undefined,
  b: ManifestValue | undefined,
  path: string,
): string[] {
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => paramPaths(a[k], b[k], `${path}.${k}`));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    return Array.from({ length: n }, (_, i) => paramPaths(a[i], b[i], `${path}[${i}]`)).flat();
  }
  // Compare in full; truncate only for display (a long tools list that
  // differs after 80 characters must still be reported).
  const ja = a === undefined ? "(absent)" : canonicalJson(a as CanonicalValue);
  const jb = b === undefined ? "(absent)" : canonicalJson(b as CanonicalValue);
  return ja === jb ? [] : [`${path}: ${short(ja)} → ${short(jb)}`];
}

function short(s: string): string {
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}

/**
 * A word diff for normalized text (which is one line: whitespace is
 * collapsed). Falls back to a common-prefix/suffix window when the texts are
 * too different for a word diff to be readable or cheap.
 */
function textDiff(a: string, b: string): { summary: string; diff: string } {
  const changes = diffLib().diffWordsWithSpace(a, b, { maxEditLength: MAX_DIFF_EDIT });
  if (changes === undefined) return windowDiff(a, b);
  const hunks: string[] = [];
  let edits = 0;
  changes.forEach((c, i) => {
    if (!c.added && !c.removed) return;
    edits++;
    if (hunks.length >= MAX_HUNKS) return;
    const prev = changes[i - 1];
    const next = changes[i + 1];
    const before = prev && !prev.added && !prev.removed ? prev.value.slice(-CONTEXT) : "";
    const after = next && !next.added && !next.removed ? next.value.slice(0, CONTEXT) : "";
    const mark = c.added ? `{+${c.value}+}` : `[-${c.value}-]`;
    // Pair a removal with the addition right after it into one hunk.
    if (c.removed && next?.added) {
      const after2 = changes[i + 2];
      const tail = after2 && !after2.added && !after2.removed ? after2.value.slice(0, CONTEXT) : "";
      hunks.push(`…${before}${mark}{+${next.value}+}${tail}…`);
      return;
    }
    if (c.added && prev?.removed) return; // already shown with its removal
    hunks.push(`…${before}${mark}${after}…`);
  });
  const count = hunks.length;
  const extra = count < edits && count >= MAX_HUNKS ? `\n(…more changes not shown)` : "";
  return {
    summary: `${count} change${count === 1 ? "" : "s"} (${a.length} → ${b.length} chars)`,
    diff: hunks.join("\n") + extra,
  };
}

function windowDiff(a: string, b: string): { summary: string; diff: string } {
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  const clip = (x: string) => (x.length > 200 ? `${x.slice(0, 200)}…` : x);
  const before = a.slice(Math.max(0, p - CONTEXT), p);
  return {
    summary: `differs from character ${p} (${a.length} → ${b.length} chars)`,
    diff: `…${before}[-${clip(a.slice(p, a.length - s))}-]{+${clip(b.slice(p, b.length - s))}+}${a.slice(a.length - s, a.length - s + CONTEXT)}…`,
  };
}

let loaded: typeof Diff | undefined;

/**
 * The `diff` package, required on first use: importing it costs ~60–150 ms
 * of every process's start, and only an explanation of two different
 * prompts or tasks needs it. `require` (diff ships a CommonJS build) keeps
 * `explainIdentity` synchronous.
 */
function diffLib(): typeof Diff {
  loaded ??= createRequire(import.meta.url)("diff") as typeof Diff;
  return loaded;
}
