/**
 * What every translator (vcr.ts, har.ts, nock.ts, aimock.ts) turns a foreign
 * recording into: the HTTP exchanges it holds, in order, as plain data. The
 * importer (importer.ts) then asks createFetch itself what each one is, so a
 * translator never decides identity, redaction or what counts as a model call.
 */

/** A body as the file keeps it: text, or bytes (a vcrpy `!!binary`, a HAR `base64`, nock hex chunks). */
export type RecordedBody = string | Uint8Array;

/** One recorded request and its answer. */
export interface Exchange {
  /** Where it is in its file, for the report: `interactions[3]`, `log.entries[0]`. */
  where: string;
  request: {
    method: string;
    url: string;
    /** Name/value pairs as recorded (names in any case; repeated names kept). */
    headers: Array<[string, string]>;
    body: RecordedBody | undefined;
  };
  response: {
    status: number;
    statusText?: string;
    headers: Array<[string, string]>;
    body: RecordedBody;
  };
}

/** An entry of the file that is not an exchange the importer can use, and why. */
export interface Unreadable {
  where: string;
  reason: string;
}

/** A file translated: its exchanges and the entries that could not be read as one. */
export interface Translated {
  exchanges: Exchange[];
  unreadable: Unreadable[];
}

/** The formats `invocache import` reads. */
export const IMPORT_FORMATS = ["vcr", "har", "nock", "aimock"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** Header pairs from the shapes foreign files use: `{name: value | [values]}` or `[{name, value}]`. */
export function headerPairs(value: unknown): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (Array.isArray(value)) {
    for (const h of value) {
      if (h !== null && typeof h === "object" && "name" in h && "value" in h) {
        out.push([String(h.name), String(h.value)]);
      }
    }
    return out;
  }
  if (value !== null && typeof value === "object") {
    for (const [name, v] of Object.entries(value)) {
      if (Array.isArray(v)) for (const one of v) out.push([name, String(one)]);
      else if (v !== undefined && v !== null) out.push([name, String(v)]);
    }
  }
  return out;
}

/** The value of the first header called `name` (ASCII case-insensitive). */
export function headerValue(
  headers: ReadonlyArray<[string, string]>,
  name: string,
): string | undefined {
  const lower = name.toLowerCase();
  return headers.find(([n]) => n.toLowerCase() === lower)?.[1];
}
