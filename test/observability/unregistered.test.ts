/**
 * With OpenTelemetry installed but nothing registered (no SDK, no context
 * manager: every API call would be a no-op), a recorder's calls do not load
 * `@opentelemetry/api` (44 CommonJS files, ~30 ms of a cold start); an SDK
 * registered later is still seen, from the next call on. A child process:
 * the API's global registry and the module cache must start empty.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const src = (path: string) => JSON.stringify(pathToFileURL(join(root, path)).href);

describe("OpenTelemetry installed, nothing registered", () => {
  it("calls do not load the API; an SDK registered later gets spans from the next call", () => {
    const dir = tempDir("otel-unregistered");
    const script = join(dir, "child.mjs");
    writeFileSync(
      script,
      `import { createRequire } from "node:module";
const require = createRequire(${src("package.json")});
const loaded = () => Object.keys(require.cache).some((p) => p.includes("@opentelemetry/api"));
const { createRecorder } = await import(${src("src/index.ts")});
const r = createRecorder({ store: "memory://", env: {} });
const answer = async () => ({ object: "chat.completion", model: "m", choices: [] });
await r.call({ role: "x", model: "m", prompt: "one" }, answer);
await r.call({ role: "x", model: "m", prompt: "one" }, answer);
const afterCalls = loaded();
// An SDK registered now (this loads the API, as the SDK does).
const { trace } = require("@opentelemetry/api");
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base");
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
await r.call({ role: "x", model: "m", prompt: "two" }, answer);
await r.call({ role: "x", model: "m", prompt: "one" }, answer);
const spans = exporter.getFinishedSpans().map((s) => [s.name, s.attributes["invocache.replayed"]]);
console.log(JSON.stringify({ afterCalls, spans }));
`,
    );
    const out = JSON.parse(
      execFileSync(process.execPath, ["--import", "tsx", script], { cwd: root, encoding: "utf8" }),
    ) as { afterCalls: boolean; spans: [string, boolean][] };
    expect(out.afterCalls).toBe(false);
    expect(out.spans).toStrictEqual([
      ["chat m", false],
      ["chat m", true],
    ]);
  });
});
