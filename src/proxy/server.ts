/**
 * `createProxy`: an HTTP server in front of model APIs that records and
 * replays through the library's `createFetch`, so any language and any SDK
 * gets the same identities as a Node process calling `createFetch` itself.
 *
 * Built on node:http, not a server library: it adds no dependency, and the
 * proxy needs direct control of the two things a framework hides — reading
 * the request body with a hard bound, and writing each SSE chunk to the
 * socket the moment it arrives (with backpressure) while it is recorded.
 *
 * Every request: token check → path (`/<upstream>/…`, `/_session/<sid>/…`,
 * or a control endpoint under `/_invocache/`) → context from the session and
 * `x-invocache-*` headers → the upstream Request (headers minus hop-by-hop
 * and `x-invocache-*`) → `createFetch` inside `withInvocation` (and the run)
 * → the Response written back as it comes. All replay policy stays in the
 * recorder; the proxy only translates HTTP to a fetch call.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createFetchAnswerer,
  type FetchAnswerer,
  type FetchLike,
  MISS_HEADERS,
  MISS_STATUS,
  missErrorBody,
  type ParsedBody,
  withInvocation,
} from "../adapters/index.js";
import { InvocacheError, StoreError } from "../errors.js";
import {
  createRecorder,
  DivergenceError,
  EntryTooLargeError,
  type Mode,
  type Recorder,
  ReplayMissError,
  type RunInfo,
  resolveMode,
} from "../recorder/index.js";
import {
  folderCassettePath,
  locateSource,
  openFolderCassette,
  openSourceStore,
  SourceError,
  type SourceLocation,
} from "../source/index.js";
import type { Store } from "../store/index.js";
import { INVOCACHE_VERSION } from "../version.js";
import { errorBody, type ProviderShape, providerShape } from "./answers.js";
import { contextFromHeaders, HEADER_PREFIX, type ProxyContext, sessionContext } from "./context.js";
import { ProxyError } from "./errors.js";
import { HOP_BY_HOP, readBody, sendJson, sendJsonAnswer, sendResponse } from "./http.js";
import { SessionMisses } from "./session-misses.js";
import { createUpstreamFetch, type UpstreamFetch } from "./upstream-fetch.js";
import { resolveUpstreams, upstreamUrl } from "./upstreams.js";

/** Options of {@link createProxy}. */
export interface ProxyOptions {
  /**
   * Where recordings are kept: a store URL (`sqlite://…`, `postgres://…`,
   * `redis://…`, `memory://`), a cassette file (`.yaml`, created on the
   * first write) or a folder of cassettes (each call names its file with
   * `x-invocache-cassette`), or an open {@link Store} (not closed by the proxy).
   */
  store: string | Store;
  /** The mode of calls that do not name one. Default: as the library's (`INVOCACHE_MODE`, `replay` under `CI`, else `auto`). */
  mode?: Mode | undefined;
  /** Address to bind. Default `127.0.0.1`; any other needs `token`. */
  host?: string | undefined;
  /** Port; 0 (default) picks a free one. */
  port?: number | undefined;
  /** Required when `host` is not loopback: every request must send `x-invocache-token: <token>`. */
  token?: string | undefined;
  /** Upstreams added or overriding the built-in `openai`, `anthropic`, `gemini`: `{ name: baseUrl }`. */
  upstreams?: Readonly<Record<string, string>> | undefined;
  /** Replay streams with their recorded timing scaled: 0 (default) as fast as possible, 1 as recorded, 2 twice as fast (createFetch's `replaySpeed`). */
  replaySpeed?: number | undefined;
  /** Store namespace. Default `default`. */
  namespace?: string | undefined;
  /** Largest request body accepted, bytes. Default: the recorder's `maxEntryBytes` (8 MiB). */
  maxBodyBytes?: number | undefined;
  /** Time a client has to send its request headers (slow clients are cut). Default 30 s. */
  headersTimeoutMs?: number | undefined;
  /** Time a client has to send its whole request. Default 120 s. */
  requestTimeoutMs?: number | undefined;
  /**
   * The fetch used to call upstream. Default: node:http(s) with keep-alive
   * agents (upstream-fetch.ts); pass `globalThis.fetch` for undici's.
   */
  fetch?: FetchLike | undefined;
  /** Relative store and cassette paths resolve against it. Default `process.cwd()`. */
  cwd?: string | undefined;
  /** Environment the default mode is read from. Default `process.env`. */
  env?: Record<string, string | undefined> | undefined;
  /** Where one-line notes of failed calls go (never a header, body or credential). Default: nowhere. */
  log?: ((line: string) => void) | undefined;
}

