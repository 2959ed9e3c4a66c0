/**
 * `invocache demo` end to end, as CI runs it: the first run records (misses,
 * upstream calls), the second replays (only hits, zero upstream calls), the
 * stamps verify, and running it again tells the same story.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, cli, ROOT } from "./helpers.js";

interface Step {
  step: number;
  role: string;
  artifact: string;
  id: string;
  attempt: number;
  occurrence: number;
  hit: boolean;
  ms: number;
  kind: "model" | "tool";
  verdict: "accepted" | "rejected" | null;
  reason: string | null;
}
interface Run {
  runId: string;
  run: number;
  mode: string;
  upstreamCalls: number;
  hits: number;
  misses: number;
  ms: number;
  savedMs: number;
  spent: { inputTokens: number; outputTokens: number; usd: number; unpriced: number };
  saved: { inputTokens: number; outputTokens: number; usd: number; unpriced: number };
  contentHash: string;
  steps: Step[];
}
interface DemoJson {
  ok: boolean;
  store: string;
  namespace: string;
  cleared: number;
  outDir: string;
  runs: Run[];
  key: { keyid: string; privateKey: string; publicKey: string; generated: boolean };
  stamps: Array<{
    artifact: string;
    ok: boolean;
    problems: string[];
    trust: string[] | null;
    stamps: Array<{ replayed: boolean; id: string; signed: boolean; trustedBy: string | null }>;
  }>;
  savedMs: number;
  saved: { inputTokens: number; outputTokens: number; usd: number };
  prices: { source: string; version: string; date: string };
}

const cwd = tempDir("cli-demo");
beforeAll(buildCli, BUILD_TIMEOUT);

describe("invocache demo", () => {
  let first: DemoJson;

  it("records on run 1, replays on run 2 with zero upstream calls, and the stamps verify (CI=true)", () => {
    const r = cli(["demo", "--json"], { cwd, env: { CI: "true" } });
    expect(r.status, r.stderr).toBe(0);
    first = r.json<DemoJson>();
    expect(first.ok).toBe(true);
    expect(first.store).toBe(`sqlite://${join(cwd, ".invocache", "cache.sqlite")}`);
    expect(first.namespace).toBe("demo");
    expect(first.cleared).toBe(0);
    const [record, replay] = first.runs as [Run, Run];

    // Each run has its own id, so each has its own run record (the viewer shows both).
    expect(first.runs.map((r) => r.runId)).toEqual(["demo-1", "demo-2"]);
    expect(record.mode).toBe("auto");
    expect(record.upstreamCalls).toBe(5);
    // 5 model calls and 2 tool calls (run_tests), one trajectory.
    expect(record.misses).toBe(7);
    expect(record.hits).toBe(0);
    expect(record.steps.map((s) => [s.role, s.kind, s.attempt, s.hit])).toEqual([
      ["planner", "model", 0, false],
      ["builder", "model", 0, false],
      ["run_tests", "tool", 0, false],
      ["reviewer", "model", 0, false],
      ["builder", "model", 1, false],
      ["run_tests", "tool", 1, false],
      ["reviewer", "model", 1, false],
    ]);
    // The gate rejected the first build; the retry (attempt 1) is a new identity and was accepted.
    const builders = record.steps.filter((s) => s.role === "builder");
    expect(builders.map((s) => s.verdict)).toEqual(["rejected", "accepted"]);
    expect(builders[0]!.id).not.toBe(builders[1]!.id);
    for (const s of record.steps.filter((x) => x.kind === "model"))
      expect(s.ms).toBeGreaterThanOrEqual(140);

    expect(replay.mode).toBe("replay");
    expect(replay.upstreamCalls).toBe(0);
    expect(replay.misses).toBe(0);
    expect(replay.hits).toBe(7);
    expect(replay.steps.every((s) => s.hit)).toBe(true);
    expect(replay.steps.map((s) => s.id)).toEqual(record.steps.map((s) => s.id));
    expect(replay.contentHash).toBe(record.contentHash);
    expect(replay.savedMs).toBeGreaterThan(5 * 140);
    // Run 2 saved what run 1 spent: the same tokens, priced as gpt-4o-mini.
    expect(record.spent.inputTokens).toBeGreaterThan(0);
    expect(record.spent.unpriced).toBe(0);
    expect(record.spent.usd).toBeGreaterThan(0);
    expect(replay.saved).toStrictEqual({ ...record.spent });
    expect(first.saved).toStrictEqual(replay.saved);
    expect(first.prices.source).toBe("@pydantic/genai-prices");
    expect(replay.steps.filter((s) => s.role === "builder").map((s) => s.verdict)).toEqual([
      "rejected",
      "accepted",
    ]);

    expect(first.stamps).toHaveLength(5);
    for (const stamp of first.stamps) {
      expect(stamp.ok, stamp.problems.join("\n")).toBe(true);
      expect(stamp.stamps.map((s) => s.replayed)).toEqual([false, true]);
    }

    // Signed with a key the demo generated in its own folder, verified against it.
    expect(first.key).toMatchObject({
      privateKey: join(".invocache", "demo", "keys", "demo-signing.key.pem"),
      publicKey: join(".invocache", "demo", "keys", "demo-signing.pub.pem"),
      generated: true,
    });
    expect(statSync(join(cwd, first.key.privateKey)).mode & 0o777).toBe(0o600);
    for (const stamp of first.stamps) {
      expect(stamp.trust).toEqual([first.key.keyid]);
      expect(stamp.stamps.map((s) => [s.signed, s.trustedBy])).toEqual([
        [true, first.key.keyid],
        [true, first.key.keyid],
      ]);
    }
  });

  it("is idempotent: a second demo clears its namespace and records again", () => {
    const r = cli(["demo", "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    const again = r.json<DemoJson>();
    expect(again.cleared).toBeGreaterThanOrEqual(5); // 5 entries and the run record
    expect(again.runs[0]!.upstreamCalls).toBe(5);
    expect(again.runs[1]!.upstreamCalls).toBe(0);
    // Normalization: the prompts carry the time, a UUID and the path, yet the ids are stable.
    expect(again.runs[0]!.steps.map((s) => s.id)).toEqual(first.runs[0]!.steps.map((s) => s.id));
    for (const stamp of again.stamps) expect(stamp.stamps).toHaveLength(2);
    // The key is reused, never regenerated.
    expect(again.key).toEqual({ ...first.key, generated: false });
  });

  it("the README shows a real run: the same identities, in the same order", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const shown = [
      ...readme.matchAll(/^ {2}\d {5}(\w+) +([0-9a-f]{12}) {2}(\d) +(miss|hit) /gm),
    ].map((m) => `${m[1]} ${m[2]} ${m[3]} ${m[4]}`);
    const expected = first.runs.flatMap((run) =>
      run.steps.map((s) => `${s.role} ${s.id.slice(0, 12)} ${s.attempt} ${s.hit ? "hit" : "miss"}`),
    );
    expect(shown).toEqual(expected);
  });

  it("prints a table per run, the time saved and where to look next", () => {
    const r = cli(["demo"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    const out = r.stdout;
    expect(out).toMatch(/Run 1 · mode auto/);
    expect(out).toMatch(/Run 2 · mode replay/);
    expect(out).toMatch(/step\s+role\s+id\s+attempt\s+cache\s+time\s+verdict/);
    expect(out).toMatch(/builder\s+[0-9a-f]{12}\s+0\s+miss\s+\d+ ms\s+rejected/);
    expect(out).toMatch(/7 misses, 5 upstream calls/);
    expect(out).toMatch(/7 hits, 0 upstream calls/);
    expect(out).toMatch(/run_tests\s+[0-9a-f]{12}\s+1\s+hit/);
    expect(out).toMatch(/same trajectory/);
    expect(out).toMatch(
      /Run 2 saved [\d.]+ (s|ms) of model time, [\d.]+k? tokens \(\$0\.\d+\) and 5 upstream calls/,
    );
    expect(out).toMatch(
      /dollars at gpt-4o-mini prices from @pydantic\/genai-prices@[\d.]+ \(\d{4}-\d{2}-\d{2}\)/,
    );
    expect(out).toMatch(/7 misses, 5 upstream calls, .* tokens \(\$0\.\d+\) spent/);
    expect(out).toMatch(/invocache ls --namespace demo/);
    expect(out).toMatch(/invocache view {3}# both runs in the browser/);
    expect(out).toMatch(
      /key {5}\.invocache\/demo\/keys\/demo-signing\.key\.pem \(Ed25519, keyid [0-9a-f]{12}, generated by an earlier demo\)/,
    );
    expect(out).toMatch(/one signed stamp per run/);
    expect(out).toMatch(
      /verify \.invocache\/demo\/plan\.md --trust \.invocache\/demo\/keys\/demo-signing\.pub\.pem/,
    );
    expect(out).not.toMatch(/\x1b\[/); // not a terminal: no colors
    expect(r.stderr).toBe("");
  });

  it("leaves a store the other commands read: ls, show, explain, stats, verify", () => {
    const ls = cli(["ls", "--namespace", "demo", "--json"], { cwd });
    expect(ls.status, ls.stderr).toBe(0);
    const entries = ls.json<{
      entries: Array<{
        id: string;
        role: string;
        model: string;
        attempt: number;
        verdict: string | null;
      }>;
    }>().entries;
    expect(entries).toHaveLength(7);
    expect(entries.filter((e) => e.model === "tool run_tests")).toHaveLength(2);
    const [b0, b1] = entries.filter((e) => e.role === "builder" && e.model === "gpt-4o-mini");
    expect([b0!.verdict, b1!.verdict]).toEqual(["rejected", "accepted"]);

    const explain = cli(["explain", b0!.id.slice(0, 8), b1!.id.slice(0, 10), "--json"], { cwd });
    expect(explain.status, explain.stderr).toBe(0);
    const diff = explain.json<{ same: boolean; diffs: Array<{ field: string }> }>();
    expect(diff.same).toBe(false);
    expect(diff.diffs.map((d) => d.field)).toEqual(["attempt", "prompt"]);

    const show = cli(["show", b0!.id.slice(0, 12)], { cwd });
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/verdict\s+rejected: Step 3 of the plan asks for unit tests/);
    expect(show.stdout).toMatch(/\{project\}/);

    const stats = cli(["stats", "--json"], { cwd });
    expect(
      stats.json<{ entries: number; byRole: Record<string, { entries: number }> }>().byRole.builder
        ?.entries,
    ).toBe(4); // two builds and the two run_tests tool calls of the builder step

    const verify = cli(
      [
        "verify",
        ".invocache/demo/plan.md",
        ".invocache/demo/slugify.attempt-1.ts",
        "--trust",
        ".invocache/demo/keys/demo-signing.pub.pem",
      ],
      { cwd },
    );
    expect(verify.status, verify.stdout).toBe(0);

    // Both runs have their run record: the viewer's report lists each.
    const report = cli(["view", "--export", "report.html", "--json"], { cwd });
    expect(report.status, report.stderr).toBe(0);
    const page = readFileSync(join(cwd, "report.html"), "utf8");
    expect(page).toContain('data-route="/run/demo/demo-1"');
    expect(page).toContain('data-route="/run/demo/demo-2"');
    expect(verify.stdout).toMatch(/All 2 artifacts verified/);
    expect(verify.stdout).toContain(`signed by ${first.key.keyid.slice(0, 12)} (trusted)`);
  });
});
