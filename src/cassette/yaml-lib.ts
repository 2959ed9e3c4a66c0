/**
 * The `yaml` package, loaded on first use. Importing it costs ~180–330 ms of
 * a process's start, and a cassette in the form our writer emits is read
 * without it (fast-parse.ts): only a hand-edited file, an error's line and
 * column, or a write needs the full parser and emitter. `yaml` ships a
 * CommonJS build for Node, so a synchronous `require` keeps `parseCassette`
 * and `emitCassette` synchronous.
 */
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

let lib: typeof Yaml | undefined;

/** The `yaml` module (required once). */
export function yaml(): typeof Yaml {
  lib ??= createRequire(import.meta.url)("yaml") as typeof Yaml;
  return lib;
}