/** A running proxy. */
export interface InvocacheProxy {
  /** `http://127.0.0.1:PORT` (or the bound host): clients use `<url>/openai/v1` and so on. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The mode of calls that do not name one. */
  readonly mode: Mode;
  /** The store, as shown in messages (passwords redacted). */
  readonly store: string;
  /** Calls being served now. */
  readonly inFlight: number;
  /**
   * Stop accepting connections, let in-flight calls finish, end open runs,
   * write pending recordings and close the store. Idempotent.
   */
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost", "::ffff:127.0.0.1"]);
const SESSION_ID = /^[A-Za-z0-9._~-]{1,128}$/;
const CONTROL_BODY_LIMIT = 64 * 1024;

/** One recorder and its createFetch (answering JSON as data), per mode and cassette file. */
interface Lane {
  recorder: Recorder;
  answer: FetchAnswerer["answer"];
  runs: Map<string, OpenRun>;
}

interface OpenRun {
  info: Promise<RunInfo>;
  end: () => void;
  done: Promise<void>;
}

/**
 * Start a record/replay proxy. Resolves once it listens.
 *
 * @throws ProxyError when `host` is not loopback and no `token` is given, or
 *   an upstream, port or limit is malformed; SourceError for a store path
 *   that cannot be used.
 * @example
 * const proxy = await createProxy({ store: "sqlite://.invocache/cache.sqlite", mode: "auto" });
 * const openai = new OpenAI({ baseURL: `${proxy.url}/openai/v1` });
 * await proxy.close();
 */
export async function createProxy(options: ProxyOptions): Promise<InvocacheProxy> {
  if (options === null || typeof options !== "object") {
    throw new ProxyError(
      "ERR_PROXY_OPTIONS",
      "options",
      "createProxy: pass { store, mode?, port?, … }",
    );
  }
  const host = options.host ?? "127.0.0.1";
  const token = options.token;
  if (token !== undefined && (typeof token !== "string" || token.length < 8)) {
    throw new ProxyError(
      "ERR_PROXY_TOKEN",
      "token",
      "the token must be a string of at least 8 characters, e.g. --token $(openssl rand -hex 16)",
    );
  }
  if (!LOOPBACK.has(host) && token === undefined) {
    throw new ProxyError(
      "ERR_PROXY_TOKEN_REQUIRED",
      "host",
      `binding ${host} lets other machines use this proxy (and spend your model quota): add --token T (clients send x-invocache-token: T), or bind 127.0.0.1`,
    );
  }
  const port = options.port ?? 0;
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535) {
    throw new ProxyError(
      "ERR_PROXY_OPTIONS",
      "port",
      `port must be an integer 0–65535, got ${String(port)}`,
    );
  }
  const replaySpeed = options.replaySpeed ?? 0;
  if (typeof replaySpeed !== "number" || !Number.isFinite(replaySpeed) || replaySpeed < 0) {
    throw new ProxyError(
      "ERR_PROXY_OPTIONS",
      "replaySpeed",
      `replaySpeed must be a number >= 0 (0 as fast as possible, 1 as recorded), got ${String(replaySpeed)}`,
    );
  }
  let mode: Mode;
  try {
    mode = resolveMode(options.mode, options.env ?? process.env);
  } catch (error) {
    throw new ProxyError("ERR_PROXY_OPTIONS", "mode", (error as Error).message, { cause: error });
  }
  const upstreams = resolveUpstreams(options.upstreams);
  // Made once the options are checked, closed with the proxy (its idle keep-alive sockets).
  const ownFetch = options.fetch === undefined ? createUpstreamFetch() : undefined;
  const upstreamFetch = options.fetch ?? (ownFetch as UpstreamFetch).fetch;
  const cwd = options.cwd ?? process.cwd();

