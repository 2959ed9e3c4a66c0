/**
 * `node --import tsx bench/scale.ts [--full] [--backend sqlite|postgres]`:
 * how a store of many entries behaves. For 10k and 100k entries (and 1M with
 * `--full`, or INVOCACHE_SCALE_1M=1: building and scanning it takes minutes):
 *
 * - hit latency p50 of a recorder on that store beside one on a 1,000-entry
 *   store, interleaved (target: within 1.2x);
 * - `invocache ls` to its first page (time until the first rows reach
 *   stdout; through tsx and as the built package, both also on the
 *   1,000-entry store), and `ls --json`, `stats --json` and `prune --older-than 3650d
 *   --dry-run` (nothing is that old: the scan is the cost) as whole
 *   processes under /usr/bin/time: wall time and peak RSS, and how both
 *   grow with N;
 * - the viewer's first page: `invocache view --json` started as a process
 *   until its overview is served over HTTP, through tsx (the sources: node
 *   and tsx start-up included, compare with the 1,000-entry row) and as the
 *   built package (`dist/cli/main.js`, after `npm run build`: how an
 *   installed invocache starts), and `startViewer` in this process until
 *   the same page is served; "†" marks a page that went out before its
 *   totals were counted (it waits for them up to 0.5 s).
 *
 * The stores are built by one SQL statement copying one real recorded
 * entry, with its stored metadata, under fresh random ids (SQLite: a
 * recursive CTE; PostgreSQL: generate_series, in a throwaway cluster with
 * one database per size), not through the recorder. The copies' metadata
 * vary as a real store's do ({@link VARIED}: two namespaces, five roles, six
 * models, one of them with a tiered price, tokens and durations), so
 * `stats` sums realistic groups; the values stay copies.
 * `--baseline <checkout>` also runs `stats` with the CLI of another checkout
 * (the code before a change) on the same stores, for an old/new ratio, and
 * `stats` and `prune --dry-run` of both alternated three times each (medians
 * of wall and CPU seconds: the ratio to read on a shared machine). `--legacy` copies the
 * values only, as a store made before stored metadata: the commands then
 * read every value (the figures before issue 34), and say how to migrate.
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
import { PG_VALUES_TABLE } from "../src/store/backends/postgres.js";
import { META_COLUMN_NAMES, META_COLUMNS } from "../src/store/backends/sql-meta-columns.js";
import { PG_DIALECT, SQLITE_DIALECT } from "../src/store/backends/sql-meta-stats.js";
import { SQLITE_VALUES_TABLE } from "../src/store/backends/sqlite.js";
import { startViewer } from "../src/viewer/index.js";
import { type PostgresServer, startPostgresServer } from "../test/helpers/postgres-server.js";
import { machine, req, response } from "./support/hit-request.js";
import { sameStats } from "./support/same-stats.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const full = process.argv.includes("--full") || process.env.INVOCACHE_SCALE_1M === "1";
const legacy = process.argv.includes("--legacy");
const backendAt = process.argv.indexOf("--backend");
const backendName = backendAt >= 0 ? process.argv[backendAt + 1]! : "sqlite";
if (backendName !== "sqlite" && backendName !== "postgres") {
  throw new Error(`--backend: "${backendName}" is not sqlite or postgres`);
}
const baselineAt = process.argv.indexOf("--baseline");
const baseline = baselineAt >= 0 ? process.argv[baselineAt + 1]! : undefined;
// `--hold`: after measuring each size, print its URL and keep the store until
// SIGINT/SIGTERM, which drops it: a store to time statements against by hand.
const hold = process.argv.includes("--hold");
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

/**
 * How the copies' stored metadata vary, copy i taking element i % length
 * of each list (the lengths are coprime, so the combinations vary too).
 */
const VARIED = {
  namespaces: ["default", "ci"],
  roles: ["planner", "builder", "critic", "reviewer", "tester"],
  models: [
    "gpt-5",
    "gpt-4o",
    "gpt-4o-mini",
    "claude-3-5-haiku-20241022",
    "gemini-2.5-pro",
    "sim-1",
  ],
  /** Input tokens 100 + i % 997, output 50 + i % 499, duration (i % 100,000) µs. */
} as const;
const sqlList = (xs: readonly string[]) => `'${JSON.stringify(xs)}'`;

