/**
 * What the viewer's pages show of a source: one summary per entry, the
 * stored run records, a snapshot of them all; and the pure functions that
 * make them from a stored entry or run record. Apart from the catalog
 * (catalog.ts, which reads a source) so the metadata path
 * (meta-catalog.ts) builds the same shapes.
 */
import { asModelManifest, asToolManifest, type CallKind, kindOf } from "../identity/internal.js";
import type { JsonValue } from "../json/index.js";
import type { Entry } from "../store/index.js";
import { extractUsage, type Usage } from "../usage/index.js";

const SEARCH_TEXT = 600;

/** One entry as the list views need it. */
export interface EntrySummary {
  key: string;
  namespace: string;
  id: string;
  occurrence: number;
  /** A model call, or a tool call (docs/tools.md): identity's kind table names it. */
  kind: CallKind;
  /** For a tool call: the tool, `server/name` (or `name` for a plain function tool). */
  tool: string | undefined;
  role: string;
  /** The model, or "" (a tool call has none). */
  model: string;
  task: string;
  attempt: number;
  parent: string | undefined;
  verdict: "accepted" | "rejected" | undefined;
  reason: string | undefined;
  recordedAt: string;
  durationMs: number;
  /** Tokens the recorded call reported (stored with it, else read from its response), as `invocache stats` reads them. */
  usage: Usage | undefined;
  /** Size of the stored JSON, UTF-8 bytes. */
  bytes: number;
  /** The cassette file holding it (relative to the folder), for cassette sources. */
  file: string | undefined;
  /** Lowercased start of task and prompt, for text search. */
  text: string;
}

/** A stored run record (`<namespace>:run:<runId>`), as the recorder writes it. */
export interface RunRecord {
  key: string;
  namespace: string;
  runId: string;
  contentHash: string;
  /**
   * `id:occurrence` per call, in order, and how it was answered: `"hit"`,
   * `"recorded"`, `"live"`; undefined in records written before invocache
   * stored it.
   */
  calls: Array<{ id: string; occurrence: number; served: string | undefined }>;
  verdicts: Array<{ id: string; occurrence: number; verdict: string }>;
  endedAt: string;
  file: string | undefined;
}

/** A cassette file of a folder source. */
export interface CassetteFile {
  /** Relative to the folder, with `/`. */
  path: string;
  entries: number;
  bytes: number;
  modifiedAt: string;
  problem: string | undefined;
}

/** A snapshot of the catalog. */
export interface CatalogSnapshot {
  /** Newest first. */
  entries: EntrySummary[];
  byKey: Map<string, EntrySummary>;
  /** Newest first. */
  runs: RunRecord[];
  cassettes: CassetteFile[];
  problems: Array<{ key: string; message: string }>;
  readAt: number;
}

export function summarize(
  key: string,
  namespace: string,
  e: Entry,
  length: number,
  file: string | undefined,
): EntrySummary {
  const { manifest: m, meta } = e;
  const tool = toolOf(m);
  const model = asModelManifest(m);
  return {
    key,
    namespace,
    id: e.id,
    occurrence: meta.occurrence,
    kind: kindOf(m),
    tool: tool === undefined ? undefined : toolLabel(tool),
    role: m.role,
    model: model?.model ?? "",
    task: m.task,
    attempt: m.attempt,
    parent: meta.parent,
    verdict: meta.verdict?.verdict,
    reason: meta.verdict?.reason,
    recordedAt: meta.recordedAt,
    durationMs: meta.durationMs,
    usage: tool === undefined ? (meta.usage ?? extractUsage(e.response)) : undefined,
    bytes: length,
    file,
    text: `${m.task} ${tool === undefined ? (model?.prompt ?? "").slice(0, SEARCH_TEXT) : `${toolLabel(tool)} ${JSON.stringify(tool.args).slice(0, SEARCH_TEXT)}`}`.toLowerCase(),
  };
}

/** The fields of a tool manifest (src/identity/tool-manifest.ts) the viewer shows. */
export interface ToolFields {
  name: string;
  server: string;
  method: string;
  args: JsonValue;
  /** Recorded under recipe tool v1: readable, never served for a new call. */
  v1?: boolean | undefined;
}

/** A tool call's manifest fields, or undefined for a model call's manifest. */
export function toolOf(manifest: Entry["manifest"]): ToolFields | undefined {
  const m = asToolManifest(manifest);
  if (m === undefined) return undefined;
  return {
    name: m.name,
    server: m.server,
    method: m.method,
    args: m.args,
    v1: !("version" in m),
  };
}

/** `server/name`, or `name` for a plain function tool. */
export function toolLabel(t: ToolFields): string {
  const label = t.server === "" ? t.name : `${t.server}/${t.name}`;
  // Recipe tool v1 entries are shown, never served for a v2 call: they need a re-record.
  return t.v1 === true ? `${label} (tool v1, re-record)` : label;
}

export function parseRun(
  key: string,
  namespace: string,
  runId: string,
  value: JsonValue,
  file: string | undefined,
): RunRecord | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const { contentHash, calls, verdicts, endedAt, served } = value;
  if (typeof contentHash !== "string" || !Array.isArray(calls)) return undefined;
  const split = (s: JsonValue) => (typeof s === "string" ? s.split(":") : []);
  const how = Array.isArray(served) ? served : [];
  return {
    key,
    namespace,
    runId,
    contentHash,
    calls: calls.map(split).map(([id, occ], i) => {
      const from = how[i];
      return {
        id: id ?? "",
        occurrence: Number(occ ?? 0),
        served: typeof from === "string" ? from : undefined,
      };
    }),
    verdicts: (Array.isArray(verdicts) ? verdicts : []).map(split).map(([id, occ, verdict]) => ({
      id: id ?? "",
      occurrence: Number(occ ?? 0),
      verdict: verdict ?? "",
    })),
    endedAt: typeof endedAt === "string" ? endedAt : "",
    file,
  };
}
