/**
 * Open a located source as a {@link Store}: the store its URL names, or a
 * cassette file. A folder of cassettes is many stores, one per file: open
 * one with {@link openFolderCassette}.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { cassetteStore } from "../cassette/index.js";
import { recordingCassetteStore } from "../cassette/internal.js";
import { openStore, type Store } from "../store/index.js";
import { SourceError } from "./errors.js";
import { CASSETTE_FILE } from "./files.js";
import type { SourceLocation } from "./locate.js";

/** Options of {@link openSourceStore}. */
export interface OpenSourceOptions {
  /** Open a store read-only (readers: the CLI's read commands, the viewer). Default false. */
  readOnly?: boolean;
  /**
   * A cassette is held open to record many calls (the proxy): each
   * acknowledged write is appended to the file, and close rewrites it once
   * (src/cassette/append.ts). Default false.
   */
  recording?: boolean;
}

/**
 * The store of a located store or cassette file.
 *
 * @throws SourceError for a folder of cassettes (open one file of it with
 *   {@link openFolderCassette}).
 * @example
 * const store = openSourceStore(locateSource("cassettes/a.yaml", { missing: "create" }));
 */
export function openSourceStore(location: SourceLocation, options: OpenSourceOptions = {}): Store {
  if (location.kind === "store")
    return openStore(location.url, { readOnly: options.readOnly === true });
  if (location.folder) {
    throw new SourceError(
      "cassette",
      "invalid",
      `${location.path} is a folder of cassettes, not one store; open one of its files (openFolderCassette)`,
      { path: location.path },
    );
  }
  return options.recording === true
    ? recordingCassetteStore(location.path)
    : cassetteStore(location.path);
}

/**
 * The cassette `file` (relative, ending in .yaml or .yml) under `folder`.
 *
 * @throws SourceError when `file` is absolute, leaves the folder (`..`) or is not a .yaml file.
 * @example
 * folderCassettePath("/app/cassettes", "test/a.yaml") // "/app/cassettes/test/a.yaml"
 */
export function folderCassettePath(folder: string, file: string, field = "cassette"): string {
  const fix = `name a .yaml file relative to ${folder}, e.g. tests/planner.yaml`;
  if (typeof file !== "string" || file === "" || file.includes("\0") || isAbsolute(file)) {
    throw new SourceError(field, "invalid", `${field} ${JSON.stringify(file)}: ${fix}`);
  }
  const path = resolve(folder, file);
  const rel = relative(folder, path);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new SourceError(
      field,
      "invalid",
      `${field} ${JSON.stringify(file)} leaves the cassette folder; ${fix}`,
    );
  }
  if (!CASSETTE_FILE.test(path)) {
    throw new SourceError(
      field,
      "invalid",
      `${field} ${JSON.stringify(file)} is not a .yaml file; ${fix}`,
    );
  }
  return path;
}

/**
 * The store of one cassette file of a folder (created on its first write).
 *
 * @example
 * const store = openFolderCassette("/app/cassettes", "test/a.yaml");
 */
export function openFolderCassette(
  folder: string,
  file: string,
  field?: string,
  options: Pick<OpenSourceOptions, "recording"> = {},
): Store {
  const path = folderCassettePath(folder, file, field);
  return options.recording === true ? recordingCassetteStore(path) : cassetteStore(path);
}
