/**
 * `invocache/register`: global mode with no code change.
 *
 * ```sh
 * node --import invocache/register app.js
 * INVOCACHE_STORE=cassettes/app.yaml INVOCACHE_MODE=replay node --import invocache/register app.js
 * ```
 *
 * Importing this module turns on {@link interceptGlobally} for the process,
 * configured by environment variables (docs/global-mode.md):
 *
 * - `INVOCACHE_STORE`: a store URL (`sqlite://…`, `redis://…`,
 *   `postgres://…`) or a cassette file (a path ending in `.yaml`/`.yml`).
 *   Default: `.invocache/cache.sqlite` under the working folder.
 * - `INVOCACHE_MODE`: the mode; default `replay` under `CI`, else `auto`.
 *
 * The recorder is closed when the process has nothing left to do
 * (`beforeExit`); recordings are written as they are made, so a process
 * that ends with `process.exit()` keeps them too.
 */
import { cassetteStore, type Store } from "../index.js";
import { interceptGlobally } from "./global.js";

/** The store `INVOCACHE_STORE` names: a URL as it is, a `.yaml`/`.yml` path as a cassette. */
function storeFromEnv(value: string | undefined): Store | string | undefined {
  const v = value?.trim();
  if (v === undefined || v === "") return undefined;
  return /\.ya?ml$/i.test(v) && !/^[a-z][a-z0-9+.-]*:\/\//i.test(v) ? cassetteStore(v) : v;
}

const handle = await interceptGlobally({ store: storeFromEnv(process.env.INVOCACHE_STORE) });
process.once("beforeExit", () => {
  void handle.restore();
});
