/**
 * Binary data in cassettes. A store keeps JSON, so bytes (images, audio,
 * PDFs) are recorded as base64 with their media type, in one agreed shape
 * that adapters write and readers recognise:
 *
 * ```yaml
 * response:
 *   image:
 *     $binary:
 *       mediaType: image/png
 *       base64: iVBORw0KGgo…
 * ```
 *
 * The shape follows MongoDB's extended JSON (`{ "$binary": { "base64": … } }`),
 * with a media type instead of a BSON subtype. The base64 is standard (RFC
 * 4648 §4, with padding) on one line: the string round-trips exactly, and an
 * unchanged recording never diffs.
 */

/** A recorded binary value. */
export interface BinaryValue {
  $binary: { mediaType: string; base64: string };
}

/**
 * Record `bytes` as a {@link BinaryValue}.
 *
 * @example
 * encodeBinary(new Uint8Array([137, 80, 78, 71]), "image/png")
 * // { $binary: { mediaType: "image/png", base64: "iVBORw==" } }
 */
export function encodeBinary(bytes: Uint8Array, mediaType: string): BinaryValue {
  if (!(bytes instanceof Uint8Array))
    throw new TypeError("encodeBinary: bytes must be a Uint8Array");
  if (typeof mediaType !== "string" || !/^[\w.+-]+\/[\w.+-]+/.test(mediaType)) {
    throw new TypeError(
      `encodeBinary: mediaType must be a media type such as image/png, got ${JSON.stringify(mediaType)}`,
    );
  }
  const base64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  return { $binary: { mediaType, base64 } };
}

/**
 * Whether `value` is a {@link BinaryValue}.
 *
 * @example
 * isBinaryValue({ $binary: { mediaType: "audio/wav", base64: "" } }) // true
 */
export function isBinaryValue(value: unknown): value is BinaryValue {
  const b = (value as { $binary?: unknown } | null)?.$binary as
    | { mediaType?: unknown; base64?: unknown }
    | undefined;
  return (
    typeof value === "object" &&
    value !== null &&
    Object.keys(value).length === 1 &&
    typeof b === "object" &&
    b !== null &&
    typeof b.mediaType === "string" &&
    typeof b.base64 === "string"
  );
}

/**
 * The bytes and media type of a {@link BinaryValue}.
 *
 * @throws TypeError when `value` is not one, or its base64 is malformed.
 * @example
 * decodeBinary(encodeBinary(bytes, "image/png")).bytes // equal to bytes
 */
export function decodeBinary(value: unknown): { bytes: Uint8Array; mediaType: string } {
  if (!isBinaryValue(value)) {
    throw new TypeError("decodeBinary: expected { $binary: { mediaType, base64 } }");
  }
  const { base64, mediaType } = value.$binary;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 !== 0) {
    throw new TypeError(`decodeBinary: the ${mediaType} value is not standard padded base64`);
  }
  return { bytes: new Uint8Array(Buffer.from(base64, "base64")), mediaType };
}
