/**
 * SQL run on a SQLite file directly, as another program (or an older
 * invocache) would: its own connection through the `sqlite3` binding that
 * @keyv/sqlite uses, opened and closed per statement.
 */
import { createRequire } from "node:module";

const require = createRequire(createRequire(import.meta.url).resolve("@keyv/sqlite"));
const sqlite3 = require("sqlite3") as {
  Database: new (
    path: string,
    cb: (e: Error | null) => void,
  ) => {
    all(sql: string, params: unknown[], cb: (e: Error | null, rows: unknown[]) => void): void;
    close(cb: () => void): void;
  };
};

/** The rows of `text` with `params`, run on the file at `path`. */
export async function rawSql(
  path: string,
  text: string,
  params: unknown[] = [],
): Promise<unknown[]> {
  const db = await new Promise<InstanceType<typeof sqlite3.Database>>((resolve, reject) => {
    const d = new sqlite3.Database(path, (e) => (e ? reject(e) : resolve(d)));
  });
  try {
    return await new Promise((resolve, reject) =>
      db.all(text, params, (e, rows) => (e ? reject(e) : resolve(rows))),
    );
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}
