/**
 * ECDSA P-256 signatures in low-S form. An ECDSA signature (r, s) has a twin
 * (r, n − s) that verifies just as well (SEC 1 v2 §4.1.4 checks only that
 * 1 ≤ s < n), so anyone holding a signed stamp can make a second, different
 * signature over the same bytes without the key: no content is forged, but
 * the envelope's bytes are malleable. As Bitcoin (BIP 62/146), Ethereum
 * (EIP-2) and sigstore's DSSE verifiers do, invocache signs only the low
 * twin (s ≤ n/2) and refuses the high one.
 *
 * The DER here is the ECDSA-Sig-Value of RFC 3279 §2.2.3,
 * `SEQUENCE { r INTEGER, s INTEGER }`, read strictly (minimal lengths and
 * integers), as OpenSSL itself requires before it verifies.
 */

/** The order n of P-256's base point (SEC 2 v2 §2.4.2). */
export const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const HALF_ORDER = P256_ORDER >> 1n;
const SIZE = 32; // bytes of r and s in IEEE P1363 form

/**
 * The DER signature of (r, s) from a P1363 one (`r ‖ s`, 32 bytes each, what
 * node:crypto's `dsaEncoding: "ieee-p1363"` gives), with s replaced by n − s
 * when it is high.
 *
 * @example
 * lowSDer(sign("sha256", bytes, { key, dsaEncoding: "ieee-p1363" })) // <Buffer 30 44 02 20 …>
 */
export function lowSDer(p1363: Uint8Array): Buffer {
  if (p1363.length !== 2 * SIZE) {
    throw new RangeError(`an ECDSA P-256 signature in P1363 form is 64 bytes, got ${p1363.length}`);
  }
  const r = toBigInt(p1363.subarray(0, SIZE));
  const s = toBigInt(p1363.subarray(SIZE));
  return derOf(r, s > HALF_ORDER ? P256_ORDER - s : s);
}

/**
 * Is `sig` a strictly-encoded DER ECDSA signature whose s is high (s > n/2)?
 *
 * @example
 * isHighS(derOf(r, P256_ORDER - lowS)) // true
 */
export function isHighS(sig: Uint8Array): boolean {
  const rs = parseDer(sig);
  return rs !== undefined && rs.s > HALF_ORDER && rs.s < P256_ORDER;
}

/**
 * The low-S twin of a high-S DER signature, `undefined` for anything else:
 * used only to tell a reader that a refused signature is a malleated copy.
 *
 * @example
 * lowSTwin(highSig) // the signature that was originally made
 */
export function lowSTwin(sig: Uint8Array): Buffer | undefined {
  const rs = parseDer(sig);
  if (rs === undefined || rs.s <= HALF_ORDER || rs.s >= P256_ORDER) return undefined;
  return derOf(rs.r, P256_ORDER - rs.s);
}

function toBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString("hex")}`);
}

function derInteger(v: bigint): Buffer {
  let hex = v.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  let bytes = Buffer.from(hex, "hex");
  // A set top bit would read as negative (X.690 §8.3.3): prefix a zero byte.
  if ((bytes[0] ?? 0) & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
}

function derOf(r: bigint, s: bigint): Buffer {
  const body = Buffer.concat([derInteger(r), derInteger(s)]);
  // P-256 integers are at most 33 bytes, so the body is < 128 bytes: short-form length.
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

/** (r, s) of a strict DER ECDSA-Sig-Value with short-form lengths, else `undefined`. */
function parseDer(sig: Uint8Array): { r: bigint; s: bigint } | undefined {
  if (sig.length < 8 || sig[0] !== 0x30 || sig[1] !== sig.length - 2) return undefined;
  const r = readInteger(sig, 2);
  if (r === undefined) return undefined;
  const s = readInteger(sig, r.end);
  if (s === undefined || s.end !== sig.length) return undefined;
  return { r: r.value, s: s.value };
}

function readInteger(sig: Uint8Array, at: number): { value: bigint; end: number } | undefined {
  const len = sig[at + 1];
  if (sig[at] !== 0x02 || len === undefined || len === 0 || len > SIZE + 1) return undefined;
  const end = at + 2 + len;
  if (end > sig.length) return undefined;
  const bytes = sig.subarray(at + 2, end);
  if ((bytes[0]! & 0x80) !== 0) return undefined; // negative
  if (bytes[0] === 0 && len > 1 && (bytes[1]! & 0x80) === 0) return undefined; // not minimal
  return { value: toBigInt(bytes), end };
}
