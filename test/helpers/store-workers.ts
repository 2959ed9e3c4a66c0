/**
 * Run several store-worker.ts processes against one store URL, released at
 * the same moment, and check what they saw.
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const workerScript = join(here, "store-worker.ts");
/** Processes per run. */
export const PROCESSES = 4;

export interface WorkerReport {
  worker: number;
  errors: string[];
  misses?: number;
  mismatches?: number;
  foreignHits?: number;
  won?: number[];
}

/**
 * Start one worker per argument list, wait until every worker printed
 * "ready", then release them all at once through stdin.
 */
export async function workers(make: (worker: number) => string[]): Promise<WorkerReport[]> {
  const readies: Array<Promise<void>> = [];
  const children = Array.from({ length: PROCESSES }, (_, w) => {
    const child = spawn(process.execPath, ["--import", "tsx", workerScript, ...make(w)], {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let markReady = () => {};
    readies.push(new Promise((resolve) => (markReady = resolve)));
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith("ready\n")) {
        out = out.slice("ready\n".length);
        markReady();
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    const done = new Promise<WorkerReport>((resolve, reject) => {
      child.on("error", reject);
      child.on("exit", (code) => {
        markReady(); // never leave the barrier waiting on a dead worker
        if (code !== 0) reject(new Error(`worker ${w} exited with ${code}: ${err}`));
        else resolve(JSON.parse(out) as WorkerReport);
      });
    });
    return { child, done };
  });
  await Promise.all(readies);
  for (const { child } of children) child.stdin.end("go\n");
  return Promise.all(children.map((c) => c.done));
}

/** N processes race for the same leases; every lease must have exactly one winner. */
export async function leaseRace(url: string, rounds: number): Promise<void> {
  const reports = await workers((w) => ["lease", url, String(w), String(rounds)]);
  expect(reports.flatMap((r) => r.errors)).toStrictEqual([]);
  const winners = new Map<number, number[]>();
  for (const report of reports) {
    for (const round of report.won ?? []) {
      winners.set(round, [...(winners.get(round) ?? []), report.worker]);
    }
  }
  for (let round = 0; round < rounds; round++) {
    expect(winners.get(round)?.length, `lease race:${round} winners`).toBe(1);
  }
}