/** Record the bench request's real entry into `url`: the one every copy is made of. */
async function recordOne(url: string): Promise<string> {
  const recorder = createRecorder({ store: url, mode: "auto", identity: machine });
  await recorder.call(req, async () => response);
  await recorder.close();
  return invocationIdentity(req, machine);
}

/** A SQLite store of `n` entries: the bench request's real entry plus n-1 copies under random ids. */
async function buildSqlite(file: string, n: number): Promise<void> {
  const id = await recordOne(`sqlite://${file}`);
  const db = await new Promise<Db>((resolve, reject) => {
    const d = new sqlite3.Database(file, (e) => (e ? reject(e) : resolve(d)));
  });
  const exec = (sql: string) =>
    new Promise<void>((resolve, reject) => db.exec(sql, (e) => (e ? reject(e) : resolve())));
  const pick = (list: readonly string[]) =>
    `json_extract(${sqlList(list)}, '$[' || (ids.i % ${list.length}) || ']')`;
  const meta = `json_set(replace(t.m_meta, '${id}', ids.id),
      '$.namespace', ${pick(VARIED.namespaces)}, '$.role', ${pick(VARIED.roles)},
      '$.model', ${pick(VARIED.models)}, '$.usage.model', ${pick(VARIED.models)},
      '$.usage.inputTokens', 100 + ids.i % 997, '$.usage.outputTokens', 50 + ids.i % 499,
      '$.durationMs', (ids.i % 100000) / 1000.0)`;
  // The metadata's columns (sql-meta-columns.ts) from the copy's metadata
  // `m`, as the migration fills them: what this version writes.
  const cols = META_COLUMNS.map((c) => c.json(SQLITE_DIALECT)).join(", ");
  await exec(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${n - 1}),
    ids(i, id) AS MATERIALIZED (SELECT i, lower(hex(randomblob(32))) FROM c)
    INSERT INTO ${SQLITE_VALUES_TABLE} (key, value, m_meta, m_at, m_rev${legacy ? "" : `, m_cols, ${META_COLUMN_NAMES}`})
    SELECT k, v, m, at, rev${legacy ? "" : `, 1, ${cols}`} FROM (
    SELECT ${legacy ? "'default'" : pick(VARIED.namespaces)} || ':e:' || ids.id || ':0' AS k,
      replace(t.value, '${id}', ids.id) AS v,
      ${legacy ? "NULL AS m, NULL AS at, NULL AS rev" : `${meta} AS m, t.m_at AS at, 1 AS rev`}
    FROM ids, (SELECT value, m_meta, m_at FROM ${SQLITE_VALUES_TABLE} WHERE key = 'default:e:${id}:0') t)`);
  await new Promise<void>((resolve) => db.close(() => resolve()));
}

interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}
/** pg is @keyv/postgres's dependency; resolved from there, as the store does. */
const pg = createRequire(createRequire(import.meta.url).resolve("@keyv/postgres"))("pg") as {
  Client: new (c: object) => PgClient;
};

/** One SQL statement on `url`, on a connection of its own. */
async function pgQuery(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** A PostgreSQL store of `n` entries in database `db` of the cluster: as buildSqlite. */
async function buildPostgres(server: PostgresServer, db: string, n: number): Promise<string> {
  await pgQuery(server.url, `CREATE DATABASE ${db}`);
  const url = server.url.replace(/\/postgres$/, `/${db}`);
  const id = await recordOne(url);
  const T = `public.${PG_VALUES_TABLE}`;
  // md5 twice: 64 hex characters, as an identity; one id per row, used for key and value alike.
  const pick = (list: readonly string[]) =>
    `(${sqlList(list)}::jsonb ->> (ids.i % ${list.length})::int)`;
  const set = (m: string, path: string, value: string) =>
    `jsonb_set(${m}, '{${path}}', to_jsonb(${value}))`;
  let meta = `replace(t.m_meta, '${id}', ids.id)::jsonb`;
  for (const [path, value] of [
    ["namespace", pick(VARIED.namespaces)],
    ["role", pick(VARIED.roles)],
    ["model", pick(VARIED.models)],
    ["usage,model", pick(VARIED.models)],
    ["usage,inputTokens", "100 + ids.i % 997"],
    ["usage,outputTokens", "50 + ids.i % 499"],
    ["durationMs", "(ids.i % 100000) / 1000.0"],
  ] as const) {
    meta = set(meta, path, value);
  }
  // The metadata's columns from the copy's metadata `m`, as buildSqlite.
  // OFFSET 0 keeps the subquery from being pulled up into the INSERT, where
  // each column could build the copy's JSON again (a 1M build with the
  // columns ran over 9 minutes on a busy machine; not measured since).
  const cols = META_COLUMNS.map((c) => c.json(PG_DIALECT)).join(", ");
  await pgQuery(
    url,
    `INSERT INTO ${T} (key, value${legacy ? "" : `, m_meta, m_at, m_rev, m_cols, ${META_COLUMN_NAMES}`})
     SELECT k, v${legacy ? "" : `, m::text, at, 1, 1, ${cols}`} FROM (
     SELECT ${legacy ? "'default'" : pick(VARIED.namespaces)} || ':e:' || ids.id || ':0' AS k,
       replace(t.value, '${id}', ids.id) AS v, ${legacy ? "NULL::jsonb AS m, NULL AS at" : `(${meta}) AS m, t.m_at AS at`}
     FROM (SELECT i, md5(random()::text || i) || md5(i || random()::text) AS id
           FROM generate_series(1, ${n - 1}) i) ids,
          (SELECT value, m_meta, m_at FROM ${T} WHERE key = 'default:e:${id}:0') t
     OFFSET 0) s`,
  );
  if (legacy) await pgQuery(url, `UPDATE ${T} SET m_meta = NULL, m_at = NULL`);
  await pgQuery(url, `VACUUM ANALYZE ${T}`);
  return url;
}

/** p50 of hits on two stores, interleaved call by call. */
async function hitP50(urlA: string, urlB: string): Promise<[number, number]> {
  const a = createRecorder({ store: urlA, mode: "replay", identity: machine });
  const b = createRecorder({ store: urlB, mode: "replay", identity: machine });
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

/**
 * `invocache ls` as a whole process, until its first rows reach stdout:
 * seconds. Through tsx (the sources), or `built`: the built package's
 * `dist/cli/main.js`, as an installed invocache starts (tsx's own start-up,
 * ~0.5 s here, is no part of what a user waits for).
 */
function lsFirstPage(url: string, built = false): Promise<number> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...(built ? [builtCli] : ["--import", "tsx", join(root, "src/cli/main.ts")]),
      "ls",
      "--store",
      url,
    ],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  return new Promise((resolve, reject) => {
    child.stdout.once("data", () => {
      resolve((performance.now() - t0) / 1e3);
      child.kill("SIGKILL");
    });
    child.once("exit", (code) => reject(new Error(`invocache ls exited ${code} before printing`)));
  });
}

/** One CLI command as a whole process: wall seconds, peak RSS (MiB) and its stdout. */
function cli(
  args: string[],
  checkout = root,
): { seconds: number; cpu: number; rssMiB: number; stdout: string } {
  const r = spawnSync(
    "/usr/bin/time",
    [
      "-f",
      "%e %M %U %S",
      process.execPath,
      "--import",
      "tsx",
      join(checkout, "src/cli/main.ts"),
      ...args,
    ],
    { cwd: checkout, encoding: "utf8", maxBuffer: 1 << 30 },
  );
  if (r.status !== 0) throw new Error(`invocache ${args.join(" ")} failed: ${r.stderr}`);
  const last = r.stderr.trim().split("\n").at(-1)!.split(" ");
  return {
    seconds: Number(last[0]),
    // User and system CPU seconds: steadier than wall time on a shared machine.
    cpu: Number(last[2]) + Number(last[3]),
    rssMiB: Math.round(Number(last[1]) / 1024),
    stdout: r.stdout,
  };
}

/**
 * `args` with this checkout's CLI and `baseline`'s, alternated over three
 * rounds (old first, then new first, then old first): the medians of wall
 * and CPU seconds of each, and the outputs of the last round.
 */
function alternated(args: string[], checkout: string) {
  const runs = {
    old: [] as Array<ReturnType<typeof cli>>,
    new: [] as Array<ReturnType<typeof cli>>,
  };
  for (const oldFirst of [true, false, true]) {
    for (const which of oldFirst ? (["old", "new"] as const) : (["new", "old"] as const)) {
      runs[which].push(cli(args, which === "old" ? checkout : root));
    }
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[1]!;
  const of = (rs: Array<ReturnType<typeof cli>>) => ({
    seconds: median(rs.map((r) => r.seconds)),
    cpu: median(rs.map((r) => r.cpu)),
    stdout: rs.at(-1)!.stdout,
  });
  return { old: of(runs.old), new: of(runs.new) };
}

/** "new s / old s (ratio), CPU new / old (ratio)" of {@link alternated}. */
function ratioText(r: ReturnType<typeof alternated>): string {
  const x = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : "—");
  return `${r.new.seconds.toFixed(1)} / ${r.old.seconds.toFixed(1)} s (${x(r.new.seconds, r.old.seconds)}), CPU ${r.new.cpu.toFixed(1)} / ${r.old.cpu.toFixed(1)} s (${x(r.new.cpu, r.old.cpu)})`;
}

interface Backend {
  /** A store of n entries: its URL. */
  build(n: number): Promise<string>;
  /** Its size on disk. */
  bytes(n: number): Promise<number>;
  drop(n: number): Promise<void>;
  close(): Promise<void>;
}

function sqliteBackend(dir: string): Backend {
  const file = (n: number) => join(dir, `s${n}.sqlite`);
  return {
    build: async (n) => {
      await buildSqlite(file(n), n);
      return `sqlite://${file(n)}`;
    },
    bytes: async (n) => statSync(file(n)).size,
    drop: async (n) => rmSync(file(n), { force: true }),
    close: async () => {},
  };
}

