/** The CLI reads stores that hold tool calls: ls, stats, show and explain. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createRecorder, wrapTool } from "../../src/index.js";
import { BUILD_TIMEOUT, buildCli, cli } from "../cli/helpers.js";

const cwd = mkdtempSync(join(tmpdir(), "invocache-toolcli-"));
const store = `sqlite://${join(cwd, ".invocache", "cache.sqlite")}`;
let ids: string[] = [];

beforeAll(async () => {
  await buildCli();
  const rec = createRecorder({ store, mode: "record", env: {} });
  const search = wrapTool(async ({ q }: { q: string }) => ({ hits: [q] }), {
    name: "search",
    server: "docs",
    recorder: rec,
  });
  await search({ q: "alpha" });
  const a = rec.last?.id as string;
  await search({ q: "beta" });
  const b = rec.last?.id as string;
  await rec.call({ role: "planner", prompt: "plan", model: "m1" }, async () => ({ ok: true }));
  ids = [a, b];
  await rec.close();
}, BUILD_TIMEOUT);
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

it("ls and stats show a tool call's name where a model call shows its model", () => {
  const ls = cli(["ls", "--store", store, "--json"], { cwd });
  expect(ls.status, ls.stderr).toBe(0);
  const models = ls.json<{ entries: Array<{ model: string }> }>().entries.map((e) => e.model);
  expect(models.sort()).toEqual(["m1", "tool docs/search", "tool docs/search"]);
  const stats = cli(["stats", "--store", store], { cwd });
  expect(stats.status, stats.stderr).toBe(0);
  expect(stats.stdout).toMatch(/tool docs\/search\s+2/);
});

it("show prints a tool call's arguments", () => {
  const show = cli(["show", ids[0]!.slice(0, 12), "--store", store], { cwd });
  expect(show.status, show.stderr).toBe(0);
  expect(show.stdout).toMatch(/model\s+tool docs\/search/);
  // wrapTool's default mapping keeps every argument: { arguments: [...] } (issue 29 §3)
  expect(show.stdout).toMatch(/args\n\s+\{\n\s+"arguments": \[\n\s+\{\n\s+"q": "alpha"/);
});

it("explain names the argument that differs between two tool calls", () => {
  const r = cli(["explain", ids[0]!.slice(0, 12), ids[1]!.slice(0, 12), "--store", store], { cwd });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toContain('args.arguments[0].q: "alpha" → "beta"');
});
