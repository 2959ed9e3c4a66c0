/**
 * DSSE, the Dead Simple Signing Envelope (secure-systems-lab/dsse v1.0.0),
 * as in-toto attestations travel in it (in-toto attestation spec/v1/envelope.md):
 *
 *     { "payload": Base64(SERIALIZED_BODY), "payloadType": PAYLOAD_TYPE,
 *       "signatures": [{ "keyid": KEYID, "sig": Base64(SIGNATURE) }] }
 *
 *     SIGNATURE = Sign(PAE(UTF8(PAYLOAD_TYPE), SERIALIZED_BODY))
 *     PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 *
 * where LEN is the byte length as ASCII decimal with no leading zeros
 * (protocol.md, "Signature Definition"). The signature covers the payload
 * bytes exactly as they are, so nothing is re-serialized before verifying.
 */
import { sign, verify } from "node:crypto";
import { isHighS, lowSDer } from "./ecdsa.js";
import type { SigningKey, TrustedKey } from "./keys.js";

/** `payloadType` of an in-toto Statement in a DSSE envelope (in-toto spec/v1/envelope.md). */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

/** One DSSE signature. */
export interface DsseSignature {
  /** Unauthenticated hint naming the key: invocache writes the signer's keyid (docs/provenance.md). */
  keyid: string;
  /** Base64 of the signature over the PAE. */
  sig: string;
}

/** A DSSE JSON envelope. */
export interface DsseEnvelope {
  /** Base64 (standard, padded) of the serialized body. */
  payload: string;
  payloadType: string;
  signatures: DsseSignature[];
}

/**
 * The pre-authentication encoding of DSSE protocol.md: the exact bytes that
 * are signed.
 *
 * @example
 * pae("application/vnd.in-toto+json", Buffer.from("{}")).toString()
 * // "DSSEv1 28 application/vnd.in-toto+json 2 {}"
 */
export function pae(payloadType: string, body: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, "ascii"),
    type,
    Buffer.from(` ${body.length} `, "ascii"),
    body,
  ]);
}

/**
 * Sign `body` into a one-signature envelope. Ed25519 signs the PAE itself
 * (RFC 8032, "pure" Ed25519); ECDSA P-256 signs its SHA-256, the signature in
 * ASN.1 DER (what `openssl dgst -sha256 -verify` and sigstore expect) and
 * always in low-S form (s ≤ n/2, `ecdsa.ts`), the only form verified.
 *
 * @example
 * const envelope = signEnvelope(Buffer.from(JSON.stringify(statement)), IN_TOTO_PAYLOAD_TYPE, key);
 */
export function signEnvelope(body: Uint8Array, payloadType: string, key: SigningKey): DsseEnvelope {
  const bytes = pae(payloadType, body);
  const sig =
    key.algorithm === "ed25519"
      ? sign(null, bytes, key.privateKey)
      : lowSDer(sign("sha256", bytes, { key: key.privateKey, dsaEncoding: "ieee-p1363" }));
  return {
    payload: Buffer.from(body).toString("base64"),
    payloadType,
    signatures: [{ keyid: key.keyid, sig: sig.toString("base64") }],
  };
}

/**
 * Does `signature` over `paeBytes` verify with `key`? A malformed signature is
 * simply `false`, and so is a high-S ECDSA signature (the malleable twin of a
 * valid one: only low-S is accepted, see `ecdsa.ts`).
 *
 * @example
 * verifySignature(pae(env.payloadType, payloadBytes), sigBytes, trusted) // true
 */
export function verifySignature(
  paeBytes: Uint8Array,
  signature: Uint8Array,
  key: TrustedKey,
): boolean {
  try {
    return key.algorithm === "ed25519"
      ? verify(null, paeBytes, key.publicKey, signature)
      : !isHighS(signature) &&
          verify("sha256", paeBytes, { key: key.publicKey, dsaEncoding: "der" }, signature);
  } catch {
    return false;
  }
}

const STANDARD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * Strict base64: standard or URL-safe alphabet (DSSE envelope.md: "Either
 * standard or URL-safe encoding is allowed"), padding optional, nothing
 * else. `undefined` when the text is not base64 (Node's decoder would skip
 * stray characters silently, and a flipped character must not pass unseen).
 *
 * @example
 * decodeBase64("e30=") // <Buffer 7b 7d>
 * decodeBase64("e3 0") // undefined
 */
export function decodeBase64(text: string): Buffer | undefined {
  if (!(STANDARD.test(text) || URL_SAFE.test(text))) return undefined;
  const bare = text.replace(/=+$/, "");
  if (bare.length % 4 === 1) return undefined;
  if (text.length !== bare.length && text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(
    bare,
    text.includes("-") || text.includes("_") ? "base64url" : "base64",
  );
  // Non-canonical trailing bits ("e31=" decodes like "e30="): re-encode to be sure
  // the text is the encoding of these bytes.
  const again = bytes.toString("base64url");
  return again === bare.replace(/\+/g, "-").replace(/\//g, "_") ? bytes : undefined;
}
