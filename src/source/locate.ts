/**
 * Where a source is: a store URL, or a cassette file or folder. The CLI's
 * `--store`/`--cassette`, the viewer's location and the proxy's `--store`
 * are all resolved here, so a path means the same thing to each of them.
 * Nothing is opened or created: this only looks.
 */
import { accessSync, constants, type Stats, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { defaultStoreUrl, parseStoreUrl } from "../store/index.js";
import { SourceError } from "./errors.js";
import { CASSETTE_FILE } from "./files.js";

/** A located source. */
export type SourceLocation =
  | {
      kind: "store";
      /** The URL to open (absolute for SQLite). */
      url: string;
      /** The redacted URL, for messages. */
      display: string;
      /** The SQLite file, for a SQLite store. */
      path: string | undefined;
      /** False for a SQLite file that does not exist yet. */
      exists: boolean;
    }
  | {
      kind: "cassette";
      /** Absolute path of the file or folder. */
      path: string;
      /** A folder of cassettes rather than one file. */
      folder: boolean;
      /** False for a cassette file that does not exist yet. */
      exists: boolean;
    };

/**
 * What names a source: `{ store }` (a store URL; none = the project's
 * default SQLite file), `{ cassette }` (a file or folder), or one string that
 * is either (a URL has a scheme; anything else is a cassette path).
 */
export type SourceSpec = { store?: string | undefined; cassette?: string | undefined } | string;

/** Options of {@link locateSource}. */
export interface LocateOptions {
  /** Relative paths resolve against it. Default `process.cwd()`. */
  cwd?: string;
  /**
   * A path that does not exist: `"error"` (default; read-only commands never
   * create a store), `"empty"` (an empty source, the viewer), or `"create"`
   * (created on the first write, the proxy; a folder must exist).
   */
  missing?: "error" | "empty" | "create";
  /** How the caller calls its store and cassette fields in messages. Default `--store`, `--cassette`. */
  names?: { store?: string; cassette?: string };
}

/**
 * Locate the source `spec` names.
 *
 * @throws SourceError naming the field: both store and cassette given, a
 *   malformed store URL, a path that does not exist (with `missing: "error"`),
 *   a SQLite path that is a folder, or a path that cannot be read.
 * @example
 * locateSource("cassettes")                      // { kind: "cassette", folder: true, … }
 * locateSource("sqlite://.invocache/cache.sqlite") // { kind: "store", … }
 */
export function locateSource(spec: SourceSpec, options: LocateOptions = {}): SourceLocation {
  const cwd = options.cwd ?? process.cwd();
  const missing = options.missing ?? "error";
  const storeName = options.names?.store ?? "--store";
  const cassetteName = options.names?.cassette ?? "--cassette";
  let store: string | undefined;
  let cassette: string | undefined;
  if (typeof spec === "string") {
    if (spec === "") {
      throw new SourceError(
        storeName,
        "invalid",
        `${storeName} needs a store URL (sqlite://…, postgres://…), a cassette file (.yaml) or a folder of cassettes`,
      );
    }
    // A scheme makes it a URL; Windows drive letters are paths.
    if (/^[a-zA-Z][a-zA-Z0-9+.-]+:\/\//.test(spec)) store = spec;
    else cassette = spec;
  } else {
    store = spec.store;
    cassette = spec.cassette;
    if (store !== undefined && cassette !== undefined) {
      throw new SourceError(storeName, "invalid", `pass ${storeName} or ${cassetteName}, not both`);
    }
  }
  const cassetteField = typeof spec === "string" ? storeName : cassetteName;
  if (cassette !== undefined) return locateCassette(cassette, cassetteField, cwd, missing);
  return locateStore(store, storeName, cwd, missing);
}

function locateCassette(
  given: string,
  field: string,
  cwd: string,
  missing: NonNullable<LocateOptions["missing"]>,
): SourceLocation {
  if (given === "") {
    throw new SourceError(
      field,
      "invalid",
      `${field} needs a path: a cassette file or a folder of them`,
    );
  }
  const path = resolve(cwd, given);
  const expected = "a cassette file or a folder of cassettes";
  const info = look(path, `${field} ${given}`, expected, missing === "error", undefined);
  if (info === undefined) {
    if (missing === "create" && !CASSETTE_FILE.test(path)) {
      throw new SourceError(
        field,
        "missing",
        `${field} ${given}: no such folder (${path}); create it (mkdir -p) or name a cassette file ending in .yaml`,
        { path },
      );
    }
    return { kind: "cassette", path, folder: !CASSETTE_FILE.test(path), exists: false };
  }
  return { kind: "cassette", path, folder: info.isDirectory(), exists: true };
}

function locateStore(
  given: string | undefined,
  field: string,
  cwd: string,
  missing: NonNullable<LocateOptions["missing"]>,
): SourceLocation {
  const url = given ?? defaultStoreUrl(cwd);
  let where: ReturnType<typeof parseStoreUrl>;
  try {
    where = parseStoreUrl(url, cwd);
  } catch (error) {
    throw new SourceError(field, "invalid", `${field}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (where.kind !== "sqlite" || where.path === ":memory:") {
    return { kind: "store", url, display: where.url, path: undefined, exists: true };
  }
  const located = { kind: "store" as const, url: where.url, display: where.url, path: where.path };
  // The default store not there yet is the first-run state, not a mistake.
  const info = look(
    where.path,
    `${field} ${given ?? url}`,
    "a SQLite store file",
    given !== undefined && missing === "error",
    where.url,
  );
  if (info?.isDirectory()) {
    throw new SourceError(
      field,
      "invalid",
      `${field} ${given ?? url}: ${where.path} is a folder; pass the SQLite file, e.g. sqlite://${join(where.path, "cache.sqlite")}`,
      { path: where.path },
    );
  }
  return { ...located, exists: info !== undefined };
}

/**
 * The file or folder at `path`, readable, or undefined when it does not
 * exist and that is allowed. Missing when it must exist: the path is wrong.
 * Unreadable: an error saying why, never "empty".
 */
function look(
  path: string,
  given: string,
  expected: string,
  mustExist: boolean,
  url: string | undefined,
): Stats | undefined {
  let info: Stats;
  try {
    info = statSync(path);
    accessSync(path, constants.R_OK | (info.isDirectory() ? constants.X_OK : 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      if (!mustExist) return undefined;
      throw new SourceError(
        given.split(" ")[0] ?? given,
        "missing",
        `${given}: no such file or folder (${path}); pass ${expected}${url === undefined ? "" : " (read-only commands never create a store)"}`,
        { path },
      );
    }
    throw unreadable(error, given.split(" ")[0] ?? given, path, url);
  }
  return info;
}

function unreadable(error: unknown, field: string, path: string, url: string | undefined) {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === "EACCES" || code === "EPERM"
      ? `permission denied (${code})`
      : String((error as Error).message);
  return new SourceError(
    field,
    "unreadable",
    `cannot read ${url ?? path}: ${why}; check that you may read ${path} and search its folders (ls -ld)`,
    { path, cause: error },
  );
}
