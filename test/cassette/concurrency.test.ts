/**
 * Several processes on one cassette: nothing is lost when two record at
 * once, and a writer killed with SIGKILL mid-write leaves the old or the new
 * file, never a torn one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cassetteStore, readCassette } from "../../src/cassette/index.js";
import { lockPath } from "../../src/cassette/lock.js";
import { tempDir } from "./helpers.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const dir = tempDir("cassette-mp");

function start(
  script: string,
  args: string[],
): { child: ChildProcess; out: () => string; done: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(here, "workers", script), ...args],
    {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stdout!.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr!.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const done = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code !== 0 && signal === null) reject(new Error(`${script} exited with ${code}: ${err}`));
      else resolve(code);
    });
  });
  return { child, out: () => out, done };
}

async function until(probe: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("cassettes shared by processes", () => {
  it("two processes recording into one cassette at once lose nothing (and share the common calls)", async () => {
    const path = join(dir, "shared", "two-writers.yaml");
    const own = 25;
    const shared = 10;
    const workers = ["0", "1"].map((w) =>
      start("recorder-writer.ts", [path, w, String(own), String(shared)]),
    );
    await until(() => workers.every((w) => w.out().startsWith("ready\n")));
    for (const w of workers) w.child.stdin!.end("go\n");
    await Promise.all(workers.map((w) => w.done));
    const reports = workers.map(
      (w) =>
        JSON.parse(w.out().slice("ready\n".length)) as { upstream: number; warnings: string[] },
    );
    expect(reports.flatMap((r) => r.warnings)).toStrictEqual([]);

    const items = await readCassette(path);
    const answers = items.map((i) => (i.value as { response: { answer: string } }).response.answer);
    expect(items).toHaveLength(2 * own + shared);
    for (const w of ["0", "1"]) {
      for (let i = 0; i < own; i++) expect(answers).toContain(`worker ${w} task ${i} by ${w}`);
    }
    for (let i = 0; i < shared; i++) {
      expect(answers.filter((a) => a.startsWith(`shared task ${i} by `))).toHaveLength(1);
    }
    // Each shared call went upstream once, in one process or the other.
    expect(reports[0]!.upstream + reports[1]!.upstream).toBe(2 * own + shared);
    expect(readdirSync(dirname(path)).filter((n) => n !== "two-writers.yaml")).toStrictEqual([]);
  });

  it("kill -9 in the middle of writes leaves a loadable cassette; the next writer recovers", async () => {
    const path = join(dir, "killed", "big.yaml");
    const attempts = 4;
    let tornWrites = 0;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const writer = start("big-writer.ts", [path]);
      const target = 2 + attempt * 2;
      await until(() => writer.out().includes(`wrote ${target}\n`));
      await new Promise((r) => setTimeout(r, Math.random() * 10));
      writer.child.kill("SIGKILL");
      await writer.done;
      const items = await readCassette(path); // never torn: parses, and is whole
      expect(items).toHaveLength(251);
      const round = (items.find((i) => i.key === "big:round")!.value as { round: number }).round;
      expect(round).toBeGreaterThanOrEqual(target);
      if (readdirSync(dirname(path)).some((n) => n.endsWith(".tmp"))) tornWrites++; // killed mid-write
      // Between attempts, skip the wait for the dead writer's lock to go stale;
      // the last attempt below waits it out as a real next writer would.
      if (attempt < attempts - 1) rmSync(lockPath(path), { recursive: true, force: true });
    }
    console.log(
      `kill -9 test: ${tornWrites} of ${attempts} kills landed mid-write (left a temp file)`,
    );
    const store = cassetteStore(path, { parseCache: false });
    await store.set("after", "recovered");
    await store.close();
    expect((await readCassette(path)).at(-1)!.key).toBe("after");
    expect(readdirSync(dirname(path)).filter((n) => n.endsWith(".tmp"))).toStrictEqual([]);
  }, 60_000);
});
