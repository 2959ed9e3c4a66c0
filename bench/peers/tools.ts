/**
 * The four record-and-replay tools under comparison, behind one shape: open
 * a session in a directory (record or replay), hand the OpenAI SDK a
 * `fetch`, close the session (which persists a recording). Each is set up
 * the way its documentation says; where a default had to change for the
 * workload to run at all, the comment says so.
 *
 * nock and Polly patch globals (nock on import), so a session resolves the
 * SDK's fetch through `globalThis.fetch` at call time and `close()` tears
 * everything down; `leakCheck` in child.ts verifies that it did.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Recorder } from "../../src/index.js";

export const TOOL_IDS = [
  "invocache-cassette",
  "invocache-sqlite",
  "invocache-sqlite-better",
  "invocache-redis",
  "invocache-postgres",
  "nock-back",
  "polly",
] as const;
export type ToolId = (typeof TOOL_IDS)[number];

/**
 * The shared stores run against servers the parent starts (run.ts) and names
 * in these variables, which every child inherits; without a server the tool
 * is left out of the run and the report says so.
 */
export const SERVER_ENV = {
  "invocache-redis": "INVOCACHE_PEERS_REDIS_URL",
  "invocache-postgres": "INVOCACHE_PEERS_POSTGRES_URL",
} as const satisfies Partial<Record<ToolId, string>>;

/**
 * The optional better-sqlite3 driver is not a dependency (it compiles on
 * install: docs/performance.md, "The engine question"). Naming a build of
 * it (its package directory) in this variable adds "invocache + SQLite
 * (better-sqlite3)" to the run; run.ts puts the directory's parent on the
 * children's NODE_PATH, where invocache's `require("better-sqlite3")`
 * finds it as it would find an installed copy.
 */
export const BETTER_SQLITE3_ENV = "INVOCACHE_BETTER_SQLITE3";

/** The tools this run compares: the shared stores only when their server is up. */
export function availableTools(): ToolId[] {
  return TOOL_IDS.filter((id) => {
    if (id === "invocache-sqlite-better") return (process.env[BETTER_SQLITE3_ENV] ?? "") !== "";
    const name = (SERVER_ENV as Partial<Record<ToolId, string>>)[id];
    return name === undefined || (process.env[name] ?? "") !== "";
  });
}

export type SessionMode = "record" | "replay";

export interface ToolSession {
  /** The fetch to give the SDK. */
  fetch: typeof globalThis.fetch;
  /** Run `fn` as one run scope (invocache's `recorder.run`), for tools that have one. */
  runScope?: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Persist (record) and tear down every patch. `calls`: how many calls the session made. */
  close(calls: number): Promise<void>;
}

export interface PeerTool {
  id: ToolId;
  /**
   * Import the tool's modules (before any timer starts, so no tool's cold
   * load includes module loading; a nock import already patches globals).
   */
  preload(): Promise<void>;
  /** How the table names it. */
  label: string;
  /** How it is configured, in a few words (for the docs). */
  setup: string;
  open(dir: string, mode: SessionMode): Promise<ToolSession>;
  /** Bytes of the recording itself (not of derived caches). */
  recordingBytes(dir: string): number;
  /** Bytes of derived, safe-to-delete caches the tool wrote beside the recording. */
  cacheBytes(dir: string): number;
}

/** Resolve fetch at call time, so whatever a tool patched into the global is what the SDK calls. */
const globalFetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, init);

function bytesUnder(path: string): number {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of readdirSync(path)) total += bytesUnder(join(path, name));
  return total;
}

/** Each tool's modules, imported once by `preload()`. */
/**
 * The compiled harness (harness.ts) names the compiled package's entry
 * (dist/, as a user's process loads it) by file URL; run from its sources
 * under tsx, the harness loads invocache's sources.
 */
