/**
 * The importer: every exchange of a foreign recording is sent through
 * `createFetch` itself, with a recorder in `auto` mode over the destination
 * and an upstream that answers with the recorded response. So an imported
 * entry has exactly the identity createFetch (and the proxy, which sits on
 * it) gives that request, is redacted and checked (completeness, size) by the
 * recorder's own write path, and a request createFetch would let through
 * unrecorded is skipped for the same reason. Nothing here hashes, redacts or
 * decides what a model call is.
 *
 * The exchanges of one file run as one run scope (`recorder.run`), in the
 * file's order: a request asked twice is occurrence 0 then 1, as when the
 * test that recorded it replays inside a run.
 */
import { CONVERSATION_FIELDS, createFetch, SECRET_QUERY_PARAM } from "../adapters/index.js";
import { createRecorder } from "../recorder/index.js";
import type { Store } from "../store/index.js";
import { decodeRequestBody, decodeResponseBody, upstreamResponse, utf8Text } from "./body.js";
import type { Exchange, ImportFormat, Translated } from "./exchange.js";
import { guardStore } from "./guard-store.js";

/** What happened to one exchange. */
export type ImportOutcome = "imported" | "exists" | "skipped" | "failed";

/** One exchange (or unreadable entry) of an imported file, and what became of it. */
export interface ImportItem {
  file: string;
  /** Where it is in the file: `interactions[2]`, `log.entries[0]`, `[1]`. */
  where: string;
  /** `POST https://api.openai.com/v1/chat/completions` (credential query parameters masked). */
  request?: string;
  outcome: ImportOutcome;
  /** Why it was skipped or failed, or what the clash was. */
  reason?: string;
  /** The identity and occurrence (imported, exists). */
  id?: string;
  occurrence?: number;
  /** The store key written (imported) or found (exists). */
  key?: string;
}

/** A file to import, translated. */
export interface ImportFile {
  file: string;
  format: ImportFormat;
  translated: Translated;
}

