/**
 * nock.back fixtures (nock's recorder with `output_objects`): a JSON array of
 * `{scope, method, path, body, status, response, rawHeaders}`. The request
 * body is kept parsed when it was JSON; the response is an object (JSON), a
 * string, or, for a binary or encoded answer, hex (`responseIsBinary`) or an
 * array of hex chunks (nock's spelling of a gzipped body).
 */
import { type Exchange, headerPairs, type RecordedBody, type Translated } from "./exchange.js";

/** Is this parsed JSON a nock.back fixture? */
export function isNock(doc: unknown): boolean {
  return (
    Array.isArray(doc) &&
    doc.length > 0 &&
    doc.every((d) => d !== null && typeof d === "object" && "scope" in d && "method" in d)
  );
}

/** The exchanges of a nock.back fixture, in order. */
export function translateNock(doc: unknown): Translated {
  if (!Array.isArray(doc))
    throw new TypeError(
      "not a nock.back fixture: expected a JSON array of {scope, method, path, …}",
    );
  const out: Translated = { exchanges: [], unreadable: [] };
  doc.forEach((def: unknown, i) => {
    const where = `[${i}]`;
    const x = translateDefinition(def as Record<string, unknown>, where);
    if ("reason" in x) out.unreadable.push(x);
    else out.exchanges.push(x);
  });
  return out;
}

function translateDefinition(
  d: Record<string, unknown> | null,
  where: string,
): Exchange | { where: string; reason: string } {
  if (d === null || typeof d !== "object") return { where, reason: "not a nock definition" };
  const { scope, method, path } = d;
  if (typeof scope !== "string" || typeof method !== "string" || typeof path !== "string") {
    return { where, reason: "the definition has no scope, method or path" };
  }
  const status = d.status === undefined ? 200 : d.status;
  if (typeof status !== "number") return { where, reason: "the status is not a number" };
  const response = responseBody(d.response, d.responseIsBinary === true);
  if (response === null)
    return { where, reason: "the response is in a shape nock import does not know" };
  let body: RecordedBody | undefined;
  if (d.body === undefined || d.body === "") body = undefined;
  else if (typeof d.body === "string") body = d.body;
  else body = JSON.stringify(d.body); // nock keeps a JSON request body parsed
  const headers: Array<[string, string]> = Array.isArray(d.rawHeaders)
    ? pairsOfFlat(d.rawHeaders)
    : headerPairs(d.rawHeaders ?? d.headers);
  return {
    where,
    request: {
      method: method.toUpperCase(),
      url: new URL(path, scope).href,
      headers: headerPairs(d.reqheaders),
      body,
    },
    response: { status, headers, body: response },
  };
}

/** `[name, value, name, value…]` (Node's rawHeaders) as pairs. */
function pairsOfFlat(flat: unknown[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([String(flat[i]), String(flat[i + 1])]);
  return out;
}

function responseBody(value: unknown, binary: boolean): RecordedBody | null {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return binary ? hex(value) : value;
  // An array of hex strings is nock's recording of an encoded (gzip) body.
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((c) => typeof c === "string" && /^[0-9a-f]*$/i.test(c))
  ) {
    return hex(value.join(""));
  }
  if (typeof value === "object") return JSON.stringify(value);
  return null;
}

function hex(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, "hex"));
}
