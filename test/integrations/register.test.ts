/**
 * `node --import invocache/register app.mjs` against the built package: an
 * app that knows nothing of invocache (its OpenAI client has no fetch
 * option, plus a plain node:http call) records into the cassette
 * INVOCACHE_STORE names, then replays with the provider stopped.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, it } from "vitest";
import { startFakeProvider } from "../fake-provider/index.js";
import { builtProject, ensureBuilt } from "../helpers/built-project.js";

beforeAll(ensureBuilt, 300_000);

const KEY = `sk-live-${Math.random().toString(36).slice(2)}-do-not-store`;

const APP = `
import http from "node:http";
import OpenAI from "openai";
const base = process.env.PROVIDER_URL;
const openai = new OpenAI({ apiKey: process.env.OPENAI_API_KEY, baseURL: base + "/v1", maxRetries: 0 });
const chat = await openai.chat.completions.create({ model: "gpt-fake", messages: [{ role: "user", content: "hi" }] });
const plain = await new Promise((resolve, reject) => {
  const req = http.request(base + "/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
    let text = ""; res.on("data", (c) => (text += c)); res.on("end", () => resolve(JSON.parse(text))); res.on("error", reject);
  });
  req.on("error", reject);
  req.end(JSON.stringify({ model: "gpt-fake", messages: [{ role: "user", content: "plain" }] }));
});
console.log(JSON.stringify([chat.choices[0].message.content, plain.choices[0].message.content]));
`;

/** The app in a child node (asynchronously: the fake provider answers from this process). */
async function run(dir: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "invocache/register", "app.mjs"],
    { cwd: dir, encoding: "utf8", env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY, ...env } },
  );
  return stdout.trim();
}

it("records an unmodified app's model calls into INVOCACHE_STORE and replays them offline", async () => {
  const dir = builtProject("register", ["openai"], { "app.mjs": APP });
  const provider = await startFakeProvider();
  const env = { PROVIDER_URL: provider.url, INVOCACHE_STORE: "cassettes/app.yaml" };
  let live: string;
  try {
    live = await run(dir, { ...env, INVOCACHE_MODE: "record" });
    expect(provider.calls).toBe(2);
  } finally {
    await provider.close();
  }
  expect(JSON.parse(live)).toEqual([
    expect.stringMatching(/reply #1/),
    expect.stringMatching(/reply #2/),
  ]);
  const cassette = join(dir, "cassettes", "app.yaml");
  expect(existsSync(cassette)).toBe(true);
  expect(readFileSync(cassette, "utf8")).not.toContain(KEY);

  expect(await run(dir, { ...env, INVOCACHE_MODE: "replay" })).toBe(live);
});
