/**
 * A `sqlite://` store through the opt-in better-sqlite3 driver loaded from
 * a build outside the project (`INVOCACHE_BETTER_SQLITE3`, its package
 * directory; it is not a dependency: docs/performance.md, "SQLite drivers"),
 * with the options `openStore(url, { sqliteDriver: "better-sqlite3" })`
 * gives it, for benches that cannot put that build on NODE_PATH before they
 * start. `load` alone serves a bench that also opens the raw backend.
 */
import { createRequire } from "node:module";
import { createBetterSqliteBackend } from "../../src/store/backends/better-sqlite3.js";
import { KeyvStore } from "../../src/store/keyv-store.js";

/** The build named by INVOCACHE_BETTER_SQLITE3, or undefined. */
export const BETTER_SQLITE3_BUILD: string | undefined =
  (process.env.INVOCACHE_BETTER_SQLITE3 ?? "") === ""
    ? undefined
    : process.env.INVOCACHE_BETTER_SQLITE3;

/** Loads the named build (call only when {@link BETTER_SQLITE3_BUILD} is set). */
export function loadBetterSqlite3Build(): unknown {
  if (BETTER_SQLITE3_BUILD === undefined) throw new Error("INVOCACHE_BETTER_SQLITE3 is not set");
  return createRequire(import.meta.url)(BETTER_SQLITE3_BUILD);
}

/** The store on `file` through that build. */
export function betterSqliteStore(file: string): KeyvStore {
  return new KeyvStore(
    `sqlite://${file}`,
    () => createBetterSqliteBackend(file, loadBetterSqlite3Build),
    // As src/store/open.ts opens a better-sqlite3 store; a longer timeout for loaded machines.
    { timeoutMs: 30_000, listsInKeyOrder: true, meta: "stored" },
  );
}
