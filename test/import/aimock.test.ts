/**
 * aimock (`@copilotkit/aimock`, LLMock in record mode in front of the fake
 * provider) records real OpenAI and Anthropic SDK calls as fixture files.
 * A fixture keeps a match rule (the last user message, the model) and hashes
 * of the system prompt and tools, not the request that was sent, so no
 * identity createFetch would give can be rebuilt from it: every fixture is
 * reported as skipped with that reason, and nothing is written.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { LLMock } from "@copilotkit/aimock";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeProvider } from "../fake-provider/index.js";
import { importSandbox } from "./helpers.js";

let sandbox: ReturnType<typeof importSandbox>;
afterEach(async () => sandbox.cleanup());

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("import from aimock fixture files", () => {
  it("reads a file aimock recorded and skips every fixture, saying why, writing nothing", async () => {
    sandbox = importSandbox("aimock");
    const provider = await startFakeProvider();
    const fixturePath = join(sandbox.dir, "fixtures");
    const mock = new LLMock({
      port: 0,
      logLevel: "silent",
      record: { providers: { openai: provider.url, anthropic: provider.url }, fixturePath },
    });
    const url = await mock.start();
    try {
      const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${url}/v1`, maxRetries: 0 });
      const chat = await openai.chat.completions.create({
        model: "gpt-fake",
        messages: [{ role: "user", content: "Plan the release" }],
      });
      expect(chat.choices[0]?.message.content).toContain("Plan the release");
      const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: url, maxRetries: 0 });
      await anthropic.messages.create({
        model: "claude-fake",
        max_tokens: 256,
        messages: [{ role: "user", content: "Review src/a.ts" }],
      });
    } finally {
      await mock.stop();
      await provider.close();
    }
    expect(provider.calls).toBe(2);
    const files = filesUnder(fixturePath).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThan(0);
    // What aimock keeps: a match rule, not the request.
    const fixture = JSON.parse(readFileSync(String(files[0]), "utf8"));
    expect(fixture.fixtures[0].match).toBeDefined();
    expect(fixture.fixtures[0].match.messages).toBeUndefined();

    const report = await sandbox.importInto(files);
    expect(report.counts).toMatchObject({ imported: 0, exists: 0, failed: 0 });
    expect(report.counts.skipped).toBe(files.length);
    for (const item of report.items) {
      expect(item.outcome).toBe("skipped");
      expect(item.reason).toMatch(/keeps a match rule .* not the request that was sent/);
    }
    expect(existsSync(sandbox.cassette)).toBe(false);
  });
});
