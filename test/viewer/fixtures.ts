/**
 * Shared by the viewer tests: record the demo pipeline (the real CLI
 * command, in process, against its simulated model on loopback) into a
 * fresh SQLite file, and plain HTTP requests with chosen headers.
 */
import { mkdirSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { demoCommand } from "../../src/cli/commands/demo.js";
import { type Io, makeStyle } from "../../src/cli/io.js";
import { tempDir } from "../helpers/tmp.js";

/**
 * Run `invocache demo --json` into a new SQLite store; resolves to its URL and
 * folder. `folder`, when given, is a sub-folder of the temp folder to record
 * in (a name with spaces, quotes, `$`… for the shell-quoting tests).
 */
export async function recordDemo(folder?: string): Promise<{ dir: string; store: string }> {
  const dir = folder === undefined ? tempDir("view") : join(tempDir("view"), folder);
  if (folder !== undefined) mkdirSync(dir);
  const store = `sqlite://${join(dir, "cache.sqlite")}`;
  let out = "";
  const io: Io = {
    env: {},
    cwd: dir,
    out: (t) => {
      out += typeof t === "string" ? t : Buffer.from(t).toString();
    },
    err: () => {},
    style: makeStyle(false),
    errStyle: makeStyle(false),
    stderrTTY: false,
    columns: 80,
    stdin: async () => Buffer.alloc(0),
  };
  const code = await demoCommand.run(["--store", store, "--json"], io);
  if (code !== 0) throw new Error(`demo failed (${code}): ${out}`);
  return { dir, store };
}

/** A finished plain HTTP request. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** GET (or `method`) `path` on 127.0.0.1:`port` with exactly these headers. */
export function get(
  port: number,
  path: string,
  headers: Record<string, string>,
  method = "GET",
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method, headers, setHost: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}
