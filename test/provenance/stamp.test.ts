/**
 * Provenance stamps: stamp → verify round trips, tamper detection, record vs
 * replay, appends, the in-toto Statement v1 / SLSA Provenance v1 shape, the
 * stamp file's atomic writes, and argument errors.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { StampError } from "../../src/errors.js";
import { manifestIdentity } from "../../src/identity/index.js";
import { createRecorder, hashArtifact, invocationManifest } from "../../src/index.js";
import {
  IDENTITY_BYPRODUCT,
  INVOCACHE_BUILDER_ID,
  INVOCATION_BUILD_TYPE_V1,
  type ProvenanceStatement,
  provenanceStatement,
  RESPONSE_BYPRODUCT,
  SLSA_PROVENANCE_V1,
  STATEMENT_TYPE_V1,
  stampArtifact,
  stampFromRecorder,
  stampPathFor,
  verifyStamp,
} from "../../src/provenance/index.js";
import { inputDescriptor, modelUri } from "../../src/provenance/statement.js";
import { type Entry, entryKey, validateEntry } from "../../src/store/index.js";
import { INVOCACHE_VERSION } from "../../src/version.js";
import { modelOf } from "../helpers/model-manifest.js";
import { tempDir } from "../helpers/tmp.js";
import { MACHINE, PLAN_REQUEST, PLAN_TEXT, planId, planManifest, SPEC_HASH } from "./fixtures.js";
import { validateStatementV1 } from "./statement-shape.js";

const root = tempDir("provenance");

let n = 0;
/** A fresh directory with `plan.md` in it. */
function workspace(text = PLAN_TEXT): { dir: string; artifact: string } {
  const dir = join(root, `w${n++}`);
  mkdirSync(dir);
  const artifact = join(dir, "plan.md");
  writeFileSync(artifact, text);
  return { dir, artifact };
}

const readLines = (path: string): ProvenanceStatement[] =>
  readFileSync(path, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as ProvenanceStatement);

const identityOf = (s: ProvenanceStatement) =>
  s.predicate.runDetails.byproducts.find((b) => b.name === IDENTITY_BYPRODUCT)?.digest?.sha256;

/** Rewrite line `index` (0-based) of a stamp file. */
function editLine(stampPath: string, index: number, edit: (s: ProvenanceStatement) => void): void {
  const lines = readFileSync(stampPath, "utf8").trimEnd().split("\n");
  const s = JSON.parse(lines[index]!) as ProvenanceStatement;
  edit(s);
  lines[index] = JSON.stringify(s);
  writeFileSync(stampPath, `${lines.join("\n")}\n`);
}