async function postgresBackend(): Promise<Backend> {
  const server = await startPostgresServer();
  const urls = new Map<number, string>();
  return {
    build: async (n) => {
      const url = await buildPostgres(server, `s${n}`, n);
      urls.set(n, url);
      return url;
    },
    bytes: async (n) =>
      Number(
        (await pgQuery(urls.get(n)!, "SELECT pg_database_size(current_database()) AS b"))[0]!.b,
      ),
    drop: async (n) => {
      await pgQuery(server.url, `DROP DATABASE s${n} WITH (FORCE)`);
    },
    close: () => server.stop(),
  };
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

/** The built CLI (`npm run build`), when there is one. */
const builtCli = join(root, "dist/cli/main.js");

/**
 * Seconds from spawning `invocache view --json` to its first page served:
 * through tsx (the sources), or `built`: the built package's `dist/cli/main.js`,
 * as an installed invocache starts.
 */
async function viewerProcess(url: string, built = false): Promise<number> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...(built ? [builtCli] : ["--import", "tsx", join(root, "src/cli/main.ts")]),
      "view",
      "--store",
      url,
      "--json",
    ],
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
    `[scale] ${backendName}, load average ${loadavg()[0]!.toFixed(2)}${legacy ? " (--legacy: no stored metadata)" : ""}\n`,
  );
  const backend = backendName === "postgres" ? await postgresBackend() : sqliteBackend(dir);
  try {
    const small = await backend.build(1_000);
    const lines = [
      `| ${backendName} entries | size | build | hit p50 (vs 1k) | ls first page (through tsx / built) | ls --json | stats --json${baseline === undefined ? "" : " (baseline, new/old)"} | prune --dry-run | viewer first page (process through tsx / built process / in process) |`,
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ];
    // The floor the viewer rows compare with: the same, on the 1,000-entry store
    // (after one unmeasured round: tsx compiles on the first start, the first
    // viewer in this process loads its modules).
    const built = existsSync(builtCli);
    await viewerProcess(small);
    await viewerInProcess(small);
    const floorProcess = firstPageText(await viewerProcess(small));
    const floorBuilt = built ? firstPageText(await viewerProcess(small, true)) : "— (no dist/)";
    const floor = `${floorProcess} / ${floorBuilt} / ${firstPageText(await viewerInProcess(small))}`;
    const compared: string[] = [];
    process.stderr.write(`[scale] viewer first page at 1,000 entries: ${floor}\n`);
    process.stderr.write(
      `[scale] ls first page at 1,000 entries: ${(await lsFirstPage(small)).toFixed(2)} s / ${built ? `${(await lsFirstPage(small, true)).toFixed(2)} s` : "— (no dist/)"}\n`,
    );
    for (const n of sizes) {
      const t0 = performance.now();
      const url = await backend.build(n);
      const buildS = (performance.now() - t0) / 1e3;
      const [big, ref] = await hitP50(url, small);
      const first = await lsFirstPage(url);
      const firstBuilt = built ? await lsFirstPage(url, true) : undefined;
      const ls = cli(["ls", "--store", url, "--json"]);
      const fmt = (c: { seconds: number; rssMiB: number }) =>
        `${c.seconds.toFixed(1)} s, ${c.rssMiB} MiB`;
      const stats = cli(["stats", "--store", url, "--json"]);
      const prune = cli(["prune", "--store", url, "--older-than", "3650d", "--dry-run", "--json"]);
      // Figures of a store whose copies did not read back would measure the wrong thing.
      const counted = JSON.parse(stats.stdout) as { entries: number; problems: number };
      if (counted.entries !== n || counted.problems !== 0) {
        throw new Error(
          `the ${n}-entry store reads as ${counted.entries} entries, ${counted.problems} problems`,
        );
      }
      let statsText = fmt(stats);
      if (baseline !== undefined) {
        const old = cli(["stats", "--store", url, "--json"], baseline);
        sameStats(old.stdout, stats.stdout);
        statsText += ` (${old.seconds.toFixed(1)} s, ${(stats.seconds / old.seconds).toFixed(2)}×)`;
        // Alternated, with CPU time: the figures the ratio is read from.
        const s = alternated(["stats", "--store", url, "--json"], baseline);
        sameStats(s.old.stdout, s.new.stdout);
        const pruneArgs = ["prune", "--store", url, "--older-than", "3650d", "--dry-run", "--json"];
        const p = alternated(pruneArgs, baseline);
        if (p.old.stdout !== p.new.stdout) throw new Error("prune --dry-run reports differ");
        compared.push(
          `| ${n.toLocaleString("en")} | ${ratioText(s)} | ${ratioText(p)} | ${loadavg()[0]!.toFixed(2)} |`,
        );
        process.stderr.write(`[scale] ${compared.at(-1)}\n`);
      }
      const viewProc = `${firstPageText(await viewerProcess(url))} / ${
        built ? firstPageText(await viewerProcess(url, true)) : "—"
      }`;
      const viewIn = firstPageText(await viewerInProcess(url));
      const mb = ((await backend.bytes(n)) / 1e6).toFixed(0);
      lines.push(
        `| ${n.toLocaleString("en")} | ${mb} MB | ${buildS.toFixed(1)} s | ${big.toFixed(0)} µs (${(big / ref).toFixed(2)}×) | ${first.toFixed(2)} s / ${firstBuilt === undefined ? "—" : `${firstBuilt.toFixed(2)} s`} | ${fmt(ls)} | ${statsText} | ${fmt(prune)} | ${viewProc} / ${viewIn} |`,
      );
      process.stderr.write(`[scale] ${lines.at(-1)}\n`);
      if (hold) {
        process.stderr.write(`[scale] holding ${url} (pid ${process.pid}; SIGINT drops it)\n`);
        // A signal listener alone does not keep the process alive.
        const alive = setInterval(() => {}, 1 << 30);
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        clearInterval(alive);
      }
      await backend.drop(n);
    }
    process.stdout.write(
      `${lines.join("\n")}\n\nViewer first page at 1,000 entries: ${floor}. †: the page went out before its totals were counted (cards "…").\n`,
    );
    if (compared.length > 0) {
      process.stdout.write(
        `\nAgainst ${baseline}, alternated (3 runs each, medians; new / old):\n\n| entries | stats --json | prune --dry-run --older-than 3650d | load |\n| ---: | ---: | ---: | ---: |\n${compared.join("\n")}\n`,
      );
    }
  } finally {
    await backend.close();
  }
  process.stderr.write(`[scale] load average ${loadavg()[0]!.toFixed(2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
