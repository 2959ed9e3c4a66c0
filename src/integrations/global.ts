/**
 * `invocache/global`: record and replay every model-API request the process
 * makes, without handing our `fetch` to anything. One call:
 *
 * ```ts
 * import { interceptGlobally } from "invocache/global";
 * const handle = await interceptGlobally({ store: "sqlite://.invocache/cache.sqlite" });
 * // … code and libraries that create their own OpenAI / Anthropic / any clients …
 * await handle.restore();
 * ```
 *
 * or no code at all: `node --import invocache/register app.js` (register.ts).
 *
 * Requests made through `fetch` (undici) and through `node:http`/`node:https`
 * are intercepted with `@mswjs/interceptors` (an optional peer, loaded only
 * by this subpath). Each intercepted request is handed, as a `Request`, to a
 * `createFetch` built from the same options: the identity, what is stored,
 * the miss answer are exactly createFetch's, because it is createFetch that
 * decides. What createFetch would pass straight through (not a JSON POST that
 * looks like a model call) is left alone by the interceptor, so it reaches
 * the network as the caller made it.
 *
 * Why @mswjs/interceptors and not undici's dispatcher interceptors: a
 * dispatcher sees only what goes through undici (`fetch`), never
 * `node:http`/`https`, which older SDKs, axios and many libraries use. The
 * interceptors library patches both (and is what msw and nock are built on).
 *
 * No recursion: the upstream call made while recording goes through the
 * `fetch` captured before the interceptors were applied, which they do not
 * see, so it is never intercepted again.
 */
import type { Interceptor } from "@mswjs/interceptors";
import { type CreateFetchOptions, createFetch } from "../adapters/index.js";
import {
  createRecorder,
  InvalidOptionError,
  type Mode,
  type Recorder,
  type RecorderOptions,
  type Store,
} from "../index.js";

/** Options of {@link interceptGlobally}: createFetch's, and where recordings go. */
export interface InterceptGloballyOptions extends Omit<CreateFetchOptions, "recorder" | "fetch"> {
  /** The recorder to record and replay through. Give this or `store`. */
  recorder?: Recorder | undefined;
  /**
   * Without `recorder`: a store or store URL (`sqlite://…`, `redis://…`, a
   * `cassetteStore(…)`); a recorder is made over it and closed by `restore()`.
   * Default (neither given): `.invocache/cache.sqlite` under the working folder.
   */
  store?: Store | string | undefined;
  /** Without `recorder`: the mode. Default `INVOCACHE_MODE`, else `replay` under `CI`, else `auto`. */
  mode?: Mode | undefined;
  /** Without `recorder`: other recorder options. */
  recorderOptions?: Omit<RecorderOptions, "store" | "mode"> | undefined;
}

/** A running global interception. */
export interface GlobalInterception {
  /** The recorder every intercepted model call goes through. */
  readonly recorder: Recorder;
  /**
   * Put `fetch`, `node:http` and `node:https` back as they were, and close
   * the recorder if `interceptGlobally` made it. Idempotent.
   */
  restore(): Promise<void>;
  /** `await using handle = await interceptGlobally(…)`: the same as `restore()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** The one interception of this process (two would see each other's requests). */
let active: GlobalInterception | undefined;

/** Thrown by the pass-through `fetch` below: "let the interceptor send it as it is". */
const PASS_THROUGH = Symbol("invocache.passThrough");

/**
 * Record and replay every model-API request of the process (`fetch`,
 * `node:http`, `node:https`) through a recorder, with `createFetch`'s
 * identity; every other request passes through untouched.
 *
 * @throws InvalidOptionError (field `interceptGlobally`) when one is already
 *   active in this process; the options' own errors as createFetch throws them.
 * @example
 * const handle = await interceptGlobally({ store: "sqlite://.invocache/cache.sqlite" });
 * const openai = new OpenAI(); // no fetch option: still recorded
 * await openai.chat.completions.create({ model: "gpt-5", messages });
 * await handle.restore();
 */
export async function interceptGlobally(
  options: InterceptGloballyOptions = {},
): Promise<GlobalInterception> {
  if (active !== undefined) {
    throw new InvalidOptionError(
      "interceptGlobally",
      "interceptGlobally: global interception is already on in this process; call restore() on the first handle before starting another (or reuse it: handle.recorder)",
    );
  }
  const { recorder: given, store, mode, recorderOptions, ...fetchOptions } = options;
  if (given !== undefined && (store !== undefined || mode !== undefined)) {
    throw new InvalidOptionError(
      given === undefined ? "store" : "recorder",
      "interceptGlobally: pass either { recorder } or { store, mode? }, not both: the store and mode belong to the recorder",
    );
  }
  // One after the other: Jest's ESM loader fails concurrent imports that
  // share a dependency ("request for '@open-draft/logger' is not in cache").
  const { BatchInterceptor } = await import("@mswjs/interceptors");
  const { FetchInterceptor } = await import("@mswjs/interceptors/fetch");
  const { ClientRequestInterceptor } = await import("@mswjs/interceptors/ClientRequest");
  const recorder =
    given ??
    createRecorder({
      ...recorderOptions,
      ...(store === undefined ? {} : { store }),
      ...(mode === undefined ? {} : { mode }),
    });

  // The real network, as it is before the interceptors patch `fetch`.
  const networkFetch = globalThis.fetch;
  const intercepted = new WeakSet<Request>();
  const invocacheFetch = createFetch({
    ...fetchOptions,
    recorder,
    // createFetch calls its upstream with the request itself when it passes
    // it through (not a model call), and with a clone when it goes upstream
    // for a recording: the first is left to the interceptor, unchanged.
    fetch: (input, init) => {
      if (input instanceof Request && intercepted.has(input)) throw PASS_THROUGH;
      return networkFetch(input, init);
    },
  });

  const interceptor = new BatchInterceptor({
    name: "invocache-global",
    interceptors: [new FetchInterceptor(), new ClientRequestInterceptor()] as Interceptor<
      // biome-ignore lint/suspicious/noExplicitAny: the two interceptors' event maps are the same HTTP one
      any
    >[],
  });
  interceptor.on(
    "request",
    async ({ request, controller }: { request: Request; controller: RequestControl }) => {
      intercepted.add(request);
      try {
        controller.respondWith(await invocacheFetch(request));
      } catch (error) {
        if (error === PASS_THROUGH) return; // no answer: the request goes out as made
        controller.errorWith(error instanceof Error ? error : new Error(String(error)));
      }
    },
  );
  interceptor.apply();

  let restored: Promise<void> | undefined;
  const handle: GlobalInterception = {
    recorder,
    restore() {
      restored ??= (async () => {
        interceptor.dispose();
        if (active === handle) active = undefined;
        if (given === undefined) await recorder.close();
      })();
      return restored;
    },
    [Symbol.asyncDispose]() {
      return handle.restore();
    },
  };
  active = handle;
  return handle;
}

/** What this module uses of the interceptors' request controller. */
interface RequestControl {
  respondWith(response: Response): void;
  errorWith(reason?: Error): void;
}
