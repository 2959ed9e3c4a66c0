/**
 * Secrets never reach the disk or a shared store. A corpus of credential
 * shapes (OpenAI, Anthropic, AWS, GitHub, GitLab, Hugging Face, Google,
 * Slack, Stripe, JWTs, Bearer tokens, PEM keys, Azure connection strings,
 * postgres:// and https:// userinfo passwords), each planted raw,
 * JSON-escaped, URL-encoded, base64 and as an HTTP Basic `user:secret`
 * (a distinct secret per cell), in prompts, params, responses and tool-call
 * arguments (JSON inside JSON: escaped twice) through recorder.call; through
 * createFetch against a loopback upstream that echoes them back; and through
 * the real openai SDK (with createFetch as its fetch) in the user message and
 * a tool description, echoed back as content, as tool-call arguments and as
 * SSE. More secrets go in request headers, the query string and response
 * headers. Then the bytes are searched, every spelling of every secret: the
 * cassette file, the SQLite file (+ WAL) and every key and value in Redis
 * (read over a raw connection); and secretlint (a scanner we did not write)
 * reads every byte the stores wrote and must find nothing, while it does find
 * secrets in what went upstream.
 *
 * Two situations:
 * - env: the secrets are the values of the process's secret-named
 *   environment variables (the key a test runs with). Every spelling must
 *   be redacted: that is the documented contract (docs/cassettes.md).
 * - pasted: no environment variable holds them (a key pasted into a prompt,
 *   echoed by a model). The key shapes find them, encoded ones included.
 *
 * The default run plants 17 shapes (SAMPLED_SHAPES) to keep the suite fast;
 * INVOCACHE_SECRETS_FULL=1 plants every shape of the corpus.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createClient } from "@keyv/redis";
import { lintSource } from "@secretlint/core";
import { creator as secretlintRecommended } from "@secretlint/secretlint-rule-preset-recommend";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import {
  createFetch,
  createRecorder,
  invocationIdentity,
  openStore,
  type Store,
  withInvocation,
} from "../../src/index.js";
import { type RedisServer, redisServerBinary, startRedisServer } from "../helpers/redis-server.js";
import { skipUnless } from "../helpers/service.js";
import { tempDir } from "./helpers.js";
import {
  type Cell,
  corpusCells,
  corpusEnv,
  describeLeaks,
  headerValue,
  type Leak,
  LeakScanner,
  plant,
  SAMPLED_SHAPES,
  SHAPE_NAMES,
} from "./secret-corpus.js";

const IDENTITY = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const dir = tempDir("secrets");
const skipRedis = skipUnless(
  redisServerBinary !== undefined,
  "redis-server",
  "apt-get install -y redis-server",
);

// ---- the corpus ------------------------------------------------------------------

const SHAPES = process.env.INVOCACHE_SECRETS_FULL ? undefined : SAMPLED_SHAPES;
/** env situation: secrets held in secret-named env variables (AWS key *ids* have none). */
const ENV_CELLS = corpusCells("env", SHAPES).filter((c) => c.env !== undefined);
/** pasted situation: the same shapes, new values, no env variable. */
const PASTED_CELLS = corpusCells("pasted", SHAPES);
/** Secrets sent only in request headers and the query string (raw keys). */
const HEADER_CELLS = corpusCells("headers", SHAPES).filter((c) => c.form === "raw");

// ---- an upstream that echoes what it gets -----------------------------------------

let upstream: Server;
let upstreamUrl = "";
/** Everything the upstream received (request line, headers, body): proof the secrets went out. */
const received: Buffer[] = [];

function lastUserContent(body: unknown): string {
  const messages = (body as { messages?: Array<{ role: string; content: string }> }).messages;
  return messages?.filter((m) => m.role === "user").at(-1)?.content ?? "";
}

