/**
 * pytest-invocache (python/) passes its own suite: the real `openai` and
 * `anthropic` Python packages through the real `invocache proxy` against a
 * fake upstream on 127.0.0.1. And its cassette names are the ones
 * `invocache/vitest` gives, checked against the TypeScript functions.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassettePathFor, namedCassettePath } from "../../src/testing/vitest.js";
import { CLI_COMMAND, installPlugin, REPO, SKIP, SKIP_REASON } from "./python-env.js";

describe("pytest-invocache", () => {
  it.skipIf(SKIP)(
    `passes its pytest suite${SKIP_REASON}`,
    () => {
      const python = installPlugin();
      const r = spawnSync(
        python,
        ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfE", join(REPO, "python", "tests")],
        {
          cwd: join(REPO, "python"),
          encoding: "utf8",
          timeout: 600_000,
          env: { ...process.env, INVOCACHE_CLI: CLI_COMMAND, INVOCACHE_PROXY_URL: "" },
        },
      );
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/\d+ passed/);
      expect(r.stdout).not.toMatch(/skipped/);
    },
    620_000,
  );
});

describe("cassette names, Python beside TypeScript", () => {
  const python3 = spawnSync("python3", ["--version"]).status === 0 ? "python3" : undefined;
  const files = [
    "/repo/test/plan.test.ts",
    "/repo/test/unit/deep/x.spec.mjs",
    "/elsewhere/outside.test.ts",
    "/repo/.hidden/-weird dir/a b.test.tsx",
  ];
  const names = [
    "planner replans",
    "TestPlanner::test_replans[v2]",
    "Fix ../../etc (x2)!",
    "café ünïcode ÅΩ",
    "",
    "a".repeat(90),
    "tést::日本語[..]",
  ];
  const named = ["shared/planner", "shared/my planner", "~x/.y/a.yml", "-lead/é", "x".repeat(150)];

  it.skipIf(python3 === undefined && !process.env.CI)(
    "the same paths for the same file and test name, and the same named cassettes",
    () => {
      const cases = files.flatMap((file) => names.map((name) => ({ file, name })));
      // naming.py is stdlib only: load it by path, without pytest.
      const script = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("naming", ${JSON.stringify(join(REPO, "python/src/pytest_invocache/naming.py"))})
naming = importlib.util.module_from_spec(spec); spec.loader.exec_module(naming)
data = json.load(sys.stdin)
print(json.dumps({
  "paths": [naming.cassette_path_for(c["file"], c["name"], root="/repo") for c in data["cases"]],
  "named": [naming.named_cassette_path(n, root="/repo") for n in data["named"]],
}))`;
      const r = spawnSync(python3 ?? "python3", ["-c", script], {
        input: JSON.stringify({ cases, named }),
        encoding: "utf8",
      });
      expect(r.stderr).toBe("");
      const got = JSON.parse(r.stdout) as { paths: string[]; named: string[] };
      expect(got.paths).toEqual(
        cases.map((c) => cassettePathFor(c.file, c.name, { root: "/repo" })),
      );
      expect(got.named).toEqual(named.map((n) => namedCassettePath(n, { root: "/repo" })));
    },
  );
});
