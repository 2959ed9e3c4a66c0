/**
 * What `invocache rekey --set/--unset` changes in a manifest, and which
 * entries `--where` picks: parsed from the command line once, applied to a
 * copy of each stored manifest. The identity of the result is computed by
 * identity's `manifestIdentity`, the function `invocationIdentity` ends in,
 * never by a copy of the recipe.
 */

import { kindOf } from "../../identity/internal.js";
import { cloneJsonValue, type JsonValue, jsonEqual } from "../../json/index.js";
import { UsageError } from "../errors.js";
import type { EntryRecord } from "../source.js";

/** One path segment: an object member or an array index. */
type Segment = string | number;

/** One declared change. */
export type ManifestChange =
  | { op: "set"; path: Segment[]; text: string; value: JsonValue }
  | { op: "unset"; path: Segment[]; text: string };

// Fields a change may not touch: the retry number is the step's history, not
// a detail of its request (and meta.attempt must equal it); kind and version
// name the recipe itself.
const FORBIDDEN = new Set(["attempt", "kind", "version"]);

/**
 * A manifest path: `params.parallel_tool_calls`, `params["a.b"]`, `inputs[0]`.
 *
 * @throws UsageError naming the option and the path.
 */
export function parsePath(text: string, option: string): Segment[] {
  const out: Segment[] = [];
  let i = 0;
  const bad = (why: string): never => {
    throw new UsageError(
      `${option} ${JSON.stringify(text)}: ${why}; write a manifest path such as params.parallel_tool_calls or params["a.b"]`,
    );
  };
  while (i < text.length) {
    if (text[i] === "[") {
      const end = text.indexOf("]", i);
      if (end < 0) bad("an unclosed [");
      const inner = text.slice(i + 1, end);
      if (/^(0|[1-9][0-9]*)$/.test(inner)) out.push(Number(inner));
      else {
        let key: unknown;
        try {
          key = JSON.parse(inner);
        } catch {
          bad(`[${inner}] is neither an index nor a JSON string`);
        }
        if (typeof key !== "string") bad(`[${inner}] is neither an index nor a JSON string`);
        out.push(key as string);
      }
      i = end + 1;
      if (text[i] === ".") i++;
      continue;
    }
    let j = i;
    while (j < text.length && text[j] !== "." && text[j] !== "[") j++;
    const name = text.slice(i, j);
    if (name === "") bad("an empty segment");
    out.push(name);
    i = text[j] === "." ? j + 1 : j;
    if (text[j] === "." && i === text.length) bad("a trailing dot");
  }
  if (out.length === 0) bad("an empty path");
  const top = out[0];
  if (typeof top !== "string" || FORBIDDEN.has(top)) {
    bad(
      `${String(top)} cannot be changed (the retry number, kind and recipe version are not request details)`,
    );
  }
  return out;
}

/**
 * `PATH=JSON` of `--set`.
 *
 * @throws UsageError naming `--set` and how to quote a string.
 */
export function parseSet(arg: string): ManifestChange {
  const eq = arg.indexOf("=");
  if (eq <= 0) {
    throw new UsageError(
      `--set ${JSON.stringify(arg)}: write PATH=JSON, e.g. --set params.parallel_tool_calls=true`,
    );
  }
  const text = arg.slice(0, eq);
  const path = parsePath(text, "--set");
  const json = arg.slice(eq + 1);
  let value: JsonValue;
  try {
    value = JSON.parse(json) as JsonValue;
  } catch {
    throw new UsageError(
      `--set ${text}: ${JSON.stringify(json)} is not JSON; a string needs its quotes, e.g. --set '${text}="text"'`,
    );
  }
  return { op: "set", path, text, value };
}

/** `PATH` of `--unset`. */
export function parseUnset(arg: string): ManifestChange {
  return { op: "unset", path: parsePath(arg, "--unset"), text: arg };
}

type Obj = { [key: string]: JsonValue };

