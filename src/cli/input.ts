/**
 * Reading what a command is given: a file or `-` (stdin), as text or as a
 * JSON/YAML document.
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { parse as parseYaml } from "yaml";
import { UsageError } from "./errors.js";
import type { Io } from "./io.js";

/**
 * The bytes of `path`, or of stdin for `-`.
 *
 * @throws UsageError when the file does not exist or cannot be read.
 * @example
 * const text = (await readInput("prompt.txt", io)).toString("utf8");
 */
export async function readInput(path: string, io: Io): Promise<Buffer> {
  if (path === "-") return io.stdin();
  try {
    return await readFile(path);
  } catch (error) {
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

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * `path`'s content as UTF-8 text (a leading BOM dropped).
 *
 * @throws UsageError when it is not valid UTF-8.
 * @example
 * const prompt = await readText("-", io); // all of stdin
 */
export async function readText(path: string, io: Io): Promise<string> {
  const bytes = await readInput(path, io);
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
