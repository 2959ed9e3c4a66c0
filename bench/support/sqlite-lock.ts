/**
 * How each SQLite driver behaves while another process holds the write lock
 * (docs/performance.md, "SQLite drivers"): a child process takes the lock
 * for 1 s (BEGIN IMMEDIATE); meanwhile this process writes one entry through
 * the driver and a 10 ms interval timer measures its longest gap, i.e. how
 * long the event loop was blocked. Also reports the journal mode.
 *   INVOCACHE_BETTER_SQLITE3=<package dir> node --import tsx bench/support/sqlite-lock.ts
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/index.js";
import { createBetterSqliteBackend } from "../../src/store/backends/better-sqlite3.js";
import { KeyvStore } from "../../src/store/keyv-store.js";
import type { Store } from "../../src/store/types.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-lock-"));
const better = process.env.INVOCACHE_BETTER_SQLITE3;
const sqliteCli = "/usr/bin/sqlite3";

async function trial(name: string, open: (file: string) => Store): Promise<void> {
  const file = join(dir, `${name}.sqlite`);
  const store = open(file);
  await store.set("warm", 1); // creates the file and tables, WAL
  const holder = spawn(sqliteCli, [file], { stdio: ["pipe", "ignore", "inherit"] });
  const exited = new Promise((r) => holder.on("exit", r));
  // The holder commits on its own after 1 s (this process's timers may be
  // blocked: that is what is measured).
  holder.stdin.end(
    "BEGIN IMMEDIATE; INSERT INTO invocache_leases VALUES ('x','y',0);\n.shell sleep 1.2\nCOMMIT;\n",
  );
  await new Promise((r) => setTimeout(r, 200)); // the lock is taken
  let last = performance.now();
  let worst = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 10);
  const t0 = performance.now();
  await store.set("k", { v: 1 });
  const took = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 50));
  clearInterval(tick);
  await exited;
  await store.close();
  process.stdout.write(
    `${name}: write waited ${took.toFixed(0)} ms for the lock; longest event-loop gap ${worst.toFixed(0)} ms\n`,
  );
}

try {
  await trial("sqlite3", (file) => openStore(`sqlite://${file}`));
  if (better !== undefined) {
    const load = () => createRequire(import.meta.url)(better);
    await trial(
      "better-sqlite3",
      (file) =>
        new KeyvStore(`sqlite://${file}`, () => createBetterSqliteBackend(file, load), {
          timeoutMs: 30_000,
        }),
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
