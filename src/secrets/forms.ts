/**
 * The spellings under which a secret value can appear inside a string:
 * raw, JSON-escaped, URL-encoded, and base64 (standard and URL-safe). Each
 * spelling is recomputable from the value alone, so a placeholder that names
 * the variable and the form can be restored byte for byte.
 *
 * Base64 needs care: a secret inside a larger base64 payload (an HTTP Basic
 * header `base64("user:" + key)`, a data URL) is not encoded as
 * `base64(key)`: its bytes start at offset 0, 1 or 2 of a 3-byte group. For
 * each alignment we keep only the characters that depend on the secret's
 * bytes alone; those appear in every base64 text that contains the secret at
 * that alignment (the trick secret scanners use for encoded credentials).
 */

/**
 * A spelling of a secret: `raw`, `json` (escaped once), `json2` (escaped
 * twice: JSON inside a JSON string, as tool-call arguments are), `url`
 * (encodeURIComponent), `form` (URLSearchParams: space as `+`),
 * `b64-0..2`, `b64u-0..2`.
 */
export type SecretForm =
  | "raw"
  | "json"
  | "json2"
  | "url"
  | "form"
  | "b64-0"
  | "b64-1"
  | "b64-2"
  | "b64u-0"
  | "b64u-1"
  | "b64u-2";

/**
 * Every form, in the order they are tried.
 *
 * @example
 * SECRET_FORMS.map((f) => renderForm("k3y/value", f))
 */
export const SECRET_FORMS: readonly SecretForm[] = [
  "raw",
  "json",
  "json2",
  "url",
  "form",
  "b64-0",
  "b64-1",
  "b64-2",
  "b64u-0",
  "b64u-1",
  "b64u-2",
];

/**
 * The text of `value` in `form`.
 *
 * @example
 * renderForm("a b/c", "url") // "a%20b%2Fc"
 * renderForm("abcdefgh", "b64-0") // "YWJjZGVmZ2" (the characters fixed by the value alone)
 */
export function renderForm(value: string, form: SecretForm): string {
  switch (form) {
    case "raw":
      return value;
    case "json":
      return JSON.stringify(value).slice(1, -1);
    case "json2":
      return JSON.stringify(JSON.stringify(value).slice(1, -1)).slice(1, -1);
    case "url":
      return encodeURIComponent(value);
    case "form":
      return new URLSearchParams({ v: value }).toString().slice(2);
    default: {
      const align = Number(form.slice(-1));
      const urlSafe = form.startsWith("b64u");
      return base64Core(Buffer.from(value, "utf8"), align, urlSafe);
    }
  }
}

/**
 * The characters of base64(`align` filler bytes ‖ `bytes` ‖ …) that depend
 * only on `bytes`: character i covers bits [6i, 6i+6), so it is fixed by the
 * value when 6i >= 8·align and 6i+6 <= 8·(align+len).
 */
function base64Core(bytes: Buffer, align: number, urlSafe: boolean): string {
  const padded = Buffer.concat([Buffer.alloc(align), bytes]);
  const text = padded.toString(urlSafe ? "base64url" : "base64");
  const first = Math.ceil((8 * align) / 6);
  const end = Math.floor((8 * (align + bytes.length)) / 6);
  return text.slice(first, end);
}

/**
 * The distinct spellings of `value` worth searching for: forms whose text
 * equals an earlier form's are dropped (a plain alphanumeric key is its own
 * JSON and URL form), and so are base64 cores shorter than `minLength`.
 *
 * @example
 * secretSpellings("sk-test-12345678") // [{ form: "raw", text: "sk-test-12345678" }, { form: "b64-0", … }, …]
 */
export function secretSpellings(
  value: string,
  minLength = 8,
): Array<{ form: SecretForm; text: string }> {
  const seen = new Set<string>();
  const out: Array<{ form: SecretForm; text: string }> = [];
  for (const form of SECRET_FORMS) {
    const text = renderForm(value, form);
    if (text.length < minLength || seen.has(text)) continue;
    seen.add(text);
    out.push({ form, text });
  }
  return out;
}