function isObj(v: JsonValue | undefined): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * `manifest` with `changes` applied, as a new value (the stored one is not
 * touched); `params` left empty by an unset is removed, as a recorded
 * manifest never has an empty one. `--set` creates the objects its path
 * goes through; `--unset` of a path that is not there changes nothing.
 *
 * @throws UsageError when a path goes through a value that is not an
 *   object (or an array, for an index), naming the path.
 */
export function applyChanges(manifest: JsonValue, changes: readonly ManifestChange[]): JsonValue {
  const out = cloneJsonValue(manifest);
  for (const c of changes) {
    let at: JsonValue = out;
    const last = c.path.length - 1;
    let missing = false;
    for (let i = 0; i < last; i++) {
      const seg = c.path[i]!;
      let next: JsonValue | undefined;
      if (typeof seg === "number") next = Array.isArray(at) ? at[seg] : undefined;
      else if (isObj(at)) {
        next = at[seg];
        if (next === undefined && c.op === "set") {
          next = typeof c.path[i + 1] === "number" ? [] : {};
          at[seg] = next;
        }
      }
      if (next === undefined || next === null || typeof next !== "object") {
        if (c.op === "unset" && next === undefined) {
          missing = true;
          break;
        }
        throw new UsageError(
          `--${c.op} ${c.text}: ${c.path.slice(0, i + 1).join(".")} is not an object in a matching entry's manifest; narrow the entries with --where`,
        );
      }
      at = next;
    }
    if (missing) continue;
    const seg = c.path[last]!;
    if (typeof seg === "number") {
      if (!Array.isArray(at) || seg > at.length || (c.op === "unset" && seg >= at.length)) {
        throw new UsageError(
          `--${c.op} ${c.text}: index ${seg} is out of range in a matching entry's manifest`,
        );
      }
      if (c.op === "set") at[seg] = cloneJsonValue(c.value);
      else at.splice(seg, 1);
    } else if (isObj(at)) {
      if (c.op === "set") at[seg] = cloneJsonValue(c.value);
      else delete at[seg];
    } else {
      throw new UsageError(
        `--${c.op} ${c.text}: the value holding ${seg} is not an object in a matching entry's manifest`,
      );
    }
  }
  if (isObj(out) && isObj(out.params) && Object.keys(out.params).length === 0) delete out.params;
  return jsonEqual(out, manifest) ? manifest : out;
}

/** The fields `--where` filters on. */
const WHERE_FIELDS = ["role", "model", "kind", "cassette", "namespace"] as const;
type WhereField = (typeof WHERE_FIELDS)[number];

/** A predicate over entries from `--where FIELD=VALUE` options (same field: any of; different fields: all). */
export function parseWhere(args: readonly string[]): (r: EntryRecord) => boolean {
  const wanted = new Map<WhereField, Set<string>>();
  for (const arg of args) {
    const eq = arg.indexOf("=");
    const field = arg.slice(0, eq) as WhereField;
    if (eq <= 0 || !WHERE_FIELDS.includes(field)) {
      throw new UsageError(
        `--where ${JSON.stringify(arg)}: write FIELD=VALUE with FIELD one of ${WHERE_FIELDS.join(", ")}, e.g. --where role=planner`,
      );
    }
    const value = arg.slice(eq + 1);
    if (field === "kind" && value !== "model" && value !== "tool") {
      throw new UsageError(`--where kind=${value}: the kind is model or tool`);
    }
    const set = wanted.get(field) ?? new Set<string>();
    set.add(value);
    wanted.set(field, set);
  }
  return (r) => {
    for (const [field, values] of wanted) {
      if (!values.has(fieldOf(r, field))) return false;
    }
    return true;
  };
}

function fieldOf(r: EntryRecord, field: WhereField): string {
  // Read field by field whatever the manifest's kind: an interface type, widened to a record.
  const m = r.entry.manifest as unknown as Record<string, unknown>;
  switch (field) {
    case "kind":
      return kindOf(m);
    case "namespace":
      return r.namespace;
    case "cassette":
      return r.cassette ?? "";
    default:
      return typeof m[field] === "string" ? (m[field] as string) : "";
  }
}
