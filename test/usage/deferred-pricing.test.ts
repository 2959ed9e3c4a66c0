/**
 * A call's dollars are priced when the accounts are read, not when it is
 * answered: the price table (~480 kB of JavaScript) would otherwise load
 * before a replay's first answer. The sums must be what pricing every call
 * at once gives, in call order, to the nano-dollar.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { createRecorder } from "../../src/index.js";
import { costOf } from "../../src/usage/index.js";
import { tempDir } from "../helpers/tmp.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

const usageOf = (i: number) => ({ prompt_tokens: 1000 + i * 37, completion_tokens: 200 + i * 11 });
/** A chat completion as the openai SDK returns it (the shape usage is read from). */
const completion = (
  model: string,
  usage: { prompt_tokens: number; completion_tokens: number },
) => ({
  object: "chat.completion",
  model,
  choices: [],
  usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
});

/** A module specifier for one of the project's sources, for a child script's `import()`. */
const src = (path: string) => JSON.stringify(pathToFileURL(join(root, path)).href);

/**
 * Run `body` as a fresh Node process (the price table loads once per
 * process), after a preamble that gives it `loaded()` (whether the table is
 * loaded yet) and `createRecorder`; what it prints is parsed as JSON.
 */
function inChild<T>(label: string, body: string): T {
  const script = join(tempDir(label), "child.mjs");
  writeFileSync(
    script,
    `import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const loaded = () => Object.keys(require.cache).some((p) => p.includes("genai-prices"));
const { createRecorder } = await import(${src("src/index.ts")});
${body}`,
  );
  return JSON.parse(
    execFileSync(process.execPath, ["--import", "tsx", script], { cwd: root, encoding: "utf8" }),
  ) as T;
}

/** A request and an answer with usage, for the child scripts. */
const REQUEST_AND_ANSWER = `const req = { role: "r", model: "gpt-4o", prompt: "p" };
const answer = { object: "chat.completion", model: "gpt-4o", choices: [], usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } };
`;

describe("pricing a call when the accounts are read", () => {
  it("a replayed answer does not load the price table; reading the stats does", () => {
    const out = inChild<{ afterCalls: boolean; afterStats: boolean; usd: number }>(
      "deferred-pricing",
      `${REQUEST_AND_ANSWER}const recorder = createRecorder({ store: "memory://", mode: "auto" });
await recorder.call(req, async () => answer);
await recorder.call(req, async () => answer);
const afterCalls = loaded();
const usd = recorder.stats.saved.usd;
console.log(JSON.stringify({ afterCalls, afterStats: loaded(), usd }));
`,
    );
    expect(out).toMatchObject({ afterCalls: false, afterStats: true });
    expect(out.usd).toBeGreaterThan(0);
  });

  it("a run ending with nobody listening to its event does not load the table; a listener gets the dollars", () => {
    const out = inChild<{ afterQuietRun: boolean; eventUsd: number; quietUsd: number }>(
      "deferred-pricing-run",
      `${REQUEST_AND_ANSWER}const quiet = createRecorder({ store: "memory://", mode: "auto" });
await quiet.run(async () => { await quiet.call(req, async () => answer); await quiet.call(req, async () => answer); });
const afterQuietRun = loaded();
const heard = createRecorder({ store: "memory://", mode: "auto" });
let eventUsd;
heard.on("run", (e) => { eventUsd = e.summary.spent.usd; });
await heard.run(async () => { await heard.call(req, async () => answer); await heard.call(req, async () => answer); });
console.log(JSON.stringify({ afterQuietRun, eventUsd, quietUsd: quiet.stats.spent.usd }));
`,
    );
    expect(out.afterQuietRun).toBe(false);
    // Two occurrences of one request in a run: two paid calls, priced at the run's end (heard) or when read (quiet).
    expect(out.eventUsd).toBeGreaterThan(0);
    expect(out.quietUsd).toBe(out.eventUsd);
  });

  it("keeps up to MAX_UNPRICED_CALLS calls unpriced; the next one loads the table, sums unchanged", () => {
    const out = inChild<{
      cap: number;
      atCap: boolean;
      pastCap: boolean;
      usd: number;
      expected: number;
    }>(
      "deferred-pricing-cap",
      `const { MAX_UNPRICED_CALLS } = await import(${src("src/usage/summary.ts")});
const recorder = createRecorder({ store: "memory://", mode: "auto" });
const answer = (i) => ({ object: "chat.completion", model: "gpt-4o", choices: [], usage: { prompt_tokens: 1000 + i, completion_tokens: 7, total_tokens: 1007 + i } });
// Distinct entries, each recorded once (misses are priced like hits: spent).
let i = 0;
for (; i < MAX_UNPRICED_CALLS; i++) await recorder.call({ role: "r", model: "gpt-4o", prompt: "p" + i }, async () => answer(i));
const atCap = loaded();
await recorder.call({ role: "r", model: "gpt-4o", prompt: "p" + i }, async () => answer(i));
const pastCap = loaded();
let expected = 0;
const { costOf } = await import(${src("src/usage/index.ts")});
for (let k = 0; k <= i; k++) expected = Math.round((expected + costOf("gpt-4o", { shape: "openai.chat", inputTokens: 1000 + k, outputTokens: 7 }).usd) * 1e9) / 1e9;
console.log(JSON.stringify({ cap: MAX_UNPRICED_CALLS, atCap, pastCap, usd: recorder.stats.spent.usd, expected }));
`,
    );
    expect(out.cap).toBeGreaterThanOrEqual(1000); // a 1,000-call replay never waits for the table
    expect(out).toMatchObject({ atCap: false, pastCap: true });
    expect(out.usd).toBeGreaterThan(0);
    expect(out.usd).toBe(out.expected);
  });

  it("gives the sums of pricing each call at once, in every group, listeners or not", async () => {
    const models = ["gpt-4o", "gpt-4o-mini", "no-such-model-anywhere", "claude-sonnet-4-5"];
    const run = async (listen: "never" | "always" | "midway") => {
      const recorder = createRecorder({ store: "memory://", mode: "auto" });
      for (let i = 0; i < 40; i++) {
        if (listen === "always" || (listen === "midway" && i === 17)) {
          recorder.on("call", () => {});
        }
        const req = {
          role: `r${(i % 20) % 3}`,
          model: models[i % models.length]!,
          prompt: `p${i % 20}`,
        };
        await recorder.run(
          async () => {
            await recorder.call(req, async () => completion(req.model, usageOf(i)));
          },
          { runId: `run-${i % 5}` },
        );
      }
      // Everything but the model times (measured, so never equal twice).
      return JSON.parse(
        JSON.stringify(recorder.stats, (k, v) => (k === "ms" || k === "savedMs" ? undefined : v)),
      ) as Record<string, unknown>;
    };
    const eager = await run("always");
    expect(await run("never")).toEqual(eager);
    expect(await run("midway")).toEqual(eager);
    // And the dollars are really there: spent on the 20 first calls, saved on the repeats.
    let spent = 0;
    for (let i = 0; i < 20; i++) {
      const cost = costOf(models[i % models.length]!, {
        shape: "openai.chat",
        inputTokens: usageOf(i).prompt_tokens,
        outputTokens: usageOf(i).completion_tokens,
      });
      if (cost !== undefined) spent = Math.round((spent + cost.usd) * 1e9) / 1e9;
    }
    expect((eager.spent as { usd: number }).usd).toBe(spent);
    expect((eager.spent as { unpriced: number }).unpriced).toBe(5);
  });
});
