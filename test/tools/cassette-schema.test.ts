/** A cassette holding tool calls validates against docs/cassette-v1.schema.json and loads back. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { parse } from "yaml";
import { cassetteStore } from "../../src/cassette/store.js";
import { createRecorder, wrapTool } from "../../src/index.js";
import { validate } from "../cassette/json-schema.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-toolschema-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const schema = JSON.parse(
  readFileSync(
    fileURLToPath(new URL("../../docs/cassette-v1.schema.json", import.meta.url)),
    "utf8",
  ),
) as Record<string, unknown>;

it("model and tool entries in one cassette match the schema", async () => {
  const path = join(dir, "mixed.yaml");
  const rec = createRecorder({ store: cassetteStore(path), mode: "record" });
  await rec.call({ role: "planner", prompt: "plan" }, async () => ({ plan: "add" }));
  await wrapTool(async ({ a, b }: { a: number; b: number }) => ({ sum: a + b }), {
    name: "add",
    recorder: rec,
  })({ a: 1, b: 2 });
  await rec.store.close();
  const doc = parse(readFileSync(path, "utf8"), { version: "1.2", schema: "core", merge: false });
  expect(validate(schema, doc)).toEqual([]);
  const kinds = (doc as { entries: Array<{ manifest: { kind?: string } }> }).entries.map(
    (e) => e.manifest.kind ?? "model",
  );
  expect(kinds.sort()).toEqual(["model", "tool"]);
  // A tool manifest with a field too many is refused by the schema.
  const broken = structuredClone(doc) as { entries: Array<{ manifest: Record<string, unknown> }> };
  const tool = broken.entries.find((e) => e.manifest.kind === "tool");
  if (tool === undefined) throw new Error("no tool entry");
  tool.manifest.extra = 1;
  expect(validate(schema, broken).length).toBeGreaterThan(0);
});
