/**
 * The CLI commands the viewer prints for a person to paste: every word
 * that comes from the data (a store URL, a cassette path) goes through the
 * one shell-quoting function, so a path with spaces, quotes, `$`, backticks
 * or `;` is one word and never runs anything. HTML escaping happens after
 * (the views' `html` template), and a browser's unescaping gives back
 * exactly this text.
 */
import { shellQuote } from "../shell/index.js";
import type { CatalogLocation } from "./catalog.js";

/**
 * The `--store URL` or `--cassette PATH` that points a CLI command at the
 * viewer's source, shell-quoted.
 *
 * @example
 * sourceFlag({ store: "sqlite://my dir/c.sqlite" }, "sqlite://my dir/c.sqlite")
 * // "--store 'sqlite://my dir/c.sqlite'"
 */
export function sourceFlag(location: CatalogLocation, url: string): string {
  return "store" in location
    ? `--store ${shellQuote(url)}`
    : `--cassette ${shellQuote(location.cassette)}`;
}

/**
 * `npx invocache <words…>`, each word shell-quoted, then `tail` as is (the
 * already-quoted source flag, or a `<placeholder>` the reader fills in).
 *
 * @example
 * cliCommand(["show", "3f2a9c0d1b7e"], " --store 'a b.sqlite'") // "npx invocache show 3f2a9c0d1b7e --store 'a b.sqlite'"
 */
export function cliCommand(words: readonly string[], tail = ""): string {
  return `npx invocache ${words.map(shellQuote).join(" ")}${tail}`;
}
