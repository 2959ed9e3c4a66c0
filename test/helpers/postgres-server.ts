/**
 * A private Postgres cluster for one test file: initdb into a temp folder,
 * `postgres` on 127.0.0.1 and a free port, fsync off. Postgres refuses to run
 * as root, so under root (CI) both run as the `postgres` system user.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import { stop, waitFor } from "./redis-server.js";
import { findBinary, postgresBinDirs } from "./service.js";

const initdb = findBinary("initdb", postgresBinDirs());
const postgres = findBinary("postgres", postgresBinDirs());

/** Who runs the server: ourselves, or the `postgres` user when we are root. */
const runAs = resolveUser();

/** True when a cluster can be started here. */
export const postgresAvailable = initdb !== undefined && postgres !== undefined && runAs !== null;

export interface PostgresServer {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  /** The postmaster's process id; each connection is served by a child of it. */
  readonly pid: number;
  /**
   * Crash the server (SIGQUIT: immediate shutdown, no checkpoint, as a
   * crashed host's postmaster) and start it again on the same port and
   * data; resolves once it accepts queries (crash recovery done).
   */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Create and start a throwaway cluster; resolves once it accepts queries.
 *
 * @example
 * const pg = await startPostgresServer();
 * const store = openStore(pg.url);
 * await pg.stop();
 */
export async function startPostgresServer(
  options: { durable?: boolean } = {},
): Promise<PostgresServer> {
  if (!postgresAvailable || initdb === undefined || postgres === undefined || runAs === null) {
    throw new Error("postgres (initdb) is not installed or cannot run here");
  }
  // Under root the server runs as `postgres`, who must reach the folder:
  // /tmp is world-traversable, a root-only $TMPDIR may not be.
  const dir = mkdtempSync(join(runAs === undefined ? tmpdir() : "/tmp", "invocache-pg-"));
  const ids = runAs === undefined ? {} : { uid: runAs.uid, gid: runAs.gid };
  if (runAs !== undefined) chownSync(dir, runAs.uid, runAs.gid);
  const data = join(dir, "data");
  execFileSync(
    initdb,
    ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
    { ...ids, stdio: "pipe" },
  );
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  // durable: a commit is acknowledged only once its WAL reached the OS, so
  // a crashed server (restart) keeps every acknowledged write on recovery.
  const commit = options.durable === true ? [] : ["-c", "synchronous_commit=off"];
  let child: ChildProcess;
  const launch = async () => {
    const proc = spawn(
      postgres!,
      [
        ...["-D", data, "-k", dir, "-p", String(port), "-h", "127.0.0.1"],
        ...["-c", "fsync=off", ...commit, "-c", "full_page_writes=off"],
      ],
      { ...ids, stdio: ["ignore", "ignore", "pipe"] },
    );
    child = proc;
    let stderr = "";
    proc.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await waitFor(
      () => answers(url),
      20_000,
      () => `postgres did not start on ${port}: ${stderr}`,
    );
  };
  const cleanup = async (proc: ChildProcess) => {
    await stop(proc);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await launch();
  } catch (error) {
    await cleanup(child!);
    throw error;
  }
  return {
    port,
    url,
    get pid() {
      return child.pid!;
    },
    async restart() {
      const proc = child;
      if (proc.exitCode === null && proc.signalCode === null) {
        const gone = new Promise((resolve) => proc.once("exit", resolve));
        proc.kill("SIGQUIT");
        await gone;
      }
      await launch();
    },
    stop: () => cleanup(child),
  };
}

/** A `pg` client: what the tests ask of it. */
export interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
  on(event: "error", listener: () => void): unknown;
}

/**
 * A `pg` client for `url`, not yet connected: pg is @keyv/postgres's
 * dependency, resolved from there, as the store does.
 */
export function pgClient(
  url: string,
  options: { connectionTimeoutMillis?: number } = {},
): PgClient {
  const require = createRequire(createRequire(import.meta.url).resolve("@keyv/postgres"));
  const { Client } = require("pg") as { Client: new (c: object) => PgClient };
  return new Client({ connectionString: url, ...options });
}

async function answers(url: string): Promise<boolean> {
  const client = pgClient(url, { connectionTimeoutMillis: 1000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function resolveUser(): { uid: number; gid: number } | undefined | null {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    return null; // root without a postgres user: cannot start a server
  }
}
