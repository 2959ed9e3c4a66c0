/**
 * invocache/vitest: per-test cassette names (safe, collision-free), and the
 * withCassette lifecycle, driven in-process with this test's own context.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { readCassette } from "../../src/cassette/index.js";
import { CassetteError, UnusedEntriesError } from "../../src/errors.js";
import { ReplayMissError } from "../../src/index.js";
import {
  cassettePathFor,
  fullTestName,
  namedCassettePath,
  rerecordCommand,
  type WithCassetteOptions,
  withCassette,
} from "../../src/testing/vitest.js";
import { MACHINE, tempDir } from "./helpers.js";

describe("cassette names", () => {
  const root = "/repo";
  const base = "/repo/cassettes";

  it("reads as the test file and test name, with a hash of the exact name", () => {
    const path = cassettePathFor("/repo/test/plan.test.ts", "planner replans after a rejection", {
      root,
    });
    expect(path).toMatch(
      /^\/repo\/cassettes\/test\/plan\/planner-replans-after-a-rejection-[0-9a-f]{10}\.yaml$/,
    );
    expect(
      cassettePathFor("test/plan.test.ts", "planner replans after a rejection", { root }),
    ).toBe(path);
  });

  it("never leaves the cassettes folder, whatever the test or file is called", () => {
    const names = [
      "../../etc/passwd",
      "..",
      ".",
      "/",
      "/etc/passwd",
      "a/../../b",
      "\\..\\..\\win",
      "\u0000nul",
      "C:\\x",
      "~/.ssh/id_rsa",
      "",
    ];
    const files = [
      "/repo/test/x.test.ts",
      "/elsewhere/../../etc/y.test.ts",
      "/repo/../outside.spec.ts",
      "/repo/.hidden/z.ts",
    ];
    for (const file of files) {
      for (const name of names) {
        const path = cassettePathFor(file, name, { root });
        const rel = relative(base, path);
        expect(
          rel.startsWith("..") || resolve(base, rel) !== path,
          `${file} / ${JSON.stringify(name)} → ${path}`,
        ).toBe(false);
        expect(
          rel.split(sep).every((s) => /^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(s)),
          path,
        ).toBe(true);
      }
    }
    expect(cassettePathFor("/elsewhere/a.test.ts", "x", { root })).toMatch(
      /^\/repo\/cassettes\/_external\/a\/x-[0-9a-f]{10}\.yaml$/,
    );
  });

  it("keeps tests whose names slug alike apart, and keeps slugs short", () => {
    const a = cassettePathFor("/repo/t.test.ts", "Fix: the bug!", { root });
    const b = cassettePathFor("/repo/t.test.ts", "fix the bug", { root });
    const c = cassettePathFor("/repo/u.test.ts", "fix the bug", { root });
    expect(new Set([a, b, c]).size).toBe(3);
    expect(a.replace(/-[0-9a-f]{10}\.yaml$/, "")).toBe(b.replace(/-[0-9a-f]{10}\.yaml$/, ""));
    const long = cassettePathFor("/repo/t.test.ts", "word ".repeat(100), { root });
    expect(long.split("/").pop()!.length).toBeLessThanOrEqual(60 + 1 + 10 + 5);
    expect(cassettePathFor("/repo/t.test.ts", "café naïve 日本", { root })).toMatch(
      /\/cafe-naive-[0-9a-f]{10}\.yaml$/,
    );
    expect(cassettePathFor("/repo/t.test.ts", "日本語のテスト", { root })).toMatch(
      /\/test-[0-9a-f]{10}\.yaml$/,
    );
  });

  it("named cassettes stay inside too", () => {
    expect(namedCassettePath("shared/planner", { root })).toBe(
      "/repo/cassettes/shared/planner.yaml",
    );
    expect(() => namedCassettePath("../../etc/passwd", { root })).toThrow(TypeError);
    expect(() => namedCassettePath("a/./b", { root })).toThrow(TypeError);
    expect(() => namedCassettePath("/abs/x.yml", { root })).toThrow(TypeError);
    expect(() => namedCassettePath("C:\\x", { root })).toThrow(TypeError);
    expect(() => namedCassettePath("", { root })).toThrow(TypeError);
  });

  it("distinct names never share a file; safe names keep their committed paths", () => {
    const names = [
      "shared/my planner",
      "shared/my-planner",
      "shared/my_planner",
      "shared/my~20planner",
      "shared/my%20planner",
      "shared/.planner",
      "shared/-planner",
      "shared/planner!",
      "shared/planner?",
      "shared/plänner",
      "shared/pla\u0308nner",
      "shared/\ud800x",
      "shared/\udfffx",
      "shared/planner",
      "shared/planner.yml",
      "shared.planner",
      `shared/${"x".repeat(120)}a`,
      `shared/${"x".repeat(120)}b`,
    ];
    const paths = names.map((n) => namedCassettePath(n, { root }));
    expect(new Set(paths).size).toBe(names.length);
    for (const path of paths) expect(path.startsWith(`${base}/`)).toBe(true);
    expect(namedCassettePath("shared/planner", { root })).toBe(`${base}/shared/planner.yaml`);
    expect(namedCassettePath("shared/planner.yaml", { root })).toBe(`${base}/shared/planner.yaml`);
    expect(namedCassettePath("shared/my planner", { root })).toBe(
      `${base}/shared/my~20planner.yaml`,
    );
  });

  it("the re-record command selects exactly that test", () => {
    const name = "planner (v2) replans [fast] $1 it's *.ts";
    const cmd = rerecordCommand("/repo/test/plan.test.ts", name, root);
    expect(cmd).toBe(
      `INVOCACHE_MODE=record npx vitest run test/plan.test.ts -t '^planner \\(v2\\) replans \\[fast\\] \\$1 it'\\''s \\*\\.ts$'`,
    );
    const pattern = "^planner \\(v2\\) replans \\[fast\\] \\$1 it's \\*\\.ts$";
    expect(new RegExp(pattern).test(name)).toBe(true);
    expect(new RegExp(pattern).test(`${name} too`)).toBe(false);
  });

  it("full names join describe blocks with spaces, as vitest -t matches them", () => {
    expect(fullTestName({ name: "inner", suite: { name: "outer", suite: { name: "" } } })).toBe(
      "outer inner",
    );
  });
});

describe("withCassette", () => {
  const root = tempDir("vitest-helper");
  const req = (prompt: string) => ({ role: "tester", model: "m", prompt });
  const opts = (extra: WithCassetteOptions = {}): WithCassetteOptions => ({
    root,
    parseCache: false,
    recorder: { identity: MACHINE },
    ...extra,
  });

  it("records in auto mode, replays in replay mode, per test and per run", async (ctx: TestContext) => {
    let upstream = 0;
    const body = withCassette(opts({ mode: "auto" }), async ({ recorder, run, path }) => {
      expect(run.explicitId).toBe(false);
      expect(path.startsWith(join(root, "cassettes", "_external"))).toBe(true);
      const a = await recorder.call(req("same"), async () => ({ n: ++upstream }));
      const b = await recorder.call(req("same"), async () => ({ n: ++upstream }));
      expect([a, b]).toStrictEqual([{ n: 1 }, { n: 2 }]); // occurrences 0 and 1
    });
    await body(ctx);
    const replay = withCassette(opts({ mode: "replay" }), async ({ recorder }) => {
      expect(await recorder.call(req("same"), async () => ({ n: ++upstream }))).toStrictEqual({
        n: 1,
      });
      expect(await recorder.call(req("same"), async () => ({ n: ++upstream }))).toStrictEqual({
        n: 2,
      });
    });
    await replay(ctx);
    expect(upstream).toBe(2);
  });

  it("once: records while the test's cassette does not exist, then only replays", async (ctx: TestContext) => {
    let upstream = 0;
    const modes: string[] = [];
    const record = withCassette(opts({ mode: "once" }), async ({ recorder, mode, path }) => {
      modes.push(mode);
      expect(existsSync(path)).toBe(false);
      expect(await recorder.call(req("a"), async () => ({ n: ++upstream }))).toStrictEqual({
        n: 1,
      });
      expect(await recorder.call(req("b"), async () => ({ n: ++upstream }))).toStrictEqual({
        n: 2,
      });
    });
    await record(ctx);
    const replay = withCassette(opts({ mode: "once" }), async ({ recorder, mode }) => {
      modes.push(mode);
      expect(await recorder.call(req("b"), async () => ({ n: ++upstream }))).toStrictEqual({
        n: 2,
      });
      const miss = await recorder
        .call(req("new"), async () => ({ n: ++upstream }))
        .catch((e: unknown) => e);
      expect(miss).toBeInstanceOf(ReplayMissError);
      throw miss;
    });
    await expect(replay(ctx)).rejects.toBeInstanceOf(ReplayMissError);
    expect(modes).toEqual(["auto", "replay"]);
    expect(upstream).toBe(2);
  });

  it("its env and secretOptions reach the recorder once, through the cassette: it redacts, the file holds placeholders", async (ctx: TestContext) => {
    const KEY = "live-Zq9Xv8Wu7Ts6Rq5Po4Nm3Lk2Jh1Gf0";
    let file = "";
    const body = withCassette(
      opts({ mode: "record", env: { ACME_API_KEY: KEY }, restoreSecrets: true }),
      async ({ recorder, path }) => {
        file = path;
        const live = await recorder.call(req("secret"), async () => ({ apiKey: KEY }));
        expect(live).toStrictEqual({ apiKey: KEY });
      },
    );
    await body(ctx);
    const text = readFileSync(file, "utf8");
    expect(text).toContain("{secret:ACME_API_KEY}");
    expect(text).not.toContain(KEY);
    // restoreSecrets reached the recorder as well: the hit has the value back.
    const replay = withCassette(
      opts({ mode: "replay", env: { ACME_API_KEY: KEY }, restoreSecrets: true }),
      async ({ recorder }) => {
        expect(await recorder.call(req("secret"), async () => ({}))).toStrictEqual({ apiKey: KEY });
      },
    );
    await replay(ctx);
  });

  it("two tests with the same full name are refused: they would share (and prune) one cassette", async (ctx: TestContext) => {
    const body = withCassette(opts({ mode: "record" }), async ({ recorder }) => {
      await recorder.call(req("dup"), async () => ({ ok: true }));
    });
    await body(ctx);
    await body(ctx); // the same test again (a retry or repeat): fine
    // Another test (another task id) with exactly this full name.
    const twin = { ...ctx, task: { ...ctx.task, id: `${ctx.task.id}-twin` } } as TestContext;
    const error = await body(twin).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CassetteError);
    expect((error as Error).message).toMatch(
      /both named "withCassette two tests with the same full name/,
    );
    expect((error as Error).message).toMatch(/Give each test a distinct name/);
  });

  it("record mode never prunes a shared cassette's other entries", async (ctx: TestContext) => {
    const shared = (prompt: string) =>
      withCassette(
        opts({ mode: "record", name: "shared/record", report: () => {} }),
        async ({ recorder }) => {
          await recorder.call(req(prompt), async () => ({ prompt }));
        },
      )(ctx);
    await shared("first test");
    await shared("second test");
    const items = await readCassette(join(root, "cassettes", "shared", "record.yaml"));
    expect(
      items.map((i) => (i.value as { response: { prompt: string } }).response.prompt),
    ).toStrictEqual(["first test", "second test"]);
  });

  it("with a runId, a replay that takes another trajectory fails", async (ctx: TestContext) => {
    const calls = (prompts: string[], mode: "auto" | "replay") =>
      withCassette(opts({ mode, runId: "test", name: "trajectory" }), async ({ recorder }) => {
        for (const p of prompts) await recorder.call(req(p), async () => ({ p }));
      })(ctx);
    await calls(["a", "b"], "auto");
    await calls(["a", "b"], "replay");
    await expect(calls(["b", "a"], "replay")).rejects.toThrow(/different trajectory/);
  });

  it("a failing test persists nothing", async (ctx: TestContext) => {
    let path = "";
    const failing = withCassette(opts({ mode: "auto" }), async ({ recorder, path: p }) => {
      path = p;
      await recorder.call(req("recorded, then the test fails"), async () => ({ ok: true }));
      throw new Error("assertion failed");
    });
    await expect(failing(ctx)).rejects.toThrow("assertion failed");
    expect(existsSync(path)).toBe(false);
  });

  it("a replay miss names the command that re-records this test", async (ctx: TestContext) => {
    const body = withCassette(opts({ mode: "replay" }), async ({ recorder }) => {
      await recorder.call(req("never recorded"), async () => ({}));
    });
    const error = await body(ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayMissError);
    expect((error as ReplayMissError).rerecord).toBe(
      rerecordCommand(ctx.task.file.filepath, fullTestName(ctx.task), root),
    );
    expect((error as Error).message).toContain("INVOCACHE_MODE=record npx vitest run");
  });

  it("reports unused entries, fails in strict mode, drops them in record mode", async (ctx: TestContext) => {
    const record = withCassette(opts({ mode: "record" }), async ({ recorder }) => {
      await recorder.call(req("kept"), async () => ({ v: 1 }));
      await recorder.call(req("dropped later"), async () => ({ v: 2 }));
    });
    await record(ctx);
    const reports: string[] = [];
    let path = "";
    const usesOne = (extra: WithCassetteOptions) =>
      withCassette(
        opts({ mode: "replay", report: (m) => reports.push(m), ...extra }),
        async ({ recorder, path: p }) => {
          path = p;
          await recorder.call(req("kept"), async () => ({}));
        },
      );
    await usesOne({})(ctx);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/1 recorded entry of cassette:\/\/.* was not used by/);
    expect(reports[0]).toContain("withCassette({ prune: true })");
    const strict = await usesOne({ strict: true })(ctx).catch((e: unknown) => e);
    expect(strict).toBeInstanceOf(UnusedEntriesError);
    expect((strict as UnusedEntriesError).keys).toHaveLength(1);
    const before = readFileSync(path, "utf8");
    const rerecord = withCassette(opts({ mode: "record" }), async ({ recorder }) => {
      await recorder.call(req("kept"), async () => ({ v: 1 }));
    });
    await rerecord(ctx);
    const after = await readCassette(path);
    expect(after.filter((i) => i.key.includes(":e:"))).toHaveLength(1);
    expect(readFileSync(path, "utf8").length).toBeLessThan(before.length);
  });
});
