/** wrapTool: any async function tool, recorded and replayed by a real recorder and store. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/store.js";
import {
  createRecorder,
  ReplayMissError,
  ToolCallError,
  ToolResultError,
  wrapTool,
} from "../../src/index.js";
import { withInvocation } from "../../src/invocation/index.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-wraptool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `t${++n}.yaml`);

describe("wrapTool", () => {
  it("records the first call and replays it with zero executions, same signature", async () => {
    const path = file();
    let executions = 0;
    const search = async ({ q }: { q: string }) => {
      executions++;
      return { hits: [`${q} #${executions}`] };
    };
    const rec = createRecorder({ store: cassetteStore(path), mode: "record" });
    const wrapped = wrapTool(search, { recorder: rec, readOnlyHint: true });
    expect(wrapped.name).toBe("search");
    expect(await wrapped({ q: "retry" })).toEqual({ hits: ["retry #1"] });
    await rec.store.close();

    const replay = createRecorder({ store: cassetteStore(path), mode: "replay" });
    const again = wrapTool(search, { recorder: replay });
    expect(await again({ q: "retry" })).toEqual({ hits: ["retry #1"] });
    expect(executions).toBe(1);
    const miss = await again({ q: "other" }).catch((e) => e);
    expect(miss).toBeInstanceOf(ReplayMissError);
    expect(miss.message).toContain('tool "search"');
    expect(miss.message).toContain('$.args.arguments[0].q: "retry" → "other"');
    await replay.store.close();
  });

  it("role, task and attempt of withInvocation are part of the identity", async () => {
    const rec = createRecorder({ store: "memory://", mode: "auto" });
    let executions = 0;
    const t = wrapTool(async () => ++executions, {
      name: "tick",
      recorder: rec,
      idempotentHint: true,
    });
    await withInvocation({ role: "builder", attempt: 0 }, () => t());
    await withInvocation({ role: "builder", attempt: 0 }, () => t());
    expect(executions).toBe(1);
    await withInvocation({ role: "builder", attempt: 1 }, () => t());
    await withInvocation({ role: "reviewer", attempt: 0 }, () => t());
    expect(executions).toBe(3);
    expect(rec.last?.manifest).toMatchObject({ kind: "tool", role: "reviewer", name: "tick" });
    await rec.close();
  });

  it("attempt lineage and verdicts work for tool calls as for model calls", async () => {
    const rec = createRecorder({ store: "memory://", mode: "record" });
    const check = wrapTool(async ({ file }: { file: string }) => ({ ok: file.length > 3 }), {
      name: "lint",
      recorder: rec,
    });
    await withInvocation({ role: "builder", attempt: 0 }, () => check({ file: "a.ts" }));
    const first = rec.last?.id as string;
    await rec.verdict(first, "rejected", { reason: "lint failed" });
    await withInvocation({ role: "builder", attempt: 1 }, () => check({ file: "a.ts" }));
    const second = rec.last?.id as string;
    expect(second).not.toBe(first);
    const entry = (await rec.store.get(`default:e:${second}:0`)) as { meta: { parent?: string } };
    expect(entry.meta.parent).toBe(first);
    const rejected = (await rec.store.get(`default:e:${first}:0`)) as {
      meta: { verdict?: { verdict: string } };
    };
    expect(rejected.meta.verdict?.verdict).toBe("rejected");
    await rec.close();
  });

  it("a tool that throws: ToolCallError naming the tool, nothing stored, cause kept", async () => {
    const rec = createRecorder({ store: "memory://", mode: "record" });
    const boom = new Error("disk full");
    const t = wrapTool(
      async () => {
        throw boom;
      },
      { name: "write_file", recorder: rec },
    );
    const error = await t().catch((e) => e);
    expect(error).toBeInstanceOf(ToolCallError);
    expect(error.message).toContain('tool "write_file" failed (disk full); nothing was recorded');
    expect(error.cause).toBe(boom);
    expect(rec.stats.recorded).toBe(0);
    await rec.close();
  });

  it("a non-JSON result: ToolResultError naming the tool and the path", async () => {
    const rec = createRecorder({ store: "memory://", mode: "record" });
    const t = wrapTool(async () => ({ when: new Map([[1, 2]]) }), { name: "clock", recorder: rec });
    const error = await t().catch((e) => e);
    expect(error).toBeInstanceOf(ToolResultError);
    expect(error.message).toContain('tool "clock" returned a result that is not JSON');
    expect(error.message).toContain("result.when");
    expect(rec.stats.recorded).toBe(0);
    await rec.close();
  });

  it("an aborted call stores nothing", async () => {
    const rec = createRecorder({ store: "memory://", mode: "record" });
    const ac = new AbortController();
    const t = wrapTool(
      async (_args: { x: number }, signal: AbortSignal) => {
        await new Promise((r) => setTimeout(r, 30));
        return signal.aborted ? "late" : "ok";
      },
      { name: "slow", recorder: rec, signal: (_a, s) => s },
    );
    const p = t({ x: 1 }, ac.signal);
    ac.abort();
    const error = await p.catch((e) => e);
    expect(error).toBeInstanceOf(ToolCallError);
    expect(error.message).toContain('tool "slow" was aborted');
    expect(rec.stats.recorded).toBe(0);
    await rec.close();
  });

  it("secrets in arguments and results are redacted before the write", async () => {
    const path = file();
    const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    const rec = createRecorder({ store: cassetteStore(path), mode: "record" });
    const t = wrapTool(async ({ token }: { token: string }) => ({ echoed: token }), {
      name: "login",
      recorder: rec,
    });
    expect(await t({ token: key })).toEqual({ echoed: key });
    await rec.store.close();
    const text = readFileSync(path, "utf8");
    expect(text).toContain("login");
    expect(text).not.toContain(key);
  });

  it("mixed modes: { model: record, tool: replay } re-records the model against recorded tools; verify reports without throwing", async () => {
    const path = file();
    let toolRuns = 0;
    let modelRuns = 0;
    const step = async (rec: ReturnType<typeof createRecorder>) => {
      const lookup = wrapTool(async ({ k }: { k: string }) => ({ v: `${k}${++toolRuns}` }), {
        name: "lookup",
        recorder: rec,
      });
      const found = await lookup({ k: "a" });
      const answer = await rec.call({ role: "writer", prompt: `use ${found.v}` }, async () => ({
        text: `model ${++modelRuns}`,
      }));
      return { found, answer };
    };
    const all = createRecorder({ store: cassetteStore(path), mode: "record" });
    await step(all);
    await all.store.close();
    expect([toolRuns, modelRuns]).toEqual([1, 1]);

    const reverse = createRecorder({
      store: cassetteStore(path),
      mode: { model: "record", tool: "replay" },
    });
    const out = await step(reverse);
    expect(out.found).toEqual({ v: "a1" }); // replayed: the tool did not run
    expect(out.answer).toEqual({ text: "model 2" }); // recorded again
    expect([toolRuns, modelRuns]).toEqual([1, 2]);
    await reverse.store.close();

    // Tools in verify while the model is not strictly replayed: an event, not an error.
    const verify = createRecorder({
      store: cassetteStore(path),
      mode: { model: "auto", tool: "verify" },
    });
    const events: Array<{ fields?: unknown }> = [];
    verify.on("divergence", (e) => events.push(e));
    const again = await step(verify);
    expect(again.found).toEqual({ v: "a2" }); // live
    expect(events).toHaveLength(1);
    expect(events[0]?.fields).toEqual([{ path: "$.v", expected: "a1", actual: "a2" }]);
    await verify.store.close();
  });

  it("bad options are TypeErrors saying what to pass", () => {
    const rec = createRecorder({ store: "memory://", mode: "record" });
    expect(() => wrapTool(async () => 1, { recorder: rec })).toThrow(/pass \{ name: "search" \}/);
    expect(() => wrapTool(async () => 1, {} as never)).toThrow(/pass \{ recorder/);
    expect(() =>
      wrapTool(
        async function f() {
          return 1;
        },
        { recorder: rec, readOnlyHint: "yes" as never },
      ),
    ).toThrow(/readOnlyHint must be true or false/);
  });
});
