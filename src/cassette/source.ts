/**
 * How a cassette file is named in messages, and its bytes turned into text.
 */
import { isUtf8 } from "node:buffer";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { CassetteError } from "../errors.js";
import type { CassetteSource } from "./parse.js";

/**
 * The absolute path, the display path (relative to the working directory
 * when inside it) and the store url of the cassette at `path`.
 *
 * @example
 * cassetteSource("cassettes/a.yaml").url // "cassette://cassettes/a.yaml"
 */
export function cassetteSource(path: string): CassetteSource {
  const file = resolve(path);
  const rel = relative(process.cwd(), file);
  // On Windows, a path on another drive comes back absolute.
  const inside = rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
  const display = inside ? rel : file;
  return { file, display, url: `cassette://${display}` };
}

/**
 * The text of a cassette file (a leading BOM is dropped), or a CassetteError.
 * Invalid UTF-8 is an error, never silently U+FFFD (that would change strings).
 */
export function decodeCassette(bytes: Uint8Array, src: CassetteSource): string {
  if (!isUtf8(bytes)) {
    throw new CassetteError(
      src.file,
      "load",
      `${src.display}: the file is not valid UTF-8, so not a cassette. Fix or delete it; invocache never overwrites a cassette it cannot read.`,
      { url: src.url },
    );
  }
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