describe("stampArtifact → verifyStamp", () => {
  it("writes <artifact>.intoto.jsonl that verifies", async () => {
    const { artifact } = workspace();
    const id = planId();
    const stampPath = await stampArtifact(artifact, { id, manifest: planManifest() });
    expect(stampPath).toBe(`${artifact}.intoto.jsonl`);
    expect(stampPathFor(artifact)).toBe(stampPath);

    const [stamp, ...rest] = readLines(stampPath);
    expect(rest).toEqual([]);
    const digest = await hashArtifact(artifact);
    expect(stamp!._type).toBe(STATEMENT_TYPE_V1);
    expect(stamp!.subject).toEqual([{ name: "plan.md", digest: { sha256: digest.slice(7) } }]);
    expect(stamp!.predicateType).toBe(SLSA_PROVENANCE_V1);
    expect(stamp!.predicate.buildDefinition.buildType).toBe(INVOCATION_BUILD_TYPE_V1);
    expect(stamp!.predicate.runDetails.builder).toEqual({
      id: INVOCACHE_BUILDER_ID,
      version: { invocache: INVOCACHE_VERSION },
    });
    expect(identityOf(stamp!)).toBe(id);
    expect(stamp!.predicate.runDetails.metadata.invocationId).toMatch(
      /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(stamp!.predicate.runDetails.metadata.invocache_replayed).toBe(false);

    const report = await verifyStamp(artifact);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.digest).toBe(digest);
    expect(report.stamps).toHaveLength(1);
    expect(report.stamps[0]).toMatchObject({ line: 1, ok: true, id, replayed: false });
    expect(report.stamps[0]!.manifest).toEqual(planManifest());
  });

  it("keeps the prompt text out of externalParameters; the manifest carries it for verification", async () => {
    const { artifact } = workspace();
    const manifest = planManifest();
    await stampArtifact(artifact, { id: planId(), manifest });
    const [stamp] = readLines(stampPathFor(artifact));
    const ext = stamp!.predicate.buildDefinition.externalParameters;
    expect(JSON.stringify(ext)).not.toContain(modelOf(manifest).prompt);
    expect(ext).toEqual({
      role: "planner",
      model: "gpt-5",
      task: "T-1",
      attempt: 0,
      promptDigest: { sha256: sha256(modelOf(manifest).prompt) },
      paramsDigest: { sha256: sha256('{"temperature":0.2}') },
    });
    expect(stamp!.predicate.buildDefinition.internalParameters).toEqual({
      manifest,
      occurrence: 0,
    });
    // The manifest is the normalized one: no project or home path leaks.
    expect(readFileSync(stampPathFor(artifact), "utf8")).not.toContain("/work/run-7");
    expect(stamp!.predicate.buildDefinition.resolvedDependencies).toEqual([
      { digest: { sha256: manifest.inputs[0]!.slice(7) } },
      { name: "model", uri: "model:gpt-5" },
    ]);
  });

  it("fails when one byte of the artifact changed, naming both digests", async () => {
    const { artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    const before = await hashArtifact(artifact);
    const bytes = readFileSync(artifact);
    bytes[3] = bytes[3]! ^ 0x01;
    writeFileSync(artifact, bytes);
    const after = await hashArtifact(artifact);

    const report = await verifyStamp(artifact);
    expect(report.ok).toBe(false);
    expect(report.stamps[0]!.ok).toBe(false);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatch(/^line 1: the artifact changed since it was stamped/);
    expect(report.problems[0]).toContain(after.slice(7));
    expect(report.problems[0]).toContain(before.slice(7));
  });

  it("matches subjects by digest only: a renamed artifact with its stamp still verifies", async () => {
    const { dir, artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    const moved = join(dir, "plan-v2.md");
    writeFileSync(moved, readFileSync(artifact));
    writeFileSync(stampPathFor(moved), readFileSync(stampPathFor(artifact)));
    expect((await verifyStamp(moved)).ok).toBe(true);
  });

  it("round-trips a prompt with a lone surrogate (identity and prompt digest use WTF-8)", async () => {
    const { artifact } = workspace();
    const manifest = invocationManifest(
      { role: "builder", prompt: "broken \ud83d pair", model: "m" },
      MACHINE,
    );
    await stampArtifact(artifact, { id: manifestIdentity(manifest), manifest });
    const report = await verifyStamp(artifact);
    expect(report.problems).toEqual([]);
    expect(report.stamps[0]!.manifest!.prompt).toBe("broken \ud83d pair");
  });
});

describe("record and replay", () => {
  it("share the identity byproduct and buildDefinition, not the invocationId; the replay says replayed", async () => {
    const { artifact } = workspace();
    const recorder = createRecorder({ store: "memory://", mode: "auto", identity: MACHINE });
    let upstream = 0;
    const step = async () => {
      const out = await recorder.call(
        PLAN_REQUEST,
        async () => {
          upstream++;
          return { text: PLAN_TEXT };
        },
        { attempt: 0 },
      );
      writeFileSync(artifact, out.text);
      return stampFromRecorder(artifact, recorder);
    };
    await step(); // records
    expect(recorder.last?.hit).toBe(false);
    await step(); // replays
    expect(recorder.last?.hit).toBe(true);
    expect(upstream).toBe(1);
    await recorder.close();

    const [record, replay] = readLines(stampPathFor(artifact));
    expect(identityOf(record!)).toBe(recorder.last!.id);
    expect(identityOf(replay!)).toBe(identityOf(record!));
    expect(replay!.predicate.runDetails.metadata.invocationId).not.toBe(
      record!.predicate.runDetails.metadata.invocationId,
    );
    expect(record!.predicate.runDetails.metadata.invocache_replayed).toBe(false);
    expect(replay!.predicate.runDetails.metadata.invocache_replayed).toBe(true);
    // The same invocation: the build definition is the same, only the run differs.
    expect(replay!.predicate.buildDefinition).toEqual(record!.predicate.buildDefinition);

    const report = await verifyStamp(artifact);
    expect(report.problems).toEqual([]);
    expect(report.stamps.map((s) => s.replayed)).toEqual([false, true]);
  });

  it("with the stored entry: its meta and a digest of its response, equal for record and replay", async () => {
    const { artifact } = workspace();
    const recorder = createRecorder({ store: "memory://", mode: "auto", identity: MACHINE });
    const entries: Entry[] = [];
    for (let i = 0; i < 2; i++) {
      await recorder.call(PLAN_REQUEST, async () => ({ text: PLAN_TEXT }));
      const { id, occurrence } = recorder.last!;
      const raw = await recorder.store.get(entryKey(recorder.namespace, id, occurrence));
      const entry = validateEntry(raw, "test");
      entries.push(entry);
      await stampFromRecorder(artifact, recorder, { entry });
    }
    await recorder.close();
    const [a, b] = readLines(stampPathFor(artifact));
    const response = (s: ProvenanceStatement) =>
      s.predicate.runDetails.byproducts.find((x) => x.name === RESPONSE_BYPRODUCT);
    expect(response(a!)).toEqual({
      name: RESPONSE_BYPRODUCT,
      digest: { sha256: sha256(`{"text":${JSON.stringify(PLAN_TEXT)}}`) },
      mediaType: "application/json",
    });
    expect(response(b!)).toEqual(response(a!));
    expect(a!.predicate.buildDefinition.internalParameters.recording).toEqual(entries[0]!.meta);
    expect((await verifyStamp(artifact)).ok).toBe(true);
  });

  it("stampFromRecorder refuses a recorder that has not answered a call", async () => {
    const { artifact } = workspace();
    const recorder = createRecorder({ store: "memory://", mode: "auto" });
    await expect(stampFromRecorder(artifact, recorder)).rejects.toThrow(
      /recorder has not answered a call yet/,
    );
    await recorder.close();
  });
});

describe("several stamps for one artifact", () => {
  it("append lines and keep the earlier ones byte for byte", async () => {
    const { artifact } = workspace();
    const stampPath = stampPathFor(artifact);
    const manifests = [0, 1, 2].map((attempt) =>
      invocationManifest(PLAN_REQUEST, { ...MACHINE, attempt }),
    );
    let previous = "";
    for (const manifest of manifests) {
      await stampArtifact(artifact, { id: manifestIdentity(manifest), manifest });
      const now = readFileSync(stampPath, "utf8");
      expect(now.startsWith(previous)).toBe(true);
      expect(now.endsWith("\n")).toBe(true);
      previous = now;
    }
    const report = await verifyStamp(artifact);
    expect(report.ok).toBe(true);
    expect(report.stamps.map((s) => [s.line, s.id])).toEqual(
      manifests.map((m, i) => [i + 1, manifestIdentity(m)]),
    );
  });

  it("add a newline before appending to a file whose last line has none", async () => {
    const { artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    const stampPath = stampPathFor(artifact);
    writeFileSync(stampPath, readFileSync(stampPath, "utf8").trimEnd());
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    expect(readLines(stampPath)).toHaveLength(2);
    expect((await verifyStamp(artifact)).ok).toBe(true);
  });
});

describe("in-toto Statement v1 / SLSA Provenance v1 shape", () => {
  it("every stamp written validates, with and without optional parts", async () => {
    const { artifact } = workspace();
    const recorder = createRecorder({ store: "memory://", mode: "auto", identity: MACHINE });
    await recorder.call(PLAN_REQUEST, async () => ({ text: PLAN_TEXT }), {
      inputArtifactHashes: [SPEC_HASH],
    });
    const { id, occurrence, manifest } = recorder.last!;
    expect(manifest).toEqual(planManifest());
    const entry = validateEntry(
      await recorder.store.get(entryKey(recorder.namespace, id, occurrence)),
      "test",
    );
    await recorder.close();
    const bare = invocationManifest({ role: "r", prompt: "" }, MACHINE);
    await stampArtifact(artifact, { id: manifestIdentity(bare), manifest: bare });
    await stampArtifact(artifact, {
      id,
      manifest,
      entry,
      replayed: true,
      startedOn: new Date("2026-01-31T12:00:00Z"),
      finishedOn: "2026-01-31T12:00:01.5Z",
      invocationId: "run-42/step-1",
    });
    for (const stamp of readLines(stampPathFor(artifact))) {
      expect(validateStatementV1(stamp)).toEqual([]);
    }
  });

  it("the validator itself catches what the spec requires", () => {
    const good = provenanceStatement(
      { name: "a", digest: `sha256:${"ab".repeat(32)}` },
      { id: planId(), manifest: planManifest() },
    );
    expect(validateStatementV1(good)).toEqual([]);
    const broken = structuredClone(good);
    delete (broken.subject[0] as { digest?: unknown }).digest;
    Object.assign(broken, { predicateType: 42 });
    delete (broken.predicate.buildDefinition as { externalParameters?: unknown })
      .externalParameters;
    Object.assign(broken.predicate.runDetails.builder, { version: { invocache: 1 } });
    broken.predicate.runDetails.metadata.startedOn = "2026-01-31 12:00";
    broken.predicate.runDetails.byproducts.push({ name: "nothing" });
    expect(validateStatementV1(broken)).toEqual([
      "subject[0].digest: required",
      "predicateType: must be a TypeURI string",
      "predicate.buildDefinition.externalParameters: required object",
      "predicate.runDetails.builder.version: must map names to strings",
      "predicate.runDetails.metadata.startedOn: must be an RFC 3339 UTC Timestamp",
      "predicate.runDetails.byproducts[1]: must set uri, digest or content",
    ]);
  });
});

describe("verifyStamp reports every problem", () => {
  it("a tampered manifest: identity mismatch, and the parameters that no longer match", async () => {
    const { artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    editLine(stampPathFor(artifact), 0, (s) => {
      s.predicate.buildDefinition.internalParameters.manifest.model = "gpt-4";
    });
    const report = await verifyStamp(artifact);
    expect(report.ok).toBe(false);
    const tampered = { ...planManifest(), model: "gpt-4" };
    expect(report.problems).toEqual([
      `line 1: identity mismatch: the stamped manifest hashes to ${manifestIdentity(tampered)} (identity recipe v1, docs/identity.md) but the invocache-identity byproduct says ${planId()}: the manifest or the identity was edited after stamping`,
      'line 1: externalParameters.model is "gpt-5" but the stamped manifest gives "gpt-4"',
      'line 1: resolvedDependencies do not match the stamped manifest\'s inputs and model; missing {"name":"model","uri":"model:gpt-4"}; unexpected {"name":"model","uri":"model:gpt-5"}',
    ]);
  });

  it("a tampered prompt changes the identity and the prompt digest", async () => {
    const { artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    editLine(stampPathFor(artifact), 0, (s) => {
      s.predicate.buildDefinition.internalParameters.manifest.prompt += "!";
    });
    const problems = (await verifyStamp(artifact)).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^line 1: identity mismatch/);
    expect(problems[1]).toMatch(/^line 1: externalParameters\.promptDigest is /);
  });

  it("an edited identity, unknown parameters and a broken manifest", async () => {
    const { artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    editLine(stampPathFor(artifact), 0, (s) => {
      s.predicate.runDetails.byproducts[0]!.digest = { sha256: "0".repeat(64) };
      (s.predicate.buildDefinition.externalParameters as unknown as Record<string, unknown>).cwd =
        "/home/alice";
    });
    editLine(stampPathFor(artifact), 1, (s) => {
      (
        s.predicate.buildDefinition.internalParameters.manifest as unknown as Record<
          string,
          unknown
        >
      ).extra = 1;
    });
    const report = await verifyStamp(artifact);
    expect(report.problems).toEqual([
      `line 1: identity mismatch: the stamped manifest hashes to ${planId()} (identity recipe v1, docs/identity.md) but the invocache-identity byproduct says ${"0".repeat(64)}: the manifest or the identity was edited after stamping`,
      `line 1: externalParameters.cwd is not a parameter of ${INVOCATION_BUILD_TYPE_V1}`,
      'line 2: internalParameters.manifest is not an invocache v1 manifest: unknown field "extra"; the identity cannot be recomputed from this stamp',
    ]);
  });

  it("a malformed line, with its line number; the other lines are still checked", async () => {
    const { artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    const stampPath = stampPathFor(artifact);
    appendFileSync(stampPath, '{"_type": "https://in-toto.io/Statement/v1", "subj\n');
    await expect(
      stampArtifact(artifact, { id: planId(), manifest: planManifest() }),
    ).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof StampError &&
        e.code === "ERR_STAMP_MALFORMED" &&
        e.line === 2 &&
        e.path === stampPath &&
        /line 2 is not JSON .*nothing was written/.test(e.message),
    );
    expect(readFileSync(stampPath, "utf8").split("\n")).toHaveLength(3); // unchanged

    writeFileSync(artifact, "changed");
    const report = await verifyStamp(artifact);
    expect(report.ok).toBe(false);
    expect(report.stamps.map((s) => s.line)).toEqual([1, 2]);
    expect(report.problems[0]).toMatch(/^line 1: the artifact changed/);
    expect(report.problems[1]).toMatch(/^line 2: not JSON \(/);
  });

  it("lines of another _type, predicateType or buildType: problems, or ignored on request", async () => {
    const { artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    const [stamp] = readLines(stampPathFor(artifact));
    const other = (edit: (s: ProvenanceStatement) => void) => {
      const s = structuredClone(stamp!);
      edit(s);
      return JSON.stringify(s);
    };
    appendFileSync(
      stampPathFor(artifact),
      [
        other((s) => Object.assign(s, { _type: "https://in-toto.io/Statement/v0.1" })),
        other((s) => Object.assign(s, { predicateType: "https://spdx.dev/Document" })),
        other((s) =>
          Object.assign(s.predicate.buildDefinition, {
            buildType: "pkg:npm/invocache#docs/build-types/invocation-v2.md",
          }),
        ),
        JSON.stringify({
          payloadType: "application/vnd.in-toto+json",
          payload: "e30=",
          signatures: [],
        }),
        other((s) =>
          Object.assign(s.predicate.buildDefinition, {
            buildType: "https://invocache.dev/invocation/v1",
          }),
        ),
        "[1, 2]",
        "",
      ].join("\n"),
    );
    const strict = await verifyStamp(artifact);
    expect(strict.ok).toBe(false);
    expect(strict.problems).toEqual([
      'line 2: not an invocache stamp: it has _type "https://in-toto.io/Statement/v0.1", not an in-toto Statement v1 (https://in-toto.io/Statement/v1)',
      'line 3: not an invocache stamp: it has predicateType "https://spdx.dev/Document", not SLSA Provenance v1 (https://slsa.dev/provenance/v1)',
      'line 4: not an invocache stamp: it has buildType "pkg:npm/invocache#docs/build-types/invocation-v2.md", not an invocache invocation (pkg:npm/invocache#docs/build-types/invocation-v1.md); it was written by another invocache version: verify it with that version',
      "line 5: not an invocache stamp: it is a DSSE envelope whose payload has _type missing, not an in-toto Statement v1 (https://in-toto.io/Statement/v1)",
      'line 6: not an invocache stamp: it has buildType "https://invocache.dev/invocation/v1", not an invocache invocation (pkg:npm/invocache#docs/build-types/invocation-v1.md); it has the placeholder buildType of earlier invocache versions: stamp the artifact again',
      "line 7: not an invocache stamp: it is an array, not a JSON object",
    ]);

    const lenient = await verifyStamp(artifact, { foreign: "ignore" });
    expect(lenient.ok).toBe(true);
    expect(lenient.stamps.map((s) => s.line)).toEqual([1]);
    expect(lenient.ignored.map((i) => i.line)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it("a file with only foreign lines is not verified, even when they are ignored", async () => {
    const { artifact } = workspace();
    writeFileSync(stampPathFor(artifact), '{"_type":"https://example.com/x"}\n');
    const report = await verifyStamp(artifact, { foreign: "ignore" });
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([`no invocache stamp in ${stampPathFor(artifact)}`]);
  });

  it("a missing stamp file or artifact is a problem, not an exception", async () => {
    const { dir, artifact } = workspace();
    const unstamped = await verifyStamp(artifact);
    expect(unstamped.ok).toBe(false);
    expect(unstamped.problems).toEqual([
      `no stamp file ${stampPathFor(artifact)}: the artifact was never stamped (stampArtifact, or invocache stamp)`,
    ]);

    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    rmSync(artifact);
    const gone = await verifyStamp(artifact);
    expect(gone.ok).toBe(false);
    expect(gone.digest).toBeUndefined();
    expect(gone.problems).toEqual([
      `artifact ${artifact} is missing: there is nothing to compare the stamps with`,
    ]);
    expect(gone.stamps[0]!.id).toBe(planId()); // the stamp itself is still checked

    mkdirSync(join(dir, "d.intoto.jsonl"));
    writeFileSync(join(dir, "d"), "x");
    await expect(verifyStamp(join(dir, "d"))).rejects.toSatisfy(
      (e: unknown) => e instanceof StampError && e.code === "ERR_STAMP_IO",
    );
  });
});

describe("atomic writes", () => {
  it("concurrent stamps of one artifact all land, and no temp or lock file is left", async () => {
    const { dir, artifact } = workspace();
    const manifests = Array.from({ length: 20 }, (_, attempt) =>
      invocationManifest(PLAN_REQUEST, { ...MACHINE, attempt }),
    );
    await Promise.all(
      manifests.map((manifest) =>
        stampArtifact(artifact, { id: manifestIdentity(manifest), manifest }),
      ),
    );
    const ids = readLines(stampPathFor(artifact)).map(identityOf);
    expect(new Set(ids)).toEqual(new Set(manifests.map(manifestIdentity)));
    expect(readdirSync(dir).sort()).toEqual(["plan.md", "plan.md.intoto.jsonl"]);
    expect((await verifyStamp(artifact)).stamps.every((s) => s.ok)).toBe(true);
  });

  it("concurrent stamps from separate processes all land (cross-process lock)", async () => {
    const { dir, artifact } = workspace();
    const script = fileURLToPath(new URL("./workers/stamp-worker.ts", import.meta.url));
    const startAt = String(Date.now() + 3000); // after every worker has loaded
    const runs = await Promise.all(
      [0, 1, 2, 3].map(
        (worker) =>
          new Promise<number | null>((resolve) => {
            const child = spawnChild(script, [artifact, String(worker), "25", startAt]);
            child.on("exit", resolve);
          }),
      ),
    );
    expect(runs).toEqual([0, 0, 0, 0]);
    expect(readLines(stampPathFor(artifact))).toHaveLength(100);
    expect(readdirSync(dir).sort()).toEqual(["plan.md", "plan.md.intoto.jsonl"]);
    expect((await verifyStamp(artifact)).ok).toBe(true);
  });

  it("replaces the stamp file by rename (a new inode), never rewriting it in place", async () => {
    const { artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    const before = statSync(stampPathFor(artifact)).ino;
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    expect(statSync(stampPathFor(artifact)).ino).not.toBe(before);
  });

  it("a failed write leaves nothing behind and throws StampError", async () => {
    const { dir, artifact } = workspace();
    mkdirSync(stampPathFor(artifact)); // the stamp path is taken by a directory
    await expect(
      stampArtifact(artifact, { id: planId(), manifest: planManifest() }),
    ).rejects.toSatisfy((e: unknown) => e instanceof StampError && e.code === "ERR_STAMP_IO");
    expect(readdirSync(dir).sort()).toEqual(["plan.md", "plan.md.intoto.jsonl"]);
    expect(readdirSync(stampPathFor(artifact))).toEqual([]);
  });

  it("a missing artifact is a StampError and writes nothing", async () => {
    const { dir } = workspace();
    const missing = join(dir, "nope.md");
    await expect(
      stampArtifact(missing, { id: planId(), manifest: planManifest() }),
    ).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof StampError &&
        e.code === "ERR_STAMP_IO" &&
        /Write the artifact/.test(e.message),
    );
    expect(readdirSync(dir)).toEqual(["plan.md"]);
  });
});

describe("arguments", () => {
  const id = planId();
  const manifest = planManifest();
  const { artifact } = workspace();

  it("bad arguments are TypeErrors or RangeErrors naming the argument", async () => {
    const cases: [() => Promise<unknown>, RegExp][] = [
      [() => stampArtifact("", { id, manifest }), /^artifactPath must be a non-empty/],
      [() => stampArtifact(42 as unknown as string, { id, manifest }), /^artifactPath /],
      [() => stampArtifact(artifact, null as never), /^opts must be an object/],
      [
        () => stampArtifact(artifact, { id: "abc", manifest }),
        /^opts\.id must be an invocation identity/,
      ],
      [
        () => stampArtifact(artifact, { id, manifest: { ...manifest, attempt: -1 } }),
        /^opts\.manifest is not an invocache v1 manifest: attempt/,
      ],
      [
        () => stampArtifact(artifact, { id, manifest, replayed: "yes" as unknown as boolean }),
        /^opts\.replayed must be a boolean/,
      ],
      [
        () => stampArtifact(artifact, { id, manifest, occurrence: 1.5 }),
        /^opts\.occurrence must be/,
      ],
      [
        () => stampArtifact(artifact, { id, manifest, invocationId: "" }),
        /^opts\.invocationId must/,
      ],
      [
        () => stampArtifact(artifact, { id, manifest, startedOn: "yesterday" }),
        /^opts\.startedOn must be a Date or an RFC 3339 UTC timestamp/,
      ],
      [
        () => stampArtifact(artifact, { id, manifest, finishedOn: "2026-01-31T12:00:00+02:00" }),
        /^opts\.finishedOn must be/,
      ],
      [
        () =>
          stampArtifact(artifact, {
            id,
            manifest,
            startedOn: "2026-01-31T12:00:01Z",
            finishedOn: "2026-01-31T12:00:00Z",
          }),
        /^opts\.startedOn .* is after opts\.finishedOn/,
      ],
      [
        () => stampArtifact(artifact, { id, manifest, entry: { v: 1 } as unknown as Entry }),
        /^opts\.entry is not an invocache entry/,
      ],
      [() => verifyStamp(undefined as unknown as string), /^artifactPath must be/],
      [
        () => verifyStamp(artifact, { foreign: "skip" as "ignore" }),
        /^opts\.foreign must be "problem" or "ignore"/,
      ],
      [() => stampFromRecorder(artifact, undefined as never), /^recorder must be a Recorder/],
    ];
    for (const [call, message] of cases) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, String(message)).toBeInstanceOf(Error);
      expect((error as Error).name, String(message)).toMatch(/^(TypeError|RangeError)$/);
      expect((error as Error).message).toMatch(message);
    }
    expect(() => provenanceStatement({ name: "a", digest: "abc" }, { id, manifest })).toThrow(
      /^subject\.digest must be "sha256:<64 lowercase hex>"/,
    );
  });

  it("an id that is not the manifest's identity is a StampError", async () => {
    const other = invocationManifest({ ...PLAN_REQUEST, model: "gpt-4" }, MACHINE);
    await expect(stampArtifact(artifact, { id, manifest: other })).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof StampError &&
        e.code === "ERR_STAMP_IDENTITY" &&
        e.message.includes(`${manifestIdentity(other).slice(0, 12)}…`) &&
        /recorder\.last\.id with recorder\.last\.manifest/.test(e.message),
    );
    expect(() => readFileSync(stampPathFor(artifact))).toThrow(/ENOENT/);
  });

  it("an entry of another invocation is a StampError", async () => {
    const recorder = createRecorder({ store: "memory://", mode: "auto", identity: MACHINE });
    await recorder.call({ ...PLAN_REQUEST, task: "T-2" }, async () => ({ text: "x" }));
    const last = recorder.last!;
    const entry = validateEntry(
      await recorder.store.get(entryKey(recorder.namespace, last.id, 0)),
      "test",
    );
    await recorder.close();
    await expect(stampArtifact(artifact, { id, manifest, entry })).rejects.toSatisfy(
      (e: unknown) => e instanceof StampError && e.code === "ERR_STAMP_IDENTITY",
    );
  });
});

describe("descriptors", () => {
  it("inputs: known digest algorithms become DigestSets; anything else is kept as content", () => {
    expect(inputDescriptor(`sha256:${"a".repeat(64)}`)).toEqual({
      digest: { sha256: "a".repeat(64) },
    });
    expect(inputDescriptor(`sha512:${"b".repeat(128)}`)).toEqual({
      digest: { sha512: "b".repeat(128) },
    });
    expect(inputDescriptor(`gitCommit:${"c".repeat(40)}`)).toEqual({
      digest: { gitCommit: "c".repeat(40) },
    });
    for (const odd of ["sha256:abc", `sha256:${"A".repeat(64)}`, "git:abc", "spec.md", "é\ud800"]) {
      const rd = inputDescriptor(odd);
      expect(Object.keys(rd)).toEqual(["content"]);
      expect(Buffer.from(rd.content!, "base64")).toEqual(
        Buffer.from(odd === "é\ud800" ? [0xc3, 0xa9, 0xed, 0xa0, 0x80] : Buffer.from(odd)),
      );
    }
  });

  it("model URIs percent-encode what a URI path cannot hold", () => {
    expect(modelUri("gpt-5")).toBe("model:gpt-5");
    expect(modelUri("openai/gpt-4o")).toBe("model:openai/gpt-4o");
    expect(modelUri("llama3:8b@q4")).toBe("model:llama3:8b@q4");
    expect(modelUri("my model?#%")).toBe("model:my%20model%3F%23%25");
    expect(modelUri("modèle")).toBe("model:mod%C3%A8le");
  });

  it("no model, no params: no model dependency and no paramsDigest", () => {
    const manifest = invocationManifest({ role: "r", prompt: "p" }, MACHINE);
    const s = provenanceStatement(
      { name: "a", digest: `sha256:${"0".repeat(64)}` },
      { id: manifestIdentity(manifest), manifest },
    );
    expect(s.predicate.buildDefinition.resolvedDependencies).toEqual([]);
    expect(s.predicate.buildDefinition.externalParameters).not.toHaveProperty("paramsDigest");
  });
});

describe("second implementation (Python, stdlib only)", () => {
  const python = findPython();
  const required = process.env.CI !== undefined && process.env.CI !== "";
  const script = fileURLToPath(new URL("./verify_stamp.py", import.meta.url));
  const run = (artifact: string) => {
    if (python === undefined) throw new Error("python3 is required in CI to verify stamps");
    return spawnSync(python, [script, artifact], { encoding: "utf8", timeout: 20_000 });
  };

  it.skipIf(python === undefined && !required)(
    "verify_stamp.py accepts invocache's stamps and rejects a changed artifact",
    async () => {
      const { artifact } = workspace();
      const unicode = invocationManifest(
        { role: "builder", prompt: "naïve \ud83d café 😀", model: "m", params: { t: 1e-7 } },
        MACHINE,
      );
      await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
      await stampArtifact(artifact, { id: manifestIdentity(unicode), manifest: unicode });
      const ok = run(artifact);
      expect(ok.stderr).toBe("");
      expect(ok.stdout).toBe(
        `ok   line 1 ${planId().slice(0, 12)}\nok   line 2 ${manifestIdentity(unicode).slice(0, 12)}\n`,
      );
      expect(ok.status).toBe(0);

      appendFileSync(artifact, "x");
      const changed = run(artifact);
      expect(changed.status).toBe(1);
      expect(changed.stdout).toContain("FAIL line 1");
      expect(changed.stdout).toContain("artifact changed since it was stamped");
    },
  );
});

function findPython(): string | undefined {
  const r = spawnSync("python3", ["--version"], { encoding: "utf8" });
  return r.error === undefined && r.status === 0 ? "python3" : undefined;
}

function spawnChild(script: string, args: string[]) {
  // The workers run TypeScript through tsx, as the recorder's multiprocess tests do.
  return spawn(process.execPath, ["--import", "tsx", script, ...args], { stdio: "inherit" });
}

/** sha256 hex of UTF-8 text, computed here independently of src/. */
function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