const invocacheEntry = process.env.INVOCACHE_BENCH_ENTRY || "../../src/index.js";
const invocacheModules = once(
  () => import(invocacheEntry) as Promise<typeof import("../../src/index.js")>,
);
const nockModule = once(async () => (await import("nock")).default);
const pollyModules = once(async () => {
  const { Polly } = await import("@pollyjs/core");
  // CommonJS packages typed with `export default`: at run time the default
  // import is the class itself; TypeScript (NodeNext) types it as the module.
  type Plugin = Parameters<typeof Polly.register>[0];
  Polly.register((await import("@pollyjs/adapter-fetch")).default as unknown as Plugin);
  Polly.register((await import("@pollyjs/persister-fs")).default as unknown as Plugin);
  return { Polly };
});

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load();
    return loaded;
  };
}

async function invocacheSession(
  recorder: Recorder,
  done: () => Promise<void>,
): Promise<ToolSession> {
  const { createFetch } = await invocacheModules();
  return {
    fetch: createFetch({ recorder, fetch: globalFetch }),
    runScope: (fn) => recorder.run(() => fn()),
    close: done,
  };
}

const CASSETTE = "peers.yaml";
const PARSE_CACHE = "parse-cache";

const invocacheCassette: PeerTool = {
  id: "invocache-cassette",
  label: "invocache + cassette",
  setup:
    'createFetch + cassetteStore(path, { write: "on-close" }) (as the vitest helper opens it), modes record / replay',
  preload: async () => void (await invocacheModules()),
  async open(dir, mode) {
    const { cassetteStore, createRecorder } = await invocacheModules();
    if (mode === "record") rmSync(join(dir, CASSETTE), { force: true });
    const store = cassetteStore(join(dir, CASSETTE), {
      // Written once when the session closes, as `withCassette` does; the
      // default ("eager") rewrites the whole file on every set.
      write: "on-close",
      // The parsed-form cache lives beside the cassette so each tool's bytes
      // stay in its own directory (default: .invocache/ under the cwd).
      parseCache: join(dir, PARSE_CACHE),
    });
    const recorder = createRecorder({ store, mode });
    return invocacheSession(recorder, async () => {
      await recorder.close();
      await store.close();
    });
  },
  recordingBytes: (dir) => bytesUnder(join(dir, CASSETTE)),
  cacheBytes: (dir) => bytesUnder(join(dir, PARSE_CACHE)),
};

const SQLITE = "cache.sqlite";

/** invocache over an SQLite file, through the default driver (sqlite3) or better-sqlite3. */
function sqliteTool(id: ToolId, label: string, driver: "sqlite3" | "better-sqlite3"): PeerTool {
  return {
    id,
    label,
    setup:
      driver === "sqlite3"
        ? "createFetch + createRecorder({ store: 'sqlite://…' }) (WAL), modes record / replay"
        : "createFetch + createRecorder({ store: openStore('sqlite://…', { sqliteDriver: 'better-sqlite3' }) }) (WAL), modes record / replay",
    preload: async () => void (await invocacheModules()),
    async open(dir, mode) {
      const { createRecorder, openStore } = await invocacheModules();
      if (mode === "record") {
        for (const suffix of ["", "-wal", "-shm"])
          rmSync(join(dir, SQLITE + suffix), { force: true });
      }
      const url = `sqlite://${join(dir, SQLITE)}`;
      const store = driver === "sqlite3" ? url : openStore(url, { sqliteDriver: driver });
      const recorder = createRecorder({ store, mode });
      return invocacheSession(recorder, async () => {
        await recorder.close();
        if (typeof store !== "string") await store.close();
      });
    },
    recordingBytes: (dir) =>
      ["", "-wal", "-shm"].reduce((n, s) => n + bytesUnder(join(dir, SQLITE + s)), 0),
    cacheBytes: () => 0,
  };
}

const invocacheSqlite = sqliteTool("invocache-sqlite", "invocache + SQLite", "sqlite3");
const invocacheSqliteBetter = sqliteTool(
  "invocache-sqlite-better",
  "invocache + SQLite (better-sqlite3)",
  "better-sqlite3",
);

const NAMESPACE_FILE = "namespace";

/**
 * invocache over a shared server (Redis, Postgres): the URL comes from the
 * parent; each recording gets a fresh namespace (kept in the tool's folder
 * for its replays), so no round reads another's entries and nothing needs
 * flushing. The recording lives on the server: its size is not compared.
 */
