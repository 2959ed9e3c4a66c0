import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useRedisServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";

const worker = join(import.meta.dirname, "workers", "recorder-worker.ts");
const dir = tempDir("mp");

/** A loopback upstream that counts calls per path and answers slowly enough to overlap. */
let server: Server;
let upstream = "";
const calls = new Map<string, number>();
beforeAll(async () => {
  server = createServer((req, res) => {
    const name = req.url ?? "";
    calls.set(name, (calls.get(name) ?? 0) + 1);
    setTimeout(() => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ answer: `${name}#${calls.get(name)}` }));
    }, 20);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

function runWorker(
  storeUrl: string,
  ids: string[],
  seed: number,
): Promise<{ answers: Record<string, string>; warnings: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", worker, storeUrl, upstream, ids.join(","), String(seed)],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c));
    child.stderr.on("data", (c: Buffer) => (err += c));
    child.on("close", (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`worker exited ${code}: ${err}`)),
    );
  });
}

/** 4 processes, 40 identities each, a quarter of them shared by all. */
async function scenario(storeUrl: string) {
  calls.clear();
  const shared = Array.from({ length: 10 }, (_, i) => `shared-${i}`);
  const perProcess = [0, 1, 2, 3].map((p) => [
    ...shared,
    ...Array.from({ length: 30 }, (_, i) => `p${p}-${i}`),
  ]);
  const results = await Promise.all(perProcess.map((ids, p) => runWorker(storeUrl, ids, p + 1)));
  // Exactly one upstream call per identity, across processes.
  expect(calls.size).toBe(10 + 4 * 30);
  expect([...calls.values()].every((n) => n === 1)).toBe(true);
  // Every process saw the same answer for each shared identity.
  for (const name of shared) {
    const seen = new Set(results.map((r) => r.answers[name]));
    expect(seen.size).toBe(1);
  }
  for (const r of results) expect(r.warnings).toEqual([]);
}

describe("cross-process single-flight", () => {
  it("4 processes on one SQLite file: one upstream call per identity, nothing lost", async () => {
    await scenario(`sqlite://${join(dir, "shared.sqlite")}`);
  }, 60_000);

  const redis = useRedisServer();
  describe.skipIf(redis.skip)("on Redis", () => {
    it("4 processes on one Redis: one upstream call per identity", async () => {
      await scenario(redis.url());
    }, 60_000);
  });
});
