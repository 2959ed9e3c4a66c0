/**
 * `id`, `normalize` and `explain`: the CLI gives the same identities as the
 * library, explains normalization, and compares two invocations.
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { hashArtifact, invocationIdentity, invocationManifest } from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, cli } from "./helpers.js";

const cwd = tempDir("cli-identity");
beforeAll(buildCli, BUILD_TIMEOUT);

const request = {
  role: "builder",
  model: "gpt-5",
  prompt: `Build ${cwd}/app (requested 2026-01-02T10:00:00Z)`,
  task: "T-1",
  projectPath: cwd,
  params: { temperature: 0.2 },
};
writeFileSync(join(cwd, "req.json"), JSON.stringify({ request, options: { attempt: 1 } }));
writeFileSync(join(cwd, "bare.json"), JSON.stringify(request));
writeFileSync(
  join(cwd, "req.yaml"),
  [
    "request:",
    "  role: builder",
    "  model: gpt-5",
    "  task: T-1",
    "  projectPath: /elsewhere/checkout",
    "  params: { temperature: 0.2 }",
    "  prompt: |",
    "    Build   /elsewhere/checkout/app",
    "    (requested 2027-12-31T23:59:59Z)",
    "options:",
    "  attempt: 1",
    "",
  ].join("\n"),
);
writeFileSync(join(cwd, "spec.md"), "# spec\n");

describe("invocache id", () => {
  it("prints the library's identity and short id", () => {
    const id = invocationIdentity(request, { attempt: 1 });
    const r = cli(["id", "req.json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      `${id}\nshort ${id.slice(0, 12)} · role builder · model gpt-5 · attempt 1\n`,
    );
  });

  it("--json: id, shortId, kind, manifest", () => {
    const r = cli(["id", "req.json", "--json"], { cwd });
    expect(r.json()).toEqual({
      id: invocationIdentity(request, { attempt: 1 }),
      shortId: invocationIdentity(request, { attempt: 1 }).slice(0, 12),
      kind: "request",
      manifest: invocationManifest(request, { attempt: 1 }),
    });
  });

  it("a bare request is attempt 0; --attempt and --input change the identity as the options would", async () => {
    expect(cli(["id", "bare.json", "--json"], { cwd }).json().id).toBe(invocationIdentity(request));
    const hash = await hashArtifact(join(cwd, "spec.md"));
    const r = cli(["id", "bare.json", "--attempt", "2", "--input", "spec.md", "--json"], { cwd });
    expect(r.json().id).toBe(
      invocationIdentity(request, { attempt: 2, inputArtifactHashes: [hash] }),
    );
  });

  it("reads YAML and stdin; the same request on another checkout at another time has the same id", () => {
    const json = cli(["id", "req.json", "--json"], { cwd }).json().id;
    expect(cli(["id", "req.yaml", "--json"], { cwd }).json().id).toBe(json);
    const stdin = cli(["id", "-", "--json"], {
      cwd,
      input: JSON.stringify({ request, options: { attempt: 1 } }),
    });
    expect(stdin.json().id).toBe(json);
  });

  it("--manifest prints the exact pre-image: its sha256 is the identity", () => {
    const r = cli(["id", "req.json", "--manifest"], { cwd });
    expect(r.status).toBe(0);
    expect(r.stdout.startsWith("invocache/invocation/v1\n{")).toBe(true);
    expect(r.stdout.endsWith("}")).toBe(true);
    expect(createHash("sha256").update(r.stdout, "utf8").digest("hex")).toBe(
      invocationIdentity(request, { attempt: 1 }),
    );
  });

  it("a manifest or an entry file: the identity is recomputed", () => {
    const manifest = invocationManifest(request, { attempt: 1 });
    writeFileSync(join(cwd, "manifest.json"), JSON.stringify(manifest));
    const r = cli(["id", "manifest.json", "--json"], { cwd });
    expect(r.json()).toMatchObject({
      kind: "manifest",
      id: invocationIdentity(request, { attempt: 1 }),
    });
    const overridden = cli(["id", "manifest.json", "--attempt", "3"], { cwd });
    expect(overridden.status).toBe(2);
    expect(overridden.stderr).toMatch(/--attempt and --input apply to requests only/);
  });

  it("refuses fields that would silently be ignored", () => {
    const r = cli(["id", "-"], { cwd, input: '{"role":"planner","prompt":"x","attempt":1}' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /"attempt" is not a request field and would be ignored; put it under "options"/,
    );
  });
});

describe("invocache normalize", () => {
  const text = `Fix ${cwd}/src/a.ts\n\n  at 2026-09-09T14:33:21Z (session 3f2504e0-4f89-11d3-9a0c-0305e82c3301)`;

  it("prints the normalized text", () => {
    const r = cli(["normalize", "-", "--project", cwd], { cwd, input: text });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe("Fix {project}/src/a.ts at {timestamp} (session {uuid})\n");
  });

  it("--explain lists which rule fired where", () => {
    const r = cli(["normalize", "-", "--project", cwd, "--explain"], { cwd, input: text });
    expect(r.stdout).toMatch(
      /4 rules fired: whitespace ×1, root:project ×1, timestamp ×1, uuid ×1/,
    );
    expect(r.stdout).toMatch(/root:project\s+4–\d+\s+\S+\s+\{project\}/);
    expect(r.stdout).toMatch(/timestamp\s+\d+–\d+\s+2026-09-09T14:33:21Z\s+\{timestamp\}/);
    expect(r.stdout).toMatch(/whitespace: runs of whitespace became one space/);
  });

  it("--json: output, counts, matches", () => {
    const r = cli(["normalize", "-", "--root", `work=${cwd}`, "--json"], { cwd, input: text });
    const out = r.json<{
      output: string;
      counts: Record<string, number>;
      matches: Array<Record<string, unknown>>;
    }>();
    expect(out.output).toBe("Fix {work}/src/a.ts at {timestamp} (session {uuid})");
    expect(out.counts).toEqual({ whitespace: 1, "root:work": 1, timestamp: 1, uuid: 1 });
    expect(out.matches[0]).toEqual({
      rule: "root:work",
      start: 4,
      end: 4 + cwd.length,
      text: cwd,
      replacement: "{work}",
    });
  });
});

describe("invocache explain", () => {
  it("two requests that normalize alike share an identity", () => {
    const r = cli(["explain", "req.json", "req.yaml"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Same identity: every manifest field is equal after normalization/);
    expect(r.stdout).toMatch(/The raw texts differ only in what these rules replaced/);
    const json = cli(["explain", "req.json", "req.yaml", "--json"], { cwd }).json<{
      same: boolean;
      diffs: unknown[];
      a: { normalization: Record<string, number> };
      b: { normalization: Record<string, number> };
    }>();
    expect(json.same).toBe(true);
    expect(json.diffs).toEqual([]);
    expect(json.b.normalization).toEqual({ whitespace: 1, "root:project": 1, timestamp: 1 });
  });

  it("field by field why two requests differ; --exit-code exits 1", () => {
    const r = cli(["explain", "bare.json", "req.json", "--json"], { cwd });
    const out = r.json<{
      same: boolean;
      diffs: Array<{ field: string; summary: string }>;
      fields: Array<{ field: string; same: boolean }>;
    }>();
    expect(out.same).toBe(false);
    expect(out.diffs).toEqual([{ field: "attempt", summary: "attempt: 0 → 1" }]);
    expect(out.fields.filter((f) => !f.same).map((f) => f.field)).toEqual(["attempt"]);
    const human = cli(["explain", "bare.json", "req.json", "--exit-code"], { cwd });
    expect(human.status).toBe(1);
    expect(human.stdout).toMatch(/Different identities: 1 field differs/);
    expect(human.stdout).toMatch(/attempt: 0 → 1/);
  });

  it("an argument that is neither a file nor an id prefix is a usage error", () => {
    const r = cli(["explain", "req.json", "nope.json"], { cwd });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/"nope\.json" is neither a file nor an id prefix/);
  });
});
