/**
 * Where a view's links point. The server and the exported report render the
 * same views; only the links differ: `/entry/…` on the server, `#/entry/…`
 * in the one-file report, whose client script shows the matching section.
 */

/** Builds hrefs for one rendering mode. */
export interface Links {
  readonly mode: "server" | "export";
  /** The href for a viewer path such as `/entry/<key>`. */
  to(path: string): string;
}

/** URL-encode one path segment or query value. */
export const enc = encodeURIComponent;

export const paths = {
  overview: (query = ""): string => (query === "" ? "/" : `/?${query}`),
  run: (namespace: string, runId: string): string => `/run/${enc(namespace)}/${enc(runId)}`,
  entry: (key: string, file?: string): string =>
    `/entry/${enc(key)}${file === undefined ? "" : `?file=${enc(file)}`}`,
  diff: (a: string, b: string): string => `/diff?a=${enc(a)}&b=${enc(b)}`,
  compare: (a: string, b: string): string => `/compare?a=${enc(a)}&b=${enc(b)}`,
  misses: (): string => "/misses",
  cassettes: (): string => "/cassettes",
};

export function serverLinks(): Links {
  return { mode: "server", to: (path) => path };
}

export function exportLinks(): Links {
  return { mode: "export", to: (path) => `#${path}` };
}