/** Options of {@link importFiles}. */
export interface ImportOptions {
  /** The destination. Left open: the caller closes it. */
  store: Store;
  /** Report what would happen; write nothing. */
  dryRun?: boolean;
  /** The recorder namespace. Default `"default"`. */
  namespace?: string;
  /** Where secret environment values are read from for redaction. Default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** What an import did. */
export interface ImportReport {
  dryRun: boolean;
  items: ImportItem[];
  counts: Record<ImportOutcome, number>;
}

/**
 * Import the exchanges of `files` into `options.store`.
 *
 * @example
 * const report = await importFiles([{ file, format: "vcr", translated: translateVcr(text) }], { store });
 */
export async function importFiles(
  files: readonly ImportFile[],
  options: ImportOptions,
): Promise<ImportReport> {
  const dryRun = options.dryRun === true;
  const store = guardStore(options.store, dryRun);
  const recorder = createRecorder({
    store,
    mode: "auto",
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    env: options.env ?? process.env,
    telemetry: false,
  });
  const items: ImportItem[] = [];
  try {
    for (const f of files) {
      for (const u of f.translated.unreadable) {
        items.push({ file: f.file, where: u.where, outcome: "skipped", reason: u.reason });
      }
      await recorder.run(async () => {
        for (const x of f.translated.exchanges) {
          items.push({ file: f.file, ...(await importOne(recorder, x)) });
        }
      });
    }
  } finally {
    await recorder.close();
  }
  const counts: Record<ImportOutcome, number> = { imported: 0, exists: 0, skipped: 0, failed: 0 };
  for (const item of items) counts[item.outcome]++;
  return { dryRun, items, counts };
}

type Recorder = ReturnType<typeof createRecorder>;
type Result = Omit<ImportItem, "file">;

/** One exchange through createFetch; what the recorder did with it. */
async function importOne(recorder: Recorder, x: Exchange): Promise<Result> {
  const base: Result = { where: x.where, request: describe(x), outcome: "skipped" };
  const body = decodeRequestBody(x.request);
  if ("problem" in body) return { ...base, reason: `request: ${body.problem}` };
  const notModel = notAModelCall(x, body.bytes);
  if (notModel !== undefined) return { ...base, reason: notModel };
  const answer = decodeResponseBody(x.response);
  if ("problem" in answer) return { ...base, reason: `response: ${answer.problem}` };

  // What the recorder reports for this call: its events, in order.
  let recorded: { id: string; occurrence: number; key: string } | undefined;
  let hit: { id: string; occurrence: number; key: string } | undefined;
  const notes: string[] = [];
  let settle: (s: { id: string; occurrence: number; outcome: string }) => void = () => {};
  const settled = new Promise<{ id: string; occurrence: number; outcome: string }>((resolve) => {
    settle = resolve;
  });
  const off = [
    recorder.on("record", (e) => {
      recorded = e;
    }),
    recorder.on("hit", (e) => {
      hit = e;
    }),
    recorder.on("bypass", (e) => notes.push(e.reason)),
    recorder.on("warning", (e) =>
      notes.push(e.error instanceof Error ? `${e.message}: ${e.error.message}` : e.message),
    ),
    recorder.on("call", (e) => settle(e)),
  ];
  const init: RequestInit = {
    method: x.request.method.toUpperCase(),
    headers: requestHeaders(x),
    ...(body.bytes === undefined ? {} : { body: body.bytes }),
  };
  let passedThrough = false;
  const fetch = createFetch({
    recorder,
    onMiss: "throw",
    // The recorded answer stands in for upstream. createFetch hands a request
    // it does not record to upstream with the caller's own init, and a model
    // call with a copy carrying its signal: that tells the two apart.
    fetch: async (_input, seen) => {
      if (seen === init) passedThrough = true;
      return upstreamResponse(x.response, answer.bytes);
    },
  });
  try {
    const res = await fetch(x.request.url, init);
    await res.arrayBuffer(); // a stream is recorded as it is read
    if (passedThrough) {
      return {
        ...base,
        reason: "not a model call: createFetch passes this request through unrecorded",
      };
    }
    const call = await settled;
    if (hit !== undefined && call.outcome === "hit") {
      return {
        ...base,
        outcome: "exists",
        id: hit.id,
        occurrence: hit.occurrence,
        key: hit.key,
        reason: "the destination already holds this identity and occurrence: kept, not overwritten",
      };
    }
    if (recorded !== undefined && notes.length === 0) {
      return {
        ...base,
        outcome: "imported",
        id: recorded.id,
        occurrence: recorded.occurrence,
        key: recorded.key,
      };
    }
    if (notes.some((n) => /already holds/.test(n))) {
      return {
        ...base,
        outcome: "exists",
        id: call.id,
        occurrence: call.occurrence,
        reason: notes.join("; "),
      };
    }
    if (recorded !== undefined) {
      return {
        ...base,
        outcome: "failed",
        id: call.id,
        occurrence: call.occurrence,
        reason: notes.join("; "),
      };
    }
    return { ...base, id: call.id, occurrence: call.occurrence, reason: whyNotStored(x, notes) };
  } catch (error) {
    return { ...base, outcome: "failed", reason: (error as Error).message };
  } finally {
    for (const f of off) f();
  }
}

/** Why createFetch would not record this request, before sending it; undefined if it would. */
function notAModelCall(x: Exchange, bytes: Uint8Array | undefined): string | undefined {
  const method = x.request.method.toUpperCase();
  if (method !== "POST")
    return `not a model call: a ${method} request (model calls are JSON POSTs)`;
  const text = bytes === undefined ? undefined : utf8Text(bytes);
  let json: unknown;
  try {
    json = text === undefined ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return "not a model call: the request body is not a JSON object";
  }
  if (!CONVERSATION_FIELDS.some((f) => (json as Record<string, unknown>)[f] !== undefined)) {
    return `not a model call: the body has no conversation field (${CONVERSATION_FIELDS.join(", ")})`;
  }
  return undefined;
}

function whyNotStored(x: Exchange, notes: readonly string[]): string {
  const status = x.response.status;
  if (status < 200 || status > 299) {
    return `an HTTP ${status} answer: createFetch stores 2xx answers only (recordErrors is not used by import)`;
  }
  if (notes.length > 0) return `not stored: ${notes.join("; ")}`;
  return "not stored: the answer is neither JSON nor server-sent events";
}

/** The recorded request headers createFetch reads (content-type); wire headers left out. */
function requestHeaders(x: Exchange): Headers {
  const headers = new Headers();
  for (const [name, value] of x.request.headers) {
    const lower = name.toLowerCase();
    if (
      lower === "content-length" ||
      lower === "transfer-encoding" ||
      lower === "content-encoding"
    ) {
      continue;
    }
    try {
      headers.append(name, value);
    } catch {
      // A header Headers refuses: createFetch reads content-type only.
    }
  }
  return headers;
}

/** `METHOD url`, the credential query parameters masked. */
function describe(x: Exchange): string {
  let url = x.request.url;
  try {
    const u = new URL(url);
    for (const name of [...u.searchParams.keys()]) {
      if (SECRET_QUERY_PARAM.test(name)) u.searchParams.set(name, "***");
    }
    url = u.href;
  } catch {
    // Not a URL: shown as recorded; createFetch will not record it.
  }
  return `${x.request.method.toUpperCase()} ${url}`;
}
