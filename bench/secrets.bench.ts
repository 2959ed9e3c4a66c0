/**
 * Secret redaction: the cost per store write of the scanner every entry goes
 * through (env values in every spelling, gitleaks-derived key shapes, base64-
 * and percent-encoded shapes), beside the scanner it replaced (hand-kept
 * shapes, raw only: bench/support/legacy-secrets) and beside secretlint's
 * recommended preset used as a library (asynchronous, one call per write).
 */
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import type { JsonValue } from "../src/index.js";
import { createSecretScanner } from "../src/secrets/index.js";
import { createSecretScanner as legacyScanner } from "./support/legacy-secrets/redact.js";
import { type SampleOptions, sampleInterleaved } from "./support/measure.js";
import { type BenchRow, compare } from "./support/row.js";
import type { BenchContext } from "./support/run-context.js";

const OPTS: SampleOptions = { rounds: 15, warmup: 3, minSampleMs: 30 };

const env = {
  OPENAI_API_KEY: `sk-proj-${"Zq9Xv8Wu7Ts6Rq5Po4Nm3Lk2Jh1".repeat(3)}`,
  GITHUB_TOKEN: `ghp_${"a1B2c3D4e5F6g7H8i9J0".repeat(2).slice(0, 36)}`,
  DATABASE_URL: "postgres://app:Xy7Qw2Lp9Rt4Zm8Kc3Vb@db.internal:5432/app",
  HOME: "/home/u",
};

/** A typical entry: a manifest with an 8 KiB prompt and params, a chat response with a tool call. */
function entry(): JsonValue {
  const prose =
    "Summarize the deployment log below. The service reads its settings from the environment, retries on 429 and logs each request id. ";
  const prompt = `${prose.repeat(60)} Build 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345 passed.`;
  return {
    v: 1,
    id: "0".repeat(64),
    manifest: {
      role: "summarizer",
      model: "gpt-5",
      prompt,
      params: { temperature: 0, max_tokens: 800, tools: [{ name: "lookup", description: prose }] },
    },
    response: {
      id: "chatcmpl-1",
      choices: [
        {
          message: {
            role: "assistant",
            content: prose.repeat(10),
            tool_calls: [{ function: { name: "lookup", arguments: JSON.stringify({ q: prose }) } }],
          },
        },
      ],
      usage: { prompt_tokens: 2100, completion_tokens: 300 },
    },
  };
}

export default async function secretsBench(ctx: BenchContext): Promise<BenchRow[]> {
  const value = entry();
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text);
  ctx.log(`redaction of one ${bytes}-byte entry per write`);
  // Each write prepares its scanner (it reads the environment), as the cassette store does.
  const ours = () => createSecretScanner({ env }).redact(value);
  const legacy = () => legacyScanner({ env }).redact(value);
  const secretlint = () =>
    lintSource({
      source: { content: text, filePath: "/entry.json", ext: ".json", contentType: "text" },
      options: {
        config: {
          rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }],
        },
      },
    });
  const [a, b, c] = await sampleInterleaved(
    [
      { name: "invocache", run: ours },
      { name: "legacy", run: legacy },
      { name: "secretlint", run: secretlint },
    ],
    OPTS,
  );
  const us = (ns: number) => ns / 1e3;
  const note = `${bytes}-byte entry (8 KiB prompt, chat response with a tool call), 3 env secrets; median of ${OPTS.rounds} interleaved samples`;
  return [
    compare(
      {
        suite: "secrets",
        measurement: "redaction per store write",
        unit: "µs/write",
        better: "lower",
        baselineName: "the previous scanner (hand-kept shapes, raw spelling only)",
        target: 4,
        note,
      },
      us(a!.medianNs),
      us(b!.medianNs),
      { invocache: a!.spread, baseline: b!.spread },
    ),
    compare(
      {
        suite: "secrets",
        measurement: "redaction per store write",
        unit: "µs/write",
        better: "lower",
        baselineName: "secretlint recommended preset as a library (finds, does not redact)",
        target: 4,
        note,
      },
      us(a!.medianNs),
      us(c!.medianNs),
      { invocache: a!.spread, baseline: c!.spread },
    ),
  ];
}
