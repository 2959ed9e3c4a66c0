/**
 * Opening a DSSE envelope line of a stamp file: its shape (DSSE envelope.md,
 * "Parsing rules"), its payload, and each signature against the trusted
 * keys. Pure: the caller reads the file and the keys.
 */
import { decodeBase64, IN_TOTO_PAYLOAD_TYPE, pae, verifySignature } from "./dsse.js";
import { lowSTwin } from "./ecdsa.js";
import type { TrustedKey } from "./keys.js";

/** What one signature of an envelope turned out to be. */
export interface SignatureCheck {
  /** The envelope's keyid for this signature (`""` when unset). */
  keyid: string;
  /**
   * - `trusted`: verifies with a trusted key whose keyid it names;
   * - `untrusted`: does not verify with any trusted key;
   * - `invalid`: malformed (no `sig`, not base64), a high-S ECDSA signature (the
   *   malleable twin of a trusted key's signature), or its keyid names a key other than the one that made it;
   * - `unchecked`: no trusted key was given, so it was not checked.
   */
  status: "trusted" | "untrusted" | "invalid" | "unchecked";
}

/** The result of {@link openEnvelope}. */
export type EnvelopeCheck =
  | { kind: "foreign"; reason: string }
  | {
      kind: "envelope";
      problems: string[];
      /** The parsed payload, when it is JSON. */
      statement: unknown;
      signatures: SignatureCheck[];
      /** keyid of the trusted key that signed it, when one did. */
      trustedBy: string | undefined;
    };

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Is this parsed line a DSSE envelope (rather than a bare Statement)? It has
 * the envelope's required fields and no Statement `_type`.
 *
 * @example
 * isEnvelope({ payload: "e30=", payloadType: "application/vnd.in-toto+json", signatures: [] }) // true
 */
export function isEnvelope(value: unknown): value is Obj {
  return (
    isObject(value) &&
    !("_type" in value) &&
    "payloadType" in value &&
    ("payload" in value || "signatures" in value)
  );
}

/**
 * Check an envelope's shape and signatures. `trust` undefined means "do not
 * check signatures" (they are reported `unchecked`); an array (possibly
 * empty) means every signature is checked against those keys.
 *
 * The keyid is an unauthenticated hint (DSSE protocol.md: it "MUST NOT be
 * used for security decisions"): each signature is checked against every
 * trusted key, and a keyid that names a different key than the one whose
 * signature it is marks an edited envelope.
 *
 * @example
 * const r = openEnvelope(JSON.parse(line), [await readTrustedKey("ci.pub.pem")]);
 * if (r.kind === "envelope") r.trustedBy; // "5b0c…" or undefined
 */
export function openEnvelope(value: Obj, trust: readonly TrustedKey[] | undefined): EnvelopeCheck {
  if (value.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    return {
      kind: "foreign",
      reason: `is a DSSE envelope of payloadType ${JSON.stringify(value.payloadType) ?? "missing"}, not an in-toto attestation (${IN_TOTO_PAYLOAD_TYPE})`,
    };
  }
  const problems: string[] = [];
  const out: EnvelopeCheck & { kind: "envelope" } = {
    kind: "envelope",
    problems,
    statement: undefined,
    signatures: [],
    trustedBy: undefined,
  };
  let body: Buffer | undefined;
  if (typeof value.payload !== "string") {
    problems.push("the DSSE envelope's payload must be a base64 string");
  } else {
    body = decodeBase64(value.payload);
    if (body === undefined) {
      problems.push("the DSSE envelope's payload is not base64: it was damaged or edited");
    } else {
      try {
        out.statement = JSON.parse(body.toString("utf8"));
      } catch (error) {
        problems.push(
          `the DSSE payload is not JSON (${(error as Error).message}): it was damaged or edited`,
        );
      }
    }
  }
  if (!Array.isArray(value.signatures)) {
    problems.push("the DSSE envelope's signatures must be an array of { keyid, sig }");
    return out;
  }
  const signed = body === undefined ? undefined : pae(IN_TOTO_PAYLOAD_TYPE, body);
  // One trusted signature is enough (an envelope MAY carry several; the
  // policy is the application's, DSSE envelope.md): the others only matter
  // when none is trusted. A malformed or re-labelled one is always reported.
  const untrusted: string[] = [];
  value.signatures.forEach((s, i) => {
    const where = `signature ${i + 1}`;
    const keyid = isObject(s) && typeof s.keyid === "string" ? s.keyid : "";
    const check: SignatureCheck = { keyid, status: "invalid" };
    out.signatures.push(check);
    if (!isObject(s) || typeof s.sig !== "string") {
      problems.push(`${where} has no sig string`);
      return;
    }
    const sig = decodeBase64(s.sig);
    if (sig === undefined || sig.length === 0) {
      problems.push(
        `${where} (keyid ${short(keyid)}): sig is not base64: it was damaged or edited`,
      );
      return;
    }
    if (trust === undefined) {
      check.status = "unchecked";
      return;
    }
    if (signed === undefined) return; // the payload problem is already reported
    const by = trust.find((k) => verifySignature(signed, sig, k));
    if (by !== undefined) {
      if (keyid !== "" && keyid !== by.keyid) {
        problems.push(
          `${where}: keyid ${short(keyid)} was edited: the signature is by trusted key ${short(by.keyid)}`,
        );
        return;
      }
      check.status = "trusted";
      out.trustedBy ??= by.keyid;
      return;
    }
    // A high-S twin of a trusted key's signature: named as such rather than
    // "does not verify", since the arithmetic holds and only the form is refused.
    const twin = lowSTwin(sig);
    if (
      twin !== undefined &&
      trust.some((k) => k.algorithm === "ecdsa-p256" && verifySignature(signed, twin, k))
    ) {
      problems.push(
        `${where} (keyid ${short(keyid)}) is an ECDSA signature with a high S value (s > n/2), the malleable twin of a valid one: only low-S signatures are accepted, so it is refused; re-sign the artifact (invocache stamp --key)`,
      );
      return;
    }
    check.status = "untrusted";
    const named = trust.find((k) => k.keyid === keyid);
    untrusted.push(
      named !== undefined
        ? `${where} does not verify with trusted key ${short(keyid)}: the payload or the signature was changed after signing`
        : `${where} is by keyid ${short(keyid)}, which is not a trusted key (or the payload or signature was changed after signing)`,
    );
  });
  if (trust !== undefined && out.trustedBy === undefined) {
    problems.push(...untrusted);
    if (out.signatures.length === 0) problems.push("the DSSE envelope has no signature");
  }
  return out;
}

function short(keyid: string): string {
  return keyid === "" ? "(unset)" : keyid.length > 16 ? `${keyid.slice(0, 16)}…` : keyid;
}
