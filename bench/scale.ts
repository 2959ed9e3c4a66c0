/**
 * `node --import tsx bench/scale.ts [--full]`: how a SQLite store of many
 * entries behaves. For 10k and 100k entries (and 1M with `--full`, or
 * INVOCACHE_SCALE_1M=1: building and scanning it takes minutes):
 *
 * - hit latency p50 of a recorder on that store beside one on a 1,000-entry
 *   store, interleaved (target: within 1.2x);
 * - `invocache ls --json`, `stats --json` and `prune --older-than 3650d
 *   --dry-run` (nothing is that old: the scan is the cost) as whole processes
 *   under /usr/bin/time: wall time and peak RSS, and how both grow with N;
 * - the viewer's first page: `invocache view --json` started as a process
 *   until its overview is served over HTTP (start-up of node and tsx
 *   included: compare with the 1,000-entry row), and `startViewer` in this
 *   process until the same page is served; "†" marks a page that went out
 *   before its totals were counted (it waits for them up to 0.5 s).
 *
 * The stores are built by one SQL statement (a recursive CTE copying one
 * real recorded entry, with its stored metadata, under fresh random ids),
 * not through the recorder. `--legacy` copies the values only, as a store
 * made before stored metadata: the commands then read every value (the
 * figures before issue 34), and say how to migrate.
 * Not part of `npm run bench` (it writes hundreds of MB to os.tmpdir()).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { createRequire } from "node:module";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRecorder, invocationIdentity } from "../src/index.js";
import { SQLITE_VALUES_TABLE } from "../src/store/backends/sqlite.js";
import { startViewer } from "../src/viewer/index.js";
import { machine, req, response } from "./support/hit-request.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const full = process.argv.includes("--full") || process.env.INVOCACHE_SCALE_1M === "1";
const legacy = process.argv.includes("--legacy");
const only = process.argv.indexOf("--sizes");
// `--sizes 1000000` runs only the sizes given (comma-separated).
const sizes =
  only >= 0
    ? process.argv[only + 1]!.split(",").map(Number)
    : [10_000, 100_000, ...(full ? [1_000_000] : [])];

type Db = {
  exec(sql: string, cb: (e: Error | null) => void): void;
  close(cb: () => void): void;
};
const sqlite3 = createRequire(createRequire(import.meta.url).resolve("@keyv/sqlite"))(
  "sqlite3",
) as {
  Database: new (path: string, cb: (e: Error | null) => void) => Db;
};

/** A store of `n` entries: the bench request's real entry plus n-1 copies under random ids. */
async function build(file: string, n: number): Promise<void> {
  const recorder = createRecorder({ store: `sqlite://${file}`, mode: "auto", identity: machine });
  await recorder.call(req, async () => response);
  await recorder.close();
  const id = invocationIdentity(req, machine);
  const db = await new Promise<Db>((resolve, reject) => {
    const d = new sqlite3.Database(file, (e) => (e ? reject(e) : resolve(d)));
  });
  const exec = (sql: string) =>
    new Promise<void>((resolve, reject) => db.exec(sql, (e) => (e ? reject(e) : resolve())));
  await exec(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${n - 1}),
    ids(id) AS MATERIALIZED (SELECT lower(hex(randomblob(32))) FROM c)
    INSERT INTO ${SQLITE_VALUES_TABLE} (key, value, m_meta, m_at, m_rev)
    SELECT 'default:e:' || ids.id || ':0', replace(t.value, '${id}', ids.id),
      ${legacy ? "NULL, NULL, NULL" : `replace(t.m_meta, '${id}', ids.id), t.m_at, 1`}
    FROM ids, (SELECT value, m_meta, m_at FROM ${SQLITE_VALUES_TABLE} WHERE key = 'default:e:${id}:0') t`);
  await new Promise<void>((resolve) => db.close(() => resolve()));
}

/** p50 of hits on two stores, interleaved call by call. */
async function hitP50(fileA: string, fileB: string): Promise<[number, number]> {
  const a = createRecorder({ store: `sqlite://${fileA}`, mode: "replay", identity: machine });
  const b = createRecorder({ store: `sqlite://${fileB}`, mode: "replay", identity: machine });
  const ta: number[] = [];
  const tb: number[] = [];
  const fn = async () => response;
  for (let i = 0; i < 2300; i++) {
    for (const [r, into] of i % 2 === 0
      ? ([
          [a, ta],
          [b, tb],
        ] as const)
      : ([
          [b, tb],
          [a, ta],
        ] as const)) {
      const t0 = process.hrtime.bigint();
      await r.call(req, fn);
      if (i >= 300) into.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
  }
  await a.close();
  await b.close();
  const p50 = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return [p50(ta), p50(tb)];
}

/** One CLI command as a whole process: wall seconds and peak RSS (MiB). */
function cli(args: string[]): { seconds: number; rssMiB: number } {
  const r = spawnSync(
    "/usr/bin/time",
    ["-f", "%e %M", process.execPath, "--import", "tsx", join(root, "src/cli/main.ts"), ...args],
    { cwd: root, encoding: "utf8", maxBuffer: 1 << 30 },
  );
  if (r.status !== 0) throw new Error(`invocache ${args.join(" ")} failed: ${r.stderr}`);
  const last = r.stderr.trim().split("\n").at(-1)!.split(" ");
  return { seconds: Number(last[0]), rssMiB: Math.round(Number(last[1]) / 1024) };
}

/** A GET on loopback. */
function httpGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; cookie: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          cookie: String(res.headers["set-cookie"] ?? "").split(";")[0]!,
          body,
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** Whether the last first page went out before its totals were counted (it shows "…"). */
let counting = false;

/** Trade the URL's token for the cookie, then GET the overview: the first page a person sees. */
async function firstPage(viewerUrl: string): Promise<void> {
  const { cookie } = await httpGet(viewerUrl);
  const page = await httpGet(`${new URL(viewerUrl).origin}/`, { cookie });
  if (page.status !== 200 || !page.body.includes('id="entries"'))
    throw new Error(`the viewer's first page failed: ${page.status}`);
  counting = page.body.includes('id="counting"');
}

/** `s` seconds, with "†" when the page went out before the totals. */
const firstPageText = (s: number) => `${s.toFixed(2)} s${counting ? "†" : ""}`;

/** Seconds from `startViewer` to its first page served, in this process. */
async function viewerInProcess(url: string): Promise<number> {
  const t0 = performance.now();
  const viewer = await startViewer({ store: url });
  await firstPage(viewer.url);
  const seconds = (performance.now() - t0) / 1e3;
  await viewer.close();
  return seconds;
}

/** Seconds from spawning `invocache view --json` to its first page served. */
async function viewerProcess(url: string): Promise<number> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(root, "src/cli/main.ts"), "view", "--store", url, "--json"],
    { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
  );
  try {
    const viewerUrl = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (c: string) => {
        out += c;
        // `--json` prints one JSON object (over several lines) once the viewer listens.
        try {
          resolve((JSON.parse(out) as { url: string }).url);
        } catch {
          // not all of it yet
        }
      });
      child.once("exit", (code) => reject(new Error(`invocache view exited ${code}`)));
    });
    await firstPage(viewerUrl);
    return (performance.now() - t0) / 1e3;
  } finally {
    child.kill("SIGTERM");
  }
}

