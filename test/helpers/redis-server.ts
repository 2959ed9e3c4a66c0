/**
 * A private redis-server for one test file: 127.0.0.1, a free port, no
 * persistence. Started in beforeAll, killed in afterAll.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { connect } from "node:net";
import { freePort } from "./free-port.js";
import { findBinary } from "./service.js";

/** Path of redis-server, or undefined when it is not installed. */
export const redisServerBinary = findBinary("redis-server");

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** The server's process id (to freeze it with SIGSTOP, for instance). */
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Start redis-server (on `port`, or a free one) and wait until it answers PING.
 *
 * @example
 * const redis = await startRedisServer();
 * const store = openStore(redis.url);
 * await redis.stop();
 */
export async function startRedisServer(port?: number): Promise<RedisServer> {
  if (redisServerBinary === undefined) throw new Error("redis-server is not installed");
  port ??= await freePort();
  const child = spawn(
    redisServerBinary,
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    await waitFor(
      () => ping(port),
      10_000,
      () => `redis-server did not answer on ${port}: ${stderr}`,
    );
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return { port, url: `redis://127.0.0.1:${port}`, pid: child.pid!, stop: () => stop(child) };
}

/** Whether a redis-server on 127.0.0.1:`port` answers PING. */
export function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let reply = "";
    socket.setTimeout(500);
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) {
        socket.destroy();
        resolve(reply.startsWith("+PONG"));
      }
    });
    socket.on("error", () => resolve(false));
    socket.on("timeout", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Poll `probe` every 50 ms until it is true, or throw `message()` after `timeoutMs`. */
export async function waitFor(
  probe: () => Promise<boolean>,
  timeoutMs: number,
  message: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** SIGTERM, then SIGKILL if the process is still there after 3 s. */
export function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
