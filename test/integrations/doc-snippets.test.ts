/**
 * The copy-paste snippets of docs/integrations.md run as they are: each is
 * extracted, its `invocache` imports pointed at the sources, and run twice
 * in a fresh directory with the provider on loopback (`OPENAI_BASE_URL`):
 * recorded, then replayed with the provider stopped, printing the same.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { startFakeProvider } from "../fake-provider/index.js";
import { startScriptedResponses } from "./scripted-responses.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const doc = readFileSync(join(root, "docs/integrations.md"), "utf8");
// Under the repository's node_modules, so the snippet's bare imports resolve.
const snippetDir = join(root, "node_modules/.cache/invocache-doc-snippets");

/** The ```ts block right after `<!-- snippet: name -->`. */
function snippet(name: string): string {
  const m = new RegExp(`<!-- snippet: ${name} -->\\n\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(doc);
  if (m?.[1] === undefined) throw new Error(`docs/integrations.md has no snippet "${name}"`);
  return m[1];
}

function runnable(source: string): string {
  const src = (path: string) => JSON.stringify(pathToFileURL(join(root, path)).href);
  return source
    .replace(/from "invocache"/g, `from ${src("src/index.ts")}`)
    .replace(
      /from "invocache\/([a-z-]+)"/g,
      (_m, sub: string) => `from ${src(`src/integrations/${sub}.ts`)}`,
    );
}

function run(file: string, cwd: string, env: Record<string, string>) {
  const { INVOCACHE_MODE: _m, ...base } = process.env;
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      // tsx by path: the cwd is a fresh directory without node_modules.
      ["--import", pathToFileURL(join(root, "node_modules/tsx/dist/loader.mjs")).href, file],
      { cwd, env: { ...base, ...env }, timeout: 100_000 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : 1, stdout, stderr });
      },
    );
  });
}

const SNIPPETS = {
  langchain: { calls: 2, server: startFakeProvider },
  langgraph: { calls: 1, server: startFakeProvider },
  "openai-agents": { calls: 3, server: startScriptedResponses },
} as const;

describe("docs/integrations.md snippets", () => {
  for (const [name, { calls, server }] of Object.entries(SNIPPETS)) {
    it(`${name}: records, then replays with the provider stopped`, async () => {
      mkdirSync(snippetDir, { recursive: true });
      const file = join(snippetDir, `${name}.mts`); // .mts: ESM, top-level await
      writeFileSync(file, runnable(snippet(name)));
      const cwd = mkdtempSync(join(tmpdir(), `invocache-snippet-${name}-`));
      const provider = await server();
      try {
        const env = {
          OPENAI_BASE_URL: `${provider.url}/v1`,
          OPENAI_API_KEY: "sk-doc-snippet-key",
          OPENAI_AGENTS_DISABLE_TRACING: "1",
        };
        const first = await run(file, cwd, { ...env, INVOCACHE_MODE: "auto" });
        expect(first.code, first.stderr).toBe(0);
        expect(provider.calls).toBe(calls);
        expect(first.stdout).toMatch(/reply #\d/);
        await provider.close();
        const second = await run(file, cwd, { ...env, INVOCACHE_MODE: "replay" });
        expect(second.code, second.stderr).toBe(0);
        expect(second.stdout).toBe(first.stdout);
        expect(provider.calls).toBe(calls);
      } finally {
        await provider.close();
        rmSync(cwd, { recursive: true, force: true });
      }
    }, 220_000); // two fresh processes importing a framework each
  }
});