const dir = mkdtempSync(join(tmpdir(), "invocache-scale-"));
try {
  if (!existsSync("/usr/bin/time")) throw new Error("needs /usr/bin/time for peak RSS");
  process.stderr.write(
    `[scale] load average ${loadavg()[0]!.toFixed(2)}${legacy ? " (--legacy: no stored metadata)" : ""}\n`,
  );
  const small = join(dir, "s1k.sqlite");
  await build(small, 1_000);
  const lines = [
    "| entries | file | build | hit p50 (vs 1k) | ls --json | stats --json | prune --dry-run | viewer first page (process / in process) |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  // The floor the viewer rows compare with: the same, on the 1,000-entry store
  // (after one unmeasured round: tsx compiles on the first start, the first
  // viewer in this process loads its modules).
  await viewerProcess(`sqlite://${small}`);
  await viewerInProcess(`sqlite://${small}`);
  const floorProcess = firstPageText(await viewerProcess(`sqlite://${small}`));
  const floor = `${floorProcess} / ${firstPageText(await viewerInProcess(`sqlite://${small}`))}`;
  process.stderr.write(`[scale] viewer first page at 1,000 entries: ${floor}\n`);
  for (const n of sizes) {
    const file = join(dir, `s${n}.sqlite`);
    const t0 = performance.now();
    await build(file, n);
    const buildS = (performance.now() - t0) / 1e3;
    const [big, ref] = await hitP50(file, small);
    const url = `sqlite://${file}`;
    const ls = cli(["ls", "--store", url, "--json"]);
    const stats = cli(["stats", "--store", url, "--json"]);
    const prune = cli(["prune", "--store", url, "--older-than", "3650d", "--dry-run", "--json"]);
    const viewProc = firstPageText(await viewerProcess(url));
    const viewIn = firstPageText(await viewerInProcess(url));
    const mb = (statSync(file).size / 1e6).toFixed(0);
    const fmt = (c: { seconds: number; rssMiB: number }) =>
      `${c.seconds.toFixed(1)} s, ${c.rssMiB} MiB`;
    lines.push(
      `| ${n.toLocaleString("en")} | ${mb} MB | ${buildS.toFixed(1)} s | ${big.toFixed(0)} µs (${(big / ref).toFixed(2)}×) | ${fmt(ls)} | ${fmt(stats)} | ${fmt(prune)} | ${viewProc} / ${viewIn} |`,
    );
    process.stderr.write(`[scale] ${lines.at(-1)}\n`);
    rmSync(file, { force: true });
  }
  process.stdout.write(
    `${lines.join("\n")}\n\nViewer first page at 1,000 entries: ${floor}. †: the page went out before its totals were counted (cards "…").\n`,
  );
  process.stderr.write(`[scale] load average ${loadavg()[0]!.toFixed(2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