  // The store: opened once, shared by every lane (recorders do not close it).
  let location: SourceLocation | undefined;
  let shared: Store | undefined;
  const ownStores = new Map<string, Store>();
  if (typeof options.store === "string") {
    location = locateSource(options.store, {
      cwd,
      missing: "create",
      names: { store: "store", cassette: "store" },
    });
    if (location.kind === "store" || !location.folder) {
      // Held open for many recordings: a cassette appends each one (src/cassette/append.ts).
      shared = openSourceStore(location, { recording: true });
      ownStores.set("", shared);
    }
  } else if (options.store !== null && typeof options.store === "object") {
    shared = options.store;
  } else {
    throw new ProxyError(
      "ERR_PROXY_OPTIONS",
      "store",
      "store must be a store URL, a cassette file or folder, or a Store",
    );
  }
  const folder = location?.kind === "cassette" && location.folder ? location.path : undefined;
  const storeLabel =
    location === undefined
      ? (shared?.url ?? "store")
      : location.kind === "store"
        ? location.display
        : `cassette://${location.path}`;

  const lanes = new Map<string, Lane>();
  const laneFor = (callMode: Mode, cassette: string | undefined): Lane => {
    const file = folder === undefined ? undefined : folderFile(folder, cassette);
    const key = `${callMode}\u0000${file ?? ""}`;
    let lane = lanes.get(key);
    if (lane !== undefined) return lane;
    let store = shared;
    if (file !== undefined) {
      store = ownStores.get(file);
      if (store === undefined) {
        store = openFolderCassette(
          folder as string,
          cassette as string,
          `${HEADER_PREFIX}cassette`,
          {
            recording: true,
          },
        );
        ownStores.set(file, store);
      }
    } else if (cassette !== undefined) {
      throw new ProxyError(
        "ERR_PROXY_CONTEXT",
        `${HEADER_PREFIX}cassette`,
        `${HEADER_PREFIX}cassette names a file under a folder of cassettes, but this proxy's store is ${storeLabel}; start it with --store <folder> or drop the header`,
      );
    }
    const recorder = createRecorder({
      store: store as Store,
      mode: callMode,
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    lane = {
      recorder,
      answer: createFetchAnswerer({
        recorder,
        replaySpeed,
        fetch: upstreamFetch,
      }).answer,
      runs: new Map(),
    };
    lanes.set(key, lane);
    return lane;
  };

  // The first lane is made now: a store that cannot be opened fails the start, not the first call.
  const defaultLane = folder === undefined ? laneFor(mode, undefined) : undefined;
  const maxBody = options.maxBodyBytes ?? defaultLane?.recorder.maxEntryBytes ?? 8 * 1024 * 1024;
  if (!Number.isSafeInteger(maxBody) || maxBody <= 0) {
    throw new ProxyError(
      "ERR_PROXY_OPTIONS",
      "maxBodyBytes",
      "maxBodyBytes must be a positive integer",
    );
  }

  const sessions = new Map<string, ProxyContext>();
  const sessionMisses = new SessionMisses();
  const inFlight = new Set<Promise<void>>();
  const log = options.log ?? (() => {});
  const tokenDigest = token === undefined ? undefined : sha256(token);

  const runFor = (lane: Lane, runId: string): Promise<RunInfo> => {
    let open = lane.runs.get(runId);
    if (open === undefined) {
      let end!: () => void;
      const gate = new Promise<void>((resolve) => {
        end = resolve;
      });
      let started!: (run: RunInfo) => void;
      const info = new Promise<RunInfo>((resolve) => {
        started = resolve;
      });
      const done = lane.recorder.run(
        async (run) => {
          started(run);
          await gate;
        },
        { runId },
      );
      open = { info, end, done };
      lane.runs.set(runId, open);
    }
    return open.info;
  };

  /** End every open run named `runId`; resolves to how many there were. */
  const endRuns = async (runId: string | undefined): Promise<number> => {
    const ending: Promise<void>[] = [];
    for (const lane of lanes.values()) {
      for (const [id, open] of lane.runs) {
        if (runId !== undefined && id !== runId) continue;
        lane.runs.delete(id);
        open.end();
        ending.push(open.done);
      }
    }
    const results = await Promise.allSettled(ending);
    const failed = results.find((r) => r.status === "rejected");
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    return ending.length;
  };

  const authorized = (req: IncomingMessage): boolean => {
    if (tokenDigest === undefined) return true;
    const sent = req.headers[`${HEADER_PREFIX}token`];
    if (typeof sent !== "string") return false;
    return timingSafeEqual(sha256(sent), tokenDigest);
  };

  const control = async (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
  ): Promise<void> => {
    const method = req.method ?? "GET";
    if (path === "/_invocache/health" && (method === "GET" || method === "HEAD")) {
      sendJson(res, 200, { ok: true, version: INVOCACHE_VERSION, mode, store: storeLabel });
      return;
    }
    const missesOf = /^\/_invocache\/sessions\/([^/]+)\/misses$/.exec(path);
    if (missesOf !== null && method === "GET") {
      const sid = checkSessionId(decodeURIComponent(missesOf[1] as string));
      if (!sessions.has(sid)) throw unknownSession(sid);
      sendJson(res, 200, sessionMisses.of(sid));
      return;
    }
    const session = /^\/_invocache\/sessions\/([^/]+)$/.exec(path);
    if (session !== null) {
      const sid = checkSessionId(decodeURIComponent(session[1] as string));
      if (method === "DELETE") {
        sessions.delete(sid);
        sessionMisses.drop(sid);
        res.writeHead(204).end();
        return;
      }
      if (method === "GET") {
        const current = sessions.get(sid);
        if (current === undefined) throw unknownSession(sid);
        sendJson(res, 200, current);
        return;
      }
      if (method === "PUT" || method === "PATCH") {
        const body = parseControlJson(await readBody(req, CONTROL_BODY_LIMIT));
        const next = sessionContext(body, sessions.get(sid) ?? {}, method === "PUT");
        // A cassette or mode that cannot be used is refused now, not on the first call.
        if (next.cassette !== undefined) laneFor(next.mode ?? mode, next.cassette);
        sessions.set(sid, next);
        sendJson(res, 200, next);
        return;
      }
    }
    const run = /^\/_invocache\/runs\/([^/]+)$/.exec(path);
    if (run !== null && method === "DELETE") {
      const ended = await endRuns(decodeURIComponent(run[1] as string));
      if (ended === 0) {
        throw new ProxyError("ERR_PROXY_RUN", "run", "no open run has that id", { status: 404 });
      }
      res.writeHead(204).end();
      return;
    }
    throw new ProxyError(
      "ERR_PROXY_CONTROL",
      "path",
      `${method} ${path} is not a control endpoint; see GET /_invocache/health, PUT|PATCH|GET|DELETE /_invocache/sessions/<sid>, GET /_invocache/sessions/<sid>/misses, DELETE /_invocache/runs/<run>`,
      { status: 404 },
    );
  };

  const forward = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    shapeOf: { shape: ProviderShape },
  ): Promise<void> => {
    let ctx: ProxyContext = {};
    let rest = url.pathname;
    let sid: string | undefined;
    if (rest.startsWith("/_session/")) {
      const end = rest.indexOf("/", "/_session/".length);
      sid = checkSessionId(
        decodeURIComponent(rest.slice("/_session/".length, end === -1 ? undefined : end)),
      );
      const session = sessions.get(sid);
      if (session === undefined) throw unknownSession(sid);
      ctx = { ...session };
      rest = end === -1 ? "/" : rest.slice(end);
    }
    const slash = rest.indexOf("/", 1);
    const name = decodeURIComponent(rest.slice(1, slash === -1 ? undefined : slash));
    const base = upstreams.get(name);
    if (base === undefined) {
      throw new ProxyError(
        "ERR_PROXY_UPSTREAM",
        "upstream",
        `no upstream is named ${JSON.stringify(name)}; known: ${[...upstreams.keys()].join(", ")}. Address calls as /<upstream>/<path> (e.g. base URL ${"http://HOST:PORT/openai/v1"}), or add one with --upstream ${name || "NAME"}=URL`,
        { status: 404 },
      );
    }
    const target = upstreamUrl(base, slash === -1 ? "" : rest.slice(slash), url.search);
    shapeOf.shape = providerShape(name, target);
    ctx = { ...ctx, ...contextFromHeaders(req.headers) };

    const method = req.method ?? "GET";
    const hasBody = method !== "GET" && method !== "HEAD";
    const body = hasBody ? await readBody(req, maxBody) : undefined;
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP_BY_HOP.has(key) || key.startsWith(HEADER_PREFIX)) continue;
      // fetch negotiates and undoes its own encoding.
      if (key === "accept-encoding") continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(key, v);
    }
    // A JSON body is decoded and parsed here, once: createFetch is handed
    // the text and the parsed value (answer's parsedBody), not the bytes.
    let json: { text: string; parsed: ParsedBody } | undefined;
    if (body !== undefined && isJsonType(headers.get("content-type")) && body.length > 0) {
      json = readJsonBody(body);
    }
    const lane = laneFor(ctx.mode ?? mode, ctx.cassette);
    const abort = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) abort.abort(new Error("the client closed the connection"));
    });
    const init: RequestInit = { method, headers, signal: abort.signal };
    if (body !== undefined) init.body = json === undefined ? body : json.text;
    const call = () => lane.answer(target.href, init, json?.parsed);
    const scoped =
      ctx.run === undefined
        ? call
        : async () => lane.recorder.withRun(await runFor(lane, ctx.run as string), call);
    // A call that names no role, task or attempt runs in the context it is
    // in (a scope with nothing in it changes nothing): entering an
    // AsyncLocalStorage scope turns on Node's promise hooks for the whole
    // process from then on, a cost on every promise of every later call.
    const response =
      ctx.role === undefined && ctx.task === undefined && ctx.attempt === undefined
        ? await scoped()
        : await withInvocation(
            {
              ...(ctx.role === undefined ? {} : { role: ctx.role }),
              ...(ctx.task === undefined ? {} : { task: ctx.task }),
              ...(ctx.attempt === undefined ? {} : { attempt: ctx.attempt }),
            },
            scoped,
          );
    if (!(response instanceof Response)) {
      // A JSON answer goes out from its recording, no Response built (a
      // recording with unusual headers through one, as before).
      if (!sendJsonAnswer(res, response)) await sendResponse(res, response.toResponse());
      return;
    }
    // Misses, streams and pass-through answers: a Response, as it comes.
    if (sid !== undefined) await sessionMisses.note(sid, response);
    await sendResponse(res, response);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const shapeOf: { shape: ProviderShape } = { shape: "openai" };
    try {
      if (!authorized(req)) {
        throw new ProxyError(
          "ERR_PROXY_TOKEN",
          `${HEADER_PREFIX}token`,
          `this proxy needs the header ${HEADER_PREFIX}token with the token it was started with (--token)`,
          { status: 401 },
        );
      }
      const url = new URL(req.url ?? "/", "http://proxy.invalid");
      if (url.pathname.startsWith("/_invocache/")) await control(req, res, url.pathname);
      else await forward(req, res, url, shapeOf);
    } catch (error) {
      answerError(res, error, shapeOf.shape, log);
    }
  };

  const headersTimeout = options.headersTimeoutMs ?? 30_000;
  const requestTimeout = options.requestTimeoutMs ?? 120_000;
  const server: Server = createServer(
    // Node checks the two timeouts on this interval (default 30 s): make it fine enough to honour them.
    { connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(headersTimeout / 4))) },
    (req, res) => {
      const served = handle(req, res).finally(() => inFlight.delete(served));
      inFlight.add(served);
    },
  );
  server.headersTimeout = headersTimeout;
  server.requestTimeout = requestTimeout;
  // A client that connects and sends nothing is dropped too.
  server.timeout = 0;
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch(async (error: NodeJS.ErrnoException) => {
    ownFetch?.close();
    await closeStores(lanes, ownStores);
    throw new ProxyError(
      "ERR_PROXY_LISTEN",
      "port",
      `cannot listen on ${host}:${port}: ${error.code ?? error.message}; pick another --port (0 = any free one)`,
      { cause: error },
    );
  });
  const address = server.address() as AddressInfo;
  const shownHost = LOOPBACK.has(host) || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  const url = `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    host,
    port: address.port,
    mode,
    store: storeLabel,
    get inFlight() {
      return inFlight.size;
    },
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // In-flight calls finish (or fail) on their own; new ones are refused.
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        server.closeAllConnections();
        await stopped;
        try {
          await endRuns(undefined);
        } catch (error) {
          log(`invocache proxy: ending a run: ${firstLine(error)}`);
        }
        ownFetch?.close();
        await closeStores(lanes, ownStores);
      })();
      return closing;
    },
  };
}

/** Recorders drain their writes first, then the stores the proxy opened close. */
async function closeStores(lanes: Map<string, Lane>, stores: Map<string, Store>): Promise<void> {
  await Promise.allSettled([...lanes.values()].map((lane) => lane.recorder.close()));
  const results = await Promise.allSettled([...stores.values()].map((store) => store.close()));
  const failed = results.find((r) => r.status === "rejected");
  if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
}

function folderFile(folder: string, cassette: string | undefined): string {
  if (cassette === undefined) {
    throw new ProxyError(
      "ERR_PROXY_CONTEXT",
      `${HEADER_PREFIX}cassette`,
      `this proxy's store is a folder of cassettes (${folder}): name the cassette file of each call with the header ${HEADER_PREFIX}cassette (e.g. tests/test_plan.yaml) or a session's "cassette"`,
    );
  }
  return folderCassettePath(folder, cassette, `${HEADER_PREFIX}cassette`);
}

function checkSessionId(sid: string): string {
  if (!SESSION_ID.test(sid)) {
    throw new ProxyError(
      "ERR_PROXY_SESSION",
      "session",
      `session id ${JSON.stringify(sid)}: use 1–128 letters, digits, ".", "_", "~" or "-"`,
    );
  }
  return sid;
}

function unknownSession(sid: string): ProxyError {
  return new ProxyError(
    "ERR_PROXY_SESSION",
    "session",
    `no session ${JSON.stringify(sid)}; create it first: PUT /_invocache/sessions/${sid} with a JSON body such as {"attempt":0}`,
  );
}

function parseControlJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.length === 0 ? "{}" : body.toString("utf8"));
  } catch (error) {
    throw new ProxyError(
      "ERR_PROXY_BODY",
      "body",
      `the control request body is not JSON (${(error as Error).message}); send e.g. {"attempt":1}`,
    );
  }
}

/** Strict UTF-8 (as createFetch reads a body), a byte order mark kept (JSON.parse then refuses it). */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A body that says JSON, as text and parsed. Decided: a body that says JSON
 * and is not (or is not UTF-8) is refused, never forwarded: createFetch
 * would read it as no model call and pass it through, so in replay it would
 * become a live call.
 *
 * @throws ProxyError (400) naming what is wrong with the body.
 */
function readJsonBody(body: Buffer): { text: string; parsed: ParsedBody } {
  let text: string;
  try {
    text = STRICT_UTF8.decode(body);
  } catch {
    throw new ProxyError(
      "ERR_PROXY_BODY",
      "body",
      "the request body says JSON but is not valid UTF-8; send the JSON the provider's API expects, encoded as UTF-8",
    );
  }
  try {
    return { text, parsed: { value: JSON.parse(text) } };
  } catch (error) {
    throw new ProxyError(
      "ERR_PROXY_BODY",
      "body",
      `the request body is not valid JSON (${(error as Error).message}); send the JSON the provider's API expects`,
    );
  }
}

