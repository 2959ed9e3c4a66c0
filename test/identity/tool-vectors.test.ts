/**
 * Tool identities (issue 13) are pinned by golden data like model calls:
 * test/vectors/identity-tool-v1.json holds request -> manifest -> id, and the
 * Python script reproduces every id from its manifest under the tool domain.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  type IdentityOptions,
  invocationIdentity,
  manifestIdentity,
} from "../../src/identity/index.js";
import { sha256Hex } from "../../src/identity/sha256.js";
import {
  assertToolManifest,
  TOOL_IDENTITY_DOMAIN_V1,
  type ToolInvocationRequest,
  type ToolManifest,
  toolIdentityV1 as toolIdentity,
  toolManifestV1 as toolManifest,
  toolManifestBytes,
} from "../../src/identity/tool-manifest.js";
import { IDENTITY_SECRETS } from "../../src/normalize/secrets-rule.js";
import { createSecretScanner } from "../../src/secrets/redact.js";

const DIR = fileURLToPath(new URL("../vectors/", import.meta.url));
const FILE = join(DIR, "identity-tool-v1.json");
interface Vector {
  name: string;
  request: ToolInvocationRequest;
  options: IdentityOptions;
  secrets?: boolean;
  manifest: ToolManifest;
  id: string;
}
const text = readFileSync(FILE, "utf8");
const vectors = JSON.parse(text) as Vector[];

function optionsOf(v: Vector): IdentityOptions {
  return v.secrets
    ? { ...v.options, secrets: createSecretScanner({ ...IDENTITY_SECRETS, env: {} }) }
    : { ...v.options, secrets: false };
}

describe("identity-tool-v1.json golden vectors", () => {
  it("is ASCII-only and uniquely named", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(12);
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
    expect(/^[\n\x20-\x7e]*$/.test(text)).toBe(true);
  });

  for (const v of vectors) {
    it(`${v.name}: request -> manifest -> id`, () => {
      expect(toolManifest(v.request, optionsOf(v))).toEqual(v.manifest);
      expect(toolIdentity(v.request, optionsOf(v))).toBe(v.id);
      // manifestIdentity dispatches on kind, so stored tool entries re-check.
      expect(manifestIdentity(v.manifest)).toBe(v.id);
      expect(assertToolManifest(v.manifest, v.name)).toBe(v.manifest);
    });
  }

  it("hashes the tool domain tag followed by the JCS bytes", () => {
    const v = vectors[0] as Vector;
    const domain = new TextEncoder().encode(TOOL_IDENTITY_DOMAIN_V1);
    const body = toolManifestBytes(v.manifest);
    const all = new Uint8Array(domain.length + body.length);
    all.set(domain);
    all.set(body, domain.length);
    expect(sha256Hex(all)).toBe(v.id);
  });

  it("normalizes noise in arguments and keeps what matters", () => {
    const byName = new Map(vectors.map((v) => [v.name, v]));
    expect(byName.get("tool-function-plain")?.id).toBe(byName.get("tool-function-key-order")?.id);
    expect(byName.get("tool-function-plain")?.id).not.toBe(byName.get("tool-mcp-server")?.id);
    const secret = byName.get("tool-secret-argument") as Vector;
    expect(JSON.stringify(secret.manifest)).not.toContain("sk-proj-");
    const a = toolIdentity(
      { kind: "tool", name: "t", args: { p: "/tmp/a/x" } },
      { tmpDirs: ["/tmp"] },
    );
    const b = toolIdentity(
      { kind: "tool", name: "t", args: { p: "/tmp/b/x" } },
      { tmpDirs: ["/tmp"] },
    );
    expect(a).not.toBe(toolIdentity({ kind: "tool", name: "t", args: { p: "/srv/x" } }));
    expect(typeof a).toBe("string");
    expect(b).toMatch(/^[0-9a-f]{64}$/);
  });

  it("never equals a model identity with the same visible fields", () => {
    const model = invocationIdentity({ role: "default", prompt: "", model: "" });
    const tool = toolIdentity({ kind: "tool", name: "x" });
    expect(tool).not.toBe(model);
  });

  it("the Python implementation reproduces every tool vector", () => {
    const r = spawnSync("python3", [join(DIR, "verify_identity_vectors.py"), FILE], {
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(`${vectors.length}/${vectors.length} vectors reproduced`);
    expect(r.status).toBe(0);
  });

  it("the Python implementation fails on a tampered tool manifest", () => {
    const dir = mkdtempSync(join(tmpdir(), "invocache-toolvec-"));
    try {
      const tampered = structuredClone(vectors.slice(0, 2));
      (tampered[0] as Vector).manifest.args = { a: 2, b: 4 };
      // A kind other than "tool" hashes under the model domain: the id no longer matches.
      (tampered[1] as unknown as { manifest: Record<string, unknown> }).manifest.kind = "model";
      const file = join(dir, "tampered.json");
      writeFileSync(file, JSON.stringify(tampered));
      const r = spawnSync("python3", [join(DIR, "verify_identity_vectors.py"), file], {
        encoding: "utf8",
      });
      expect(r.status).toBe(1);
      expect(r.stdout).toContain("0/2 vectors reproduced");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("docs/identity.md quotes only ids that are in the vector file", () => {
    const doc = readFileSync(
      fileURLToPath(new URL("../../docs/identity.md", import.meta.url)),
      "utf8",
    );
    const section = doc.slice(doc.indexOf("## Tool identities"));
    const quoted = section.match(/\b[0-9a-f]{64}\b/g) ?? [];
    expect(quoted.length).toBeGreaterThanOrEqual(2);
    // The section quotes recipe tool v1 and v2 ids: each must be a golden vector.
    const v2 = JSON.parse(readFileSync(join(DIR, "identity-tool-v2.json"), "utf8")) as Vector[];
    const known = [...vectors, ...v2].map((v) => v.id);
    for (const id of quoted) expect(known).toContain(id);
  });

  it("bad tool requests are TypeErrors naming the field", () => {
    expect(() => toolManifest({ kind: "tool", name: "" })).toThrow(/request.name/);
    expect(() => toolManifest({ kind: "tool", name: "t", args: { n: Number.NaN } })).toThrow(
      /tool t arguments.n is NaN/,
    );
    expect(() => toolManifest({ kind: "tool", name: "t", args: [] as never })).toThrow(
      /tool t: arguments must be a plain object/,
    );
    expect(() => assertToolManifest({ kind: "tool" }, "x")).toThrow(/missing/);
  });
});
