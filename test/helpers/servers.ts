/**
 * One real server for a test file (or a describe block): skipped visibly
 * when it is not installed (a failure under CI, see skipUnless), started in
 * beforeAll, stopped in afterAll.
 */
import { afterAll, beforeAll } from "vitest";
import { type PostgresServer, postgresAvailable, startPostgresServer } from "./postgres-server.js";
import { type RedisServer, redisServerBinary, startRedisServer } from "./redis-server.js";
import { skipUnless } from "./service.js";

export interface UsedServer<S extends { url: string }> {
  /** True when the server is not installed here: skip the tests that need it. */
  readonly skip: boolean;
  /** The running server (undefined before beforeAll or when skipped). */
  readonly server: S | undefined;
  /** Its URL; throws outside the tests, or when skipped. */
  url(): string;
}

/**
 * A redis-server on 127.0.0.1 for the enclosing file or describe block.
 *
 * @example
 * const redis = useRedisServer();
 * it.skipIf(redis.skip)("stores", async () => { const store = openStore(redis.url()); });
 */
export function useRedisServer(): UsedServer<RedisServer> {
  const skip = skipUnless(
    redisServerBinary !== undefined,
    "redis-server",
    "apt-get install -y redis-server",
  );
  return useServer("redis-server", skip, () => startRedisServer());
}

/** A throwaway Postgres cluster on 127.0.0.1 for the enclosing file or describe block. */
export function usePostgresServer(): UsedServer<PostgresServer> {
  const skip = skipUnless(postgresAvailable, "postgres (initdb)", "apt-get install postgresql");
  return useServer("postgres", skip, () => startPostgresServer());
}

function useServer<S extends { url: string; stop(): Promise<void> }>(
  name: string,
  skip: boolean,
  start: () => Promise<S>,
): UsedServer<S> {
  let server: S | undefined;
  beforeAll(async () => {
    if (!skip) server = await start();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    skip,
    get server() {
      return server;
    },
    url() {
      if (server === undefined) throw new Error(`${name} not started`);
      return server.url;
    },
  };
}