function isJsonType(contentType: string | null): boolean {
  const type = contentType?.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || type.endsWith("+json");
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split("\n")[0] ?? "";
}

/** Do not retry: the same call would fail the same way (a miss, a refused request, a broken store). */
const NO_RETRY = { "x-should-retry": "false" };

/**
 * A failed call as an answer in the provider's shape. Statuses: a miss 404
 * (never 429/5xx, which SDKs retry); a broken store 502 with
 * `x-should-retry: false`; an unreachable upstream 502 (retried, as the
 * provider's own outage would be).
 */
function answerError(
  res: ServerResponse,
  error: unknown,
  shape: ProviderShape,
  log: (line: string) => void,
): void {
  if (res.headersSent) {
    // The answer was already going out: cut it, as a broken upstream would.
    log(`invocache proxy: a call failed mid-answer: ${firstLine(error)}`);
    res.destroy();
    return;
  }
  const send = (
    status: number,
    type: string,
    message: string,
    extra: Record<string, string> = {},
  ) => sendJson(res, status, errorBody(shape, status, type, message, type), extra);
  if (error instanceof ReplayMissError) {
    // createFetch answers a miss itself (onMiss "response"); this is the same answer for one thrown.
    sendJson(res, MISS_STATUS, missErrorBody(shape, error.message), { ...MISS_HEADERS });
    return;
  }
  if (error instanceof ProxyError) {
    send(error.status, "invocache_proxy_error", error.message, NO_RETRY);
    return;
  }
  if (error instanceof SourceError) {
    send(400, "invocache_proxy_error", error.message, NO_RETRY);
    return;
  }
  if (error instanceof StoreError) {
    log(`invocache proxy: store failed: ${firstLine(error)}`);
    send(
      502,
      "invocache_store_error",
      `the invocache store failed, so this call was not served: ${firstLine(error)}. Nothing was recorded for it; fix the store and call again`,
      NO_RETRY,
    );
    return;
  }
  if (error instanceof EntryTooLargeError) {
    send(413, "invocache_too_large", firstLine(error), NO_RETRY);
    return;
  }
  if (error instanceof DivergenceError) {
    send(409, "invocache_divergence", error.message, NO_RETRY);
    return;
  }
  if (error instanceof InvocacheError) {
    log(`invocache proxy: ${error.code}: ${firstLine(error)}`);
    send(502, "invocache_error", error.message, NO_RETRY);
    return;
  }
  if ((error as Error)?.name === "AbortError" || res.destroyed) {
    res.destroy();
    return;
  }
  // fetch failed: the upstream could not be reached. Its cause (ECONNREFUSED…)
  // names no credential; the request's URL and headers are left out.
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? firstLine(error);
  log(`invocache proxy: upstream unreachable: ${why}`);
  send(
    502,
    "invocache_upstream_unreachable",
    `invocache proxy could not reach the upstream: ${why}`,
  );
}
