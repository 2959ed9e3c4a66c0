/**
 * How keyv records are written and read back. What goes in must be plain
 * JSON (checked by `jsonSnapshot` in src/json), so that what comes out
 * (always a fresh `JSON.parse`) is exactly what went in.
 */
import type { JsonValue } from "../json/index.js";

/** The envelope keyv wraps every value in: `{ value, expires? }` (epoch ms). */
export interface KeyvRecord {
  value: JsonValue;
  expires?: number;
}

/**
 * Keyv's serializer. We replace `@keyv/serialize` (keyv's default) because it
 * rewrites strings: a string starting with `:` gets another `:` prepended and
 * one starting with `:base64:` comes back as a Buffer when written by another
 * client. Plain `JSON.stringify` is exact for JSON values.
 */
export function serializeRecord(data: { value?: unknown; expires?: number | undefined }): string {
  return JSON.stringify(data.expires === undefined ? { value: data.value } : data);
}

/**
 * Keyv's deserializer: parse, and refuse anything that is not a record we
 * wrote, so corrupt data is an error instead of `undefined` (a false miss).
 */
export function deserializeRecord(text: string): KeyvRecord {
  const parsed: unknown = JSON.parse(text);
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    !("value" in parsed) ||
    ("expires" in parsed && typeof parsed.expires !== "number" && parsed.expires !== null)
  ) {
    throw new TypeError("stored record is not {value, expires?}: the data is corrupt or not ours");
  }
  return parsed as KeyvRecord;
}

/** True when a record's keyv expiry has passed (keyv's own rule: `now > expires`). */
export function isExpired(record: KeyvRecord, now = Date.now()): boolean {
  return typeof record.expires === "number" && now > record.expires;
}
