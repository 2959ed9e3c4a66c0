/**
 * Reading what a command is given: a file or `-` (stdin), as text or as a
 * JSON/YAML document.
 */
import { open } from "node:fs/promises";
import { extname } from "node:path";
import { parse as parseYaml } from "yaml";
import { UsageError } from "./errors.js";
import { formatBytes } from "./format.js";
import { InputTooLargeError, type Io } from "./io.js";

/**
 * The most a command reads from one input file or stdin, unless told
 * otherwise (`normalize --max-bytes`): far above any request file or prompt,
 * and a bound for `/dev/zero`, a FIFO that never ends, or a mistaken path.
 */
export const DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** How much {@link readInput} reads, and what to tell the user past it. */
export interface InputLimit {
  maxBytes: number;
  /** How to raise the limit, for the message, e.g. `pass --max-bytes 256MiB`. */
  fix?: string;
}

const DEFAULT_LIMIT: InputLimit = { maxBytes: DEFAULT_MAX_INPUT_BYTES };

/**
 * The bytes of `path`, or of stdin for `-`, at most `limit.maxBytes` of them.
 *
 * @throws UsageError when the file does not exist, cannot be read, or is
 *   larger than the limit (the message names the limit and how to raise it).
 * @example
 * const text = (await readInput("prompt.txt", io)).toString("utf8");
 */
export async function readInput(
  path: string,
  io: Io,
  limit: InputLimit = DEFAULT_LIMIT,
): Promise<Buffer> {
  try {
    return path === "-" ? await io.stdin(limit.maxBytes) : await readBounded(path, limit.maxBytes);
  } catch (error) {
    if (error instanceof InputTooLargeError) {
      throw new UsageError(
        `${label(path)} is larger than ${formatBytes(limit.maxBytes)}, the most this command reads; ${limit.fix ?? "check that it is the right input"}`,
        { cause: error },
      );
    }
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : (error as Error).message;
    throw new UsageError(`cannot read ${path}: ${why}; pass a file path, or - for stdin`, {
      cause: error,
    });
  }
}

/** Read a file in chunks, never more than `maxBytes + 1` bytes (a device may be endless). */
async function readBounded(path: string, maxBytes: number): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks, total);
      chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) throw new InputTooLargeError(maxBytes);
    }
  } finally {
    await handle.close();
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * `path`'s content as UTF-8 text (a leading BOM dropped).
 *
 * @throws UsageError when it is not valid UTF-8.
 * @example
 * const prompt = await readText("-", io); // all of stdin
 */
export async function readText(path: string, io: Io, limit?: InputLimit): Promise<string> {
  const bytes = await readInput(path, io, limit);
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw new UsageError(`${label(path)} is not UTF-8 text; convert it first`, { cause: error });
  }
}

/**
 * A JSON or YAML document: `.yaml`/`.yml` files are YAML, `.json` files
 * JSON, anything else (stdin included) JSON, then YAML.
 *
 * @throws UsageError naming the file and what is wrong with it.
 * @example
 * const doc = await readDocument("request.yaml", io);
 */
export async function readDocument(path: string, io: Io): Promise<unknown> {
  const text = await readText(path, io);
  const ext = path === "-" ? "" : extname(path).toLowerCase();
  if (ext === ".yaml" || ext === ".yml") return yaml(text, path);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    if (ext === ".json") {
      throw new UsageError(`${label(path)} is not valid JSON: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return yaml(text, path);
  }
}

function yaml(text: string, path: string): unknown {
  try {
    return parseYaml(text) as unknown;
  } catch (error) {
    const first = ((error as Error).message ?? "").split("\n")[0];
    throw new UsageError(`${label(path)} is neither JSON nor YAML: ${first}`, { cause: error });
  }
}

/**
 * How a path is named in messages.
 *
 * @example
 * label("-") // "stdin"
 */
export function label(path: string): string {
  return path === "-" ? "stdin" : path;
}
