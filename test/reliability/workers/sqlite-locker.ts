/**
 * Another process holding a lock on a SQLite file, for the lock tests.
 *
 *   node --import tsx sqlite-locker.ts <path> <write|exclusive> <holdMs|stdin>
 *
 * - `write`: `BEGIN EXCLUSIVE`, which in WAL mode is the write lock: other
 *   connections still read, but cannot write.
 * - `exclusive`: `PRAGMA locking_mode = EXCLUSIVE`, then a write inside
 *   `BEGIN EXCLUSIVE`: nobody else may even read (run it while no other
 *   process has the file open).
 *
 * Prints "locked" once the lock is held; releases it after `holdMs`, or when
 * a line arrives on stdin; prints "released" and exits.
 */
import { createRequire } from "node:module";

const [path, how, hold] = process.argv.slice(2);
if (path === undefined || (how !== "write" && how !== "exclusive") || hold === undefined) {
  throw new Error("usage: sqlite-locker.ts <path> <write|exclusive> <holdMs|stdin>");
}

interface Database {
  exec(sql: string, callback: (error: Error | null) => void): void;
  close(callback: (error: Error | null) => void): void;
}
// The sqlite3 binding @keyv/sqlite uses (the store's own driver).
const require = createRequire(createRequire(import.meta.url).resolve("@keyv/sqlite"));
const sqlite3 = require("sqlite3") as { Database: new (path: string) => Database };

const db = new sqlite3.Database(path);
const exec = (sql: string) =>
  new Promise<void>((resolve, reject) => db.exec(sql, (e) => (e ? reject(e) : resolve())));

await exec("PRAGMA busy_timeout = 10000");
if (how === "exclusive") await exec("PRAGMA locking_mode = EXCLUSIVE");
await exec("BEGIN EXCLUSIVE");
// A write, so the exclusive locking mode takes (and keeps) the exclusive lock.
await exec("CREATE TABLE IF NOT EXISTS locker_marks (at INTEGER)");
await exec(`INSERT INTO locker_marks (at) VALUES (${Date.now()})`);
process.stdout.write("locked\n");

if (hold === "stdin") await new Promise((resolve) => process.stdin.once("data", resolve));
else await new Promise((resolve) => setTimeout(resolve, Number(hold)));
process.stdin.pause();
await exec("COMMIT");
await new Promise<void>((resolve, reject) => db.close((e) => (e ? reject(e) : resolve())));
process.stdout.write("released\n");
