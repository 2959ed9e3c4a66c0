/**
 * The miss log: a replay miss is kept beside the store, in a folder git
 * ignores, bounded in size, and the viewer's Misses page shows it beside its
 * nearest recording with explain's field diff.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { createRecorder, ReplayMissError } from "../../src/recorder/index.js";
import {
  appendMiss,
  logMisses,
  MISS_LOG_LIMIT,
  missLogPath,
  readMissLog,
  startViewer,
} from "../../src/viewer/index.js";
import { modelOf } from "../helpers/model-manifest.js";
import { tempDir } from "../helpers/tmp.js";
import { get } from "./fixtures.js";

describe("miss log", () => {
  it("a replay miss is logged by default, under the project's git-ignored .invocache/; the error says where; the viewer of the cassettes shows it", async () => {
    const project = tempDir("misses-default");
    const cassette = join(project, "cassettes", "plan.yaml");
    const rec = createRecorder({
      store: cassetteStore(cassette),
      mode: "auto",
      projectRoot: project,
    });
    await rec.call({ role: "planner", model: "m1", prompt: "plan it" }, async () => "ok");
    await rec.close();
    await rec.store.close();

    const store = cassetteStore(cassette);
    const replay = createRecorder({ store, mode: "replay", projectRoot: project });
    const miss = (await replay
      .call({ role: "planner", model: "m1", prompt: "plan it again" }, async () => "x")
      .catch((e: unknown) => e)) as ReplayMissError;
    expect(miss).toBeInstanceOf(ReplayMissError);
    await replay.close();
    await store.close();
    const path = join(project, ".invocache", ".invocache-misses", "misses.jsonl");
    expect(miss.message).toContain(`Logged to ${path}: \`invocache view\` lists it under Misses.`);
    const logged = await readMissLog(path);
    expect(logged.map((m) => m.id)).toEqual([miss.id]);
    expect(readFileSync(join(project, ".invocache", ".gitignore"), "utf8")).toMatch(/^\*$/m);

    const viewer = await startViewer({ cassette: join(project, "cassettes") }, { refreshMs: 0 });
    const cwd = process.cwd();
    try {
      const host = `127.0.0.1:${viewer.port}`;
      const first = await get(viewer.port, `/?token=${viewer.token}`, { host });
      const cookie = String(first.headers["set-cookie"]).split(";")[0]!;
      const page = await get(viewer.port, "/misses", { host, cookie });
      expect(page.status).toBe(200);
      expect(page.body).toContain(miss.id.slice(0, 12));
    } finally {
      await viewer.close();
      expect(process.cwd()).toBe(cwd);
    }
  });

  it("keeps a replay miss beside the store, git-ignored, and the viewer shows its nearest recording", async () => {
    const dir = tempDir("misses");
    const store = `sqlite://${join(dir, "cache.sqlite")}`;
    const rec = createRecorder({ store, namespace: "t", mode: "record" });
    await rec.call({ role: "builder", model: "m1", prompt: "write slugify" }, async () => "ok", {
      attempt: 0,
    });
    // A tool call of the same role: never a "nearest recording" of a model call's miss.
    const tool = (draft: string) => ({
      kind: "tool" as const,
      name: "run_tests",
      role: "builder",
      args: { draft },
    });
    const idempotent = { tool: { idempotentHint: true } };
    await rec.call(tool("v1"), async () => ({ passed: 1 }), idempotent);
    await rec.close();

    const replay = createRecorder({ store, namespace: "t", mode: "replay" });
    const stop = logMisses(replay);
    const miss = await replay
      .call({ role: "builder", model: "m1", prompt: "write slugify with tests" }, async () => "x", {
        attempt: 0,
      })
      .catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(ReplayMissError);
    const toolMiss = await replay
      .call(tool("v2"), async () => ({ passed: 0 }), idempotent)
      .catch((e: unknown) => e);
    expect(toolMiss).toBeInstanceOf(ReplayMissError);
    stop();
    await replay.close();

    const path = missLogPath({ store });
    expect(path).toBe(join(dir, ".invocache-misses", "misses.jsonl"));
    await expect.poll(async () => (await readMissLog(path)).length).toBe(2);
    const logged = (await readMissLog(path)).find((m) => m.id === (miss as ReplayMissError).id);
    expect(logged!.id).toBe((miss as ReplayMissError).id);
    expect(modelOf(logged!.manifest).prompt).toBe("write slugify with tests");
    expect(readFileSync(join(dir, ".invocache-misses", ".gitignore"), "utf8")).toBe("*\n");

    const viewer = await startViewer({ store });
    try {
      const host = `127.0.0.1:${viewer.port}`;
      const first = await get(viewer.port, `/?token=${viewer.token}`, { host });
      const cookie = String(first.headers["set-cookie"]).split(";")[0]!;
      const page = await get(viewer.port, "/misses", { host, cookie });
      expect(page.status).toBe(200);
      expect(page.body).toContain(logged!.id.slice(0, 12));
      expect(page.body).toContain("Nearest:");
      expect(page.body).toContain("prompt: 1 change");
      expect(page.body).toContain("<ins> with tests</ins>");
      // The tool miss is compared with the recorded tool call path by path, as explain prints it.
      expect(page.body).toContain("tool run_tests · attempt 0");
      expect(page.body).toContain(
        '<span class="f">≠ args</span>args.draft: &quot;v1&quot; → &quot;v2&quot;',
      );
      expect(page.body).toContain("INVOCACHE_MODE=record");
    } finally {
      await viewer.close();
    }
  });

  it("stays bounded and survives a torn last line", async () => {
    const dir = tempDir("misses");
    const path = join(dir, ".invocache-misses", "misses.jsonl");
    for (let i = 0; i < 2 * MISS_LOG_LIMIT + 5; i++) {
      await appendMiss(path, {
        at: new Date(i).toISOString(),
        id: `${i}`,
        occurrence: 0,
        key: `k${i}`,
        mode: "replay",
        store: "memory://",
      });
    }
    const lines = readFileSync(path, "utf8")
      .split("\n")
      .filter((l) => l !== "");
    expect(lines.length).toBeLessThanOrEqual(2 * MISS_LOG_LIMIT);
    appendFileSync(path, '{"at":"torn');
    const misses = await readMissLog(path);
    expect(misses).toHaveLength(MISS_LOG_LIMIT);
    expect(misses[0]!.id).toBe(String(2 * MISS_LOG_LIMIT + 4));
    expect(existsSync(join(dir, ".invocache-misses", ".gitignore"))).toBe(true);
  });
});