function sharedStore(id: keyof typeof SERVER_ENV, label: string, scheme: string): PeerTool {
  return {
    id,
    label,
    setup: `createFetch + createRecorder({ store: '${scheme}://127.0.0.1:…' }) on a throwaway local server, a fresh namespace per recording, modes record / replay`,
    preload: async () => void (await invocacheModules()),
    async open(dir, mode) {
      const { createRecorder } = await invocacheModules();
      const url = process.env[SERVER_ENV[id]];
      if (url === undefined || url === "") throw new Error(`${id}: ${SERVER_ENV[id]} is not set`);
      const file = join(dir, NAMESPACE_FILE);
      if (mode === "record") {
        mkdirSync(dir, { recursive: true });
        writeFileSync(file, `peers${Date.now().toString(36)}${process.pid.toString(36)}`);
      }
      const namespace = readFileSync(file, "utf8");
      const recorder = createRecorder({ store: url, namespace, mode });
      return invocacheSession(recorder, () => recorder.close());
    },
    recordingBytes: () => Number.NaN,
    cacheBytes: () => 0,
  };
}

const invocacheRedis = sharedStore("invocache-redis", "invocache + Redis", "redis");
const invocachePostgres = sharedStore("invocache-postgres", "invocache + Postgres", "postgres");

const FIXTURE = "peers.json";

const nockBack: PeerTool = {
  id: "nock-back",
  label: "nock.back 14",
  setup:
    "nock.back(fixture) with nock.back.fixtures = dir; setMode('record') to record (fixture removed first), 'lockdown' to replay",
  // nock activates its interceptors when imported: never import it statically.
  preload: async () => void (await nockModule()),
  async open(dir, mode) {
    const nock = await nockModule();
    if (mode === "record") rmSync(join(dir, FIXTURE), { force: true });
    nock.back.fixtures = dir;
    nock.back.setMode(mode === "record" ? "record" : "lockdown");
    const { nockDone } = await nock.back(FIXTURE);
    return {
      fetch: globalFetch,
      async close(calls) {
        if (mode === "record") {
          // nock records a fetch response from a listener that reads a clone
          // of the body after the caller has it, so the last recording could
          // land after the last call returns (not seen here; a bounded wait).
          const until = Date.now() + 5_000;
          while (nock.recorder.play().length < calls && Date.now() < until) {
            await new Promise((r) => setTimeout(r, 5));
          }
        }
        nockDone();
        nock.restore();
        nock.cleanAll();
        nock.enableNetConnect();
      },
    };
  },
  recordingBytes: (dir) => bytesUnder(join(dir, FIXTURE)),
  cacheBytes: () => 0,
};

const RECORDINGS = "recordings";

const polly: PeerTool = {
  id: "polly",
  label: "Polly.js 6",
  setup:
    "new Polly(name, { adapters: ['fetch'], persister: 'fs', recordingsDir }); mode 'record', then 'replay' with recordIfMissing: false; default matchRequestsBy (method, headers, body, order, url)",
  preload: async () => void (await pollyModules()),
  async open(dir, mode) {
    const { Polly } = await pollyModules();
    if (mode === "record") rmSync(join(dir, RECORDINGS), { recursive: true, force: true });
    const instance = new Polly("peers", {
      adapters: ["fetch"],
      persister: "fs",
      persisterOptions: { fs: { recordingsDir: join(dir, RECORDINGS) } },
      mode,
      // A miss must be an error, not a live call (the default, true, records it).
      recordIfMissing: false,
      logLevel: "silent",
    });
    return {
      fetch: globalFetch,
      close: () => instance.stop(),
    };
  },
  recordingBytes: (dir) => bytesUnder(join(dir, RECORDINGS)),
  cacheBytes: () => 0,
};

export const TOOLS: Record<ToolId, PeerTool> = {
  "invocache-cassette": invocacheCassette,
  "invocache-sqlite": invocacheSqlite,
  "invocache-sqlite-better": invocacheSqliteBetter,
  "invocache-redis": invocacheRedis,
  "invocache-postgres": invocachePostgres,
  "nock-back": nockBack,
  polly,
};
