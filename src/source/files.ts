import { readdirSync } from "node:fs";
import { join } from "node:path";

/** The file names a cassette has. */
export const CASSETTE_FILE = /\.ya?ml$/i;

/**
 * Every cassette (`.yaml`, `.yml`) under `dir`, recursively, sorted by name
 * at each level; dot folders and node_modules are skipped. The one listing
 * the CLI, the viewer and the proxy use.
 *
 * @example
 * cassetteFiles("cassettes") // ["/app/cassettes/test/a.yaml", …]
 */
export function cassetteFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && CASSETTE_FILE.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}
