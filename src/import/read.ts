/**
 * Reading a file to import: its format (detected from the content, or the
 * one `--from` names) and its exchanges, through the format's translator.
 */
import { readFileSync } from "node:fs";
import { InvocacheError } from "../errors.js";
import { isAimock, translateAimock } from "./aimock.js";
import { IMPORT_FORMATS, type ImportFormat, type Translated } from "./exchange.js";
import { isHar, translateHar } from "./har.js";
import type { ImportFile } from "./importer.js";
import { isNock, translateNock } from "./nock.js";
import { looksLikeVcr, translateVcr } from "./vcr.js";

/** A file that cannot be imported as a whole: unreadable, of no known format, or not the format `--from` says. */
export class ImportFileError extends InvocacheError {
  readonly file: string;
  readonly field: string;

  constructor(file: string, field: string, message: string, options?: { cause?: unknown }) {
    super("ERR_IMPORT_FILE", message, options);
    this.file = file;
    this.field = field;
  }
}

/** Check a `--from` value. */
export function checkImportFormat(value: string): ImportFormat {
  if ((IMPORT_FORMATS as readonly string[]).includes(value)) return value as ImportFormat;
  throw new ImportFileError(
    "",
    "from",
    `--from must be one of ${IMPORT_FORMATS.join(", ")}; got ${JSON.stringify(value)}`,
  );
}

/**
 * Read and translate `file`.
 *
 * @throws ImportFileError when the file cannot be read, its format is not
 *   recognized (name it with `from`), or it is not the format `from` names.
 */
export function readImportFile(file: string, from?: ImportFormat): ImportFile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ImportFileError(
      file,
      "FILE",
      `import: cannot read ${file}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const format = from ?? detect(file, text);
  try {
    return { file, format, translated: translate(format, text) };
  } catch (error) {
    throw new ImportFileError(
      file,
      from === undefined ? "FILE" : "from",
      `import: ${file} is not a ${format} recording: ${(error as Error).message}${from === undefined ? "" : "; check --from"}`,
      { cause: error },
    );
  }
}

function translate(format: ImportFormat, text: string): Translated {
  if (format === "vcr") return translateVcr(text);
  const doc = JSON.parse(text) as unknown;
  if (format === "har") return translateHar(doc);
  if (format === "nock") return translateNock(doc);
  return translateAimock(doc);
}

function detect(file: string, text: string): ImportFormat {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    doc = undefined;
  }
  if (doc !== undefined) {
    if (isHar(doc)) return "har";
    if (isNock(doc)) return "nock";
    if (isAimock(doc)) return "aimock";
  } else if (looksLikeVcr(text)) {
    return "vcr";
  }
  throw new ImportFileError(
    file,
    "from",
    `import: cannot tell the format of ${file} (a VCR cassette has \`interactions:\`, a HAR file \`log.entries\`, a nock.back fixture is a JSON array of {scope, method, path}, an aimock file has \`fixtures\`); name it with --from ${IMPORT_FORMATS.join("|")}`,
  );
}