beforeAll(async () => {
  let n = 0;
  upstream = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      received.push(
        Buffer.from(`${req.method} ${req.url}\n${JSON.stringify(req.headers)}\n`),
        body,
      );
      const echo = String(req.headers["x-api-key"] ?? "");
      n++;
      const parsed = JSON.parse(body.toString()) as { stream?: boolean };
      const content = `You sent: ${lastUserContent(parsed)}`;
      // The tool call echoes the message as its JSON arguments (JSON inside JSON).
      const toolCall = {
        index: 0,
        id: `call_${n}`,
        type: "function",
        function: { name: "lookup", arguments: JSON.stringify({ echo: content }) },
      };
      const headers = {
        "x-request-id": `req_${n}`,
        // Echoes of the credential in response headers: never to be stored.
        "x-echo-authorization": String(req.headers.authorization ?? ""),
        "openai-organization": echo,
        "set-cookie": `session=${encodeURIComponent(echo)}; HttpOnly`,
      };
      const base = { id: `chatcmpl-${n}`, model: "gpt-fake", created: 1_700_000_000 };
      if (parsed.stream === true) {
        res.writeHead(200, { ...headers, "content-type": "text/event-stream" });
        const event = (delta: unknown, finish: string | null) =>
          `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.write(event({ role: "assistant", content: "" }, null));
        res.write(event({ content }, null));
        res.write(event({ tool_calls: [toolCall] }, null));
        res.end(`${event({}, "tool_calls")}data: [DONE]\n\n`);
        return;
      }
      res.writeHead(200, { ...headers, "content-type": "application/json" });
      res.end(
        JSON.stringify({
          ...base,
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content, tool_calls: [toolCall] },
              finish_reason: "stop",
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

// ---- the traffic -------------------------------------------------------------------

/**
 * Plant every cell through `store`: one recorder.call (prompt, params,
 * response) and one createFetch call (message, echoed answer; header
 * secrets in request headers, the query, and echoed response headers).
 * Returns how many entries were recorded.
 */
async function plantAll(store: Store, cells: readonly Cell[]): Promise<number> {
  const recorder = createRecorder({ store, mode: "auto", identity: IDENTITY });
  const fetch = createFetch({ recorder });
  const warnings: string[] = [];
  recorder.on("warning", (w) => warnings.push(w.message));
  let next = 0;
  const lane = async () => {
    while (next < cells.length) {
      const i = next++;
      const cell = cells[i]!;
      const text = plant(cell);
      await recorder.call(
        // The task keeps identities apart: with the key redacted, two prompts
        // that differ only in their key are the same invocation.
        {
          role: "builder",
          model: "gpt-5",
          task: cell.id,
          prompt: `Use this. ${text}`,
          params: { context: text },
        },
        async () => ({
          text: `Understood: ${text}`,
          echo: { credential: cell.text },
          tool_calls: [
            { type: "function", function: { name: "lookup", arguments: JSON.stringify({ text }) } },
          ],
        }),
      );
      const header = headerValue(HEADER_CELLS[i % HEADER_CELLS.length]!);
      const res = await withInvocation({ role: "http", task: cell.id }, () =>
        fetch(
          `${upstreamUrl}/v1/chat/completions?key=${encodeURIComponent(header)}&api-version=1`,
          {
            method: "POST",
            headers: {
              "content-type": "application/json",
              authorization: `Bearer ${header}`,
              "x-api-key": header,
              "api-key": header,
              "x-goog-api-key": header,
              cookie: `session=${encodeURIComponent(header)}`,
            },
            body: JSON.stringify({
              model: "gpt-fake",
              messages: [
                { role: "system", content: "You are terse." },
                { role: "user", content: text },
              ],
              temperature: 0,
              user: header,
              metadata: { token: header },
            }),
          },
        ),
      );
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      // The real SDK, with createFetch as its fetch: message and tool description
      // out; content, tool-call arguments and SSE echoed back.
      const client = new OpenAI({
        apiKey: header,
        baseURL: `${upstreamUrl}/v1`,
        fetch: fetch as unknown as typeof globalThis.fetch,
        maxRetries: 0,
      });
      const tools = [
        {
          type: "function" as const,
          function: {
            name: "lookup",
            description: `Look a credential up. ${text}`,
            parameters: { type: "object", properties: {} },
          },
        },
      ];
      const answer = await withInvocation({ role: "sdk", task: cell.id }, () =>
        client.chat.completions.create({
          model: "gpt-fake",
          messages: [{ role: "user", content: text }],
          tools,
        }),
      );
      expect(answer.choices[0]?.message.content).toContain("You sent:");
      const stream = await withInvocation({ role: "sdk-stream", task: cell.id }, () =>
        client.chat.completions.create({
          model: "gpt-fake",
          messages: [{ role: "user", content: text }],
          tools,
          stream: true,
        }),
      );
      let streamed = "";
      for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? "";
      expect(streamed).toContain("You sent:");
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  await recorder.close();
  expect(warnings).toStrictEqual([]);
  expect(recorder.stats.recorded).toBe(cells.length * 4);
  return recorder.stats.recorded;
}

/** Stub the env variables of `cells` (for stores that read process.env) and return the env. */
function withEnv(cells: readonly Cell[]): Record<string, string> {
  const env = corpusEnv(cells);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return env;
}

// ---- where the bytes are -----------------------------------------------------------

/** Every file directly in `path` (none when it does not exist yet). */
function folderBytes(path: string): Buffer {
  if (!existsSync(path)) return Buffer.alloc(0);
  return Buffer.concat(
    readdirSync(path, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => readFileSync(join(path, e.name))),
  );
}

/** Every key and value in the Redis server, over a raw connection. */
async function redisBytes(url: string): Promise<Buffer> {
  const client = createClient({ url });
  client.on("error", () => {});
  await client.connect();
  const parts: Buffer[] = [];
  try {
    for await (const keys of client.scanIterator({ MATCH: "*", COUNT: 500 })) {
      for (const key of [keys].flat()) {
        // Values are strings; their stored metadata (redis-meta.ts) hashes and sorted sets.
        const type = await client.type(key);
        expect(["string", "hash", "zset"], `redis key ${key}: ${type}`).toContain(type);
        const text =
          type === "string"
            ? ((await client.get(key)) ?? "")
            : type === "hash"
              ? JSON.stringify(await client.hGetAll(key))
              : JSON.stringify(await client.zRange(key, 0, -1));
        parts.push(Buffer.from(`${key}\n${text}\n`));
      }
    }
  } finally {
    await client.close();
  }
  return Buffer.concat(parts);
}

interface Findings {
  /** Leaks of the env situation (env cells). */
  env: Leak[];
  /** Leaks of the pasted situation (all cells). */
  pasted: Leak[];
  /** Leaks of header/query secrets, either situation. */
  headers: Leak[];
  entries: number;
  /** Every byte the target held, both situations. */
  bytes: Buffer;
}

const envScanner = new LeakScanner(ENV_CELLS);
const pastedScanner = new LeakScanner(PASTED_CELLS);
const headerScanner = new LeakScanner(HEADER_CELLS);

function findings(envBytes: Buffer, pastedBytes: Buffer, entries: number): Findings {
  return {
    env: envScanner.scan(envBytes),
    pasted: pastedScanner.scan(pastedBytes),
    headers: headerScanner.scan(Buffer.concat([envBytes, pastedBytes])),
    entries,
    bytes: Buffer.concat([envBytes, pastedBytes]),
  };
}

const results = new Map<string, Findings>();

afterAll(() => {
  // The precise picture, for the lead: which cell leaked where, in which spelling.
  for (const [where, f] of results) {
    console.log(
      [
        `secrets in ${where} (${f.entries} entries written, ${PASTED_CELLS.length} cells per situation):`,
        `  env situation: ${f.env.length === 0 ? "no leak" : `${describeLeaks(f.env).length} cells leak: ${describeLeaks(f.env).join("; ")}`}`,
        `  pasted situation: ${f.pasted.length === 0 ? "no leak" : `${describeLeaks(f.pasted).length} cells leak: ${describeLeaks(f.pasted).join("; ")}`}`,
        `  header/query secrets: ${f.headers.length === 0 ? "no leak" : describeLeaks(f.headers).join("; ")}`,
      ].join("\n"),
    );
  }
});

/** What secretlint's recommended preset reports in `bytes` (rule ids and the matched text's length, never the text). */
async function secretlint(bytes: Buffer): Promise<string[]> {
  const result = await lintSource({
    source: {
      content: bytes.toString("latin1"),
      filePath: "/store.txt",
      ext: ".txt",
      contentType: "text",
    },
    options: {
      config: {
        rules: [
          { id: "@secretlint/secretlint-rule-preset-recommend", rule: secretlintRecommended },
        ],
      },
      maskSecrets: true,
    },
  });
  return result.messages.map((m) => `${m.ruleId} (${m.range[1] - m.range[0]} chars)`);
}

// ---- the corpus itself -------------------------------------------------------------

describe("the secret corpus", () => {
  it("has at least 30 shapes (17 sampled by default), each in five spellings, all distinct", () => {
    expect(SHAPE_NAMES.length).toBeGreaterThanOrEqual(30);
    expect(PASTED_CELLS).toHaveLength((SHAPES ?? SHAPE_NAMES).length * 5);
    const values = [...ENV_CELLS, ...PASTED_CELLS, ...HEADER_CELLS].flatMap((c) => c.material);
    expect(new Set(values).size).toBe(values.length);
  });

  it("the byte scanner finds every planted secret in what was sent upstream (so a clean store is a real result)", async () => {
    const store = openStore("memory://");
    await plantAll(store, PASTED_CELLS.slice(0, 12));
    await store.close();
    const sent = Buffer.concat(received);
    const found = new Set(pastedScanner.scan(sent).map((l) => l.cell));
    for (const c of PASTED_CELLS.slice(0, 12)) expect(found.has(c.id), c.id).toBe(true);
    const headers = new Set(headerScanner.scan(sent).map((l) => l.cell));
    for (const c of HEADER_CELLS.slice(0, 12)) expect(headers.has(c.id), c.id).toBe(true);
  });

  it("secretlint finds secrets in what was sent upstream (so its silence on the stores is a real result)", async () => {
    expect((await secretlint(Buffer.concat(received))).length).toBeGreaterThan(0);
  });
});

// ---- the guarantees, per target -------------------------------------------------------

/** The tests every target (cassette files, the SQLite file, Redis) must pass. */
function secretTests(target: string): void {
  const found = () => {
    const f = results.get(target);
    if (f === undefined) throw new Error(`${target}: nothing was planted`);
    return f;
  };

  it("env: no spelling (raw, JSON-escaped, URL-encoded, base64, Basic) of any env-held secret reaches it", () => {
    expect(describeLeaks(found().env)).toStrictEqual([]);
  });

  it("request headers, the query string and response headers never reach it", () => {
    expect(describeLeaks(found().headers)).toStrictEqual([]);
  });

  it("pasted: every key shape, in every spelling (raw, JSON, URL-encoded, base64, Basic), is redacted", () => {
    expect(describeLeaks(found().pasted)).toStrictEqual([]);
  });

  it("secretlint (a scanner we did not write) finds nothing in any byte it holds", async () => {
    expect(await secretlint(found().bytes)).toStrictEqual([]);
  });
}

// ---- identities and the environment -------------------------------------------------

describe("identities do not depend on the machine's environment", () => {
  // Fixed (the identity uses only key-material-looking env values): a
  // secret-named variable whose value is an ordinary word changes identities:
  // with POSTGRES_PASSWORD=postgres (the docker image's default, common on
  // dev machines and CI services) the prompt "Set up postgres…" hashes as
  // "Set up {secret:POSTGRES_PASSWORD}…", so a cassette recorded there misses
  // on a machine without that variable, and the other way round.
  it("an env secret whose value is an ordinary word leaves the identity alone", () => {
    const req = {
      role: "builder",
      model: "m",
      prompt: "Set up postgres with a password for the test database",
    };
    const bare = invocationIdentity(req, { secrets: { env: {} } });
    for (const env of [{ POSTGRES_PASSWORD: "postgres" }, { DB_PASSWORD: "password" }]) {
      expect(invocationIdentity(req, { secrets: { env } }), JSON.stringify(env)).toBe(bare);
    }
  });

  it("a real key in the environment leaves the identity alone (rotating it changes nothing)", () => {
    const cell = ENV_CELLS.find((c) => c.shape === "openai-project-key" && c.form === "raw")!;
    const other = corpusCells("rotated").find((c) => c.id === cell.id)!;
    const req = (key: string) => ({ role: "builder", model: "m", prompt: `call with ${key}` });
    const a = invocationIdentity(req(cell.text), {
      secrets: { env: { OPENAI_API_KEY: cell.text } },
    });
    const b = invocationIdentity(req(other.text), {
      secrets: { env: { OPENAI_API_KEY: other.text } },
    });
    expect(a).toBe(b);
  });
});

// ---- planting into every target at once ----------------------------------------------

type Situation = "env" | "pasted";

/** Where secrets must not go: how to open a fresh store there, and read every byte it holds. */
interface Target {
  name: string;
  open(situation: Situation): Store;
  bytes(situation: Situation): Promise<Buffer>;
}

const redisServers: Partial<Record<Situation, RedisServer>> = {};
const folder = (kind: string, situation: Situation) => join(dir, `${kind}-${situation}`);

const TARGETS: Target[] = [
  {
    name: "cassette files",
    open: (s) =>
      cassetteStore(join(folder("cassette", s), "recordings.yaml"), {
        parseCache: false,
        write: "on-close",
      }),
    bytes: async (s) => folderBytes(folder("cassette", s)),
  },
  {
    name: "the SQLite file",
    open: (s) => openStore(`sqlite://${join(folder("sqlite", s), "cache.sqlite")}`),
    bytes: async (s) => folderBytes(folder("sqlite", s)),
  },
  ...(skipRedis
    ? []
    : [
        {
          name: "Redis",
          open: (s: Situation) => openStore(redisServers[s]!.url),
          bytes: (s: Situation) => redisBytes(redisServers[s]!.url),
        },
      ]),
];

/**
 * Plant both situations into every target, side by side (env first, with
 * the secrets in process.env while the recorders are created and the stores
 * write). Bytes are read with each store still open (a SQLite WAL) and again
 * after it closed (a cassette written on close, a checkpointed database).
 */
beforeAll(async () => {
  if (!skipRedis) {
    redisServers.env = await startRedisServer();
    redisServers.pasted = await startRedisServer();
  }
  const collected = new Map<string, { env: Buffer[]; pasted: Buffer[]; entries: number }>(
    TARGETS.map((t) => [t.name, { env: [], pasted: [], entries: 0 }]),
  );
  const phase = (situation: Situation, cells: readonly Cell[]) =>
    Promise.all(
      TARGETS.map(async (t) => {
        const mine = collected.get(t.name)!;
        const store = t.open(situation);
        mine.entries += await plantAll(store, cells);
        mine[situation].push(await t.bytes(situation));
        await store.close();
        mine[situation].push(await t.bytes(situation));
      }),
    );
  withEnv(ENV_CELLS);
  try {
    await phase("env", ENV_CELLS);
  } finally {
    vi.unstubAllEnvs();
  }
  await phase("pasted", PASTED_CELLS);
  for (const [name, c] of collected) {
    results.set(name, findings(Buffer.concat(c.env), Buffer.concat(c.pasted), c.entries));
  }
}, 240_000);

afterAll(async () => {
  for (const server of Object.values(redisServers)) await server.stop();
});

describe("cassette files", () => {
  secretTests("cassette files");
});

describe("the SQLite file (database, WAL and shared memory)", () => {
  secretTests("the SQLite file");
});

describe.skipIf(skipRedis)("Redis (every key and value, read over a raw connection)", () => {
  secretTests("Redis");
});
