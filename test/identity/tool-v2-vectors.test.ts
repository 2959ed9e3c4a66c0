/**
 * Recipe tool v2 (issue 29): test/vectors/identity-tool-v2.json holds
 * request -> manifest -> id, and the Python script reproduces every id under
 * the v2 domain tag. Arguments are data: the pairs recipe tool v1 merged are
 * distinct ids here; only the roots make two machines' paths one id.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type IdentityOptions, manifestIdentity } from "../../src/identity/index.js";
import { sha256Hex } from "../../src/identity/sha256.js";
import { ToolArgRulesError } from "../../src/identity/tool-arg-rules.js";
import {
  assertToolManifest,
  TOOL_IDENTITY_DOMAIN_V2,
  type ToolInvocationRequest,
  type ToolManifest,
  toolIdentity,
  toolIdentityV1,
  toolManifest,
  toolManifestBytes,
  toolRecipeVersion,
} from "../../src/identity/tool-manifest.js";
import { IDENTITY_SECRETS } from "../../src/normalize/secrets-rule.js";
import { createSecretScanner } from "../../src/secrets/redact.js";

const DIR = fileURLToPath(new URL("../vectors/", import.meta.url));
const FILE = join(DIR, "identity-tool-v2.json");
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
const byName = new Map(vectors.map((v) => [v.name, v]));
const id = (name: string) => (byName.get(name) as Vector).id;

function optionsOf(v: Vector): IdentityOptions {
  return v.secrets
    ? { ...v.options, secrets: createSecretScanner({ ...IDENTITY_SECRETS, env: {} }) }
    : { ...v.options, secrets: false };
}

describe("identity-tool-v2.json golden vectors", () => {
  it("is ASCII-only and uniquely named", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(20);
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
    expect(/^[\n\x20-\x7e]*$/.test(text)).toBe(true);
  });

  for (const v of vectors) {
    it(`${v.name}: request -> manifest -> id`, () => {
      expect(toolManifest(v.request, optionsOf(v))).toEqual(v.manifest);
      expect(toolIdentity(v.request, optionsOf(v))).toBe(v.id);
      expect(manifestIdentity(v.manifest)).toBe(v.id);
      expect(assertToolManifest(v.manifest, v.name)).toBe(v.manifest);
      expect(toolRecipeVersion(v.manifest)).toBe(2);
      // Never the id recipe tool v1 gave the same call: a v1 entry is never served for it.
      expect(toolIdentityV1(v.request, optionsOf(v))).not.toBe(v.id);
    });
  }

  it("hashes the tool v2 domain tag followed by the JCS bytes", () => {
    const v = vectors[0] as Vector;
    const domain = new TextEncoder().encode(TOOL_IDENTITY_DOMAIN_V2);
    const body = toolManifestBytes(v.manifest);
    const all = new Uint8Array(domain.length + body.length);
    all.set(domain);
    all.set(body, domain.length);
    expect(sha256Hex(all)).toBe(v.id);
  });

  it("arguments are data: the pairs tool v1 merged are distinct, roots still match", () => {
    expect(id("v2-uuid-a")).not.toBe(id("v2-uuid-b"));
    expect(id("v2-13-digit-id-a")).not.toBe(id("v2-13-digit-id-b"));
    expect(id("v2-iso-date-2020")).not.toBe(id("v2-iso-date-2026"));
    const patterns = [
      "v2-pattern-one-space",
      "v2-pattern-two-spaces",
      "v2-pattern-newline",
      "v2-pattern-nbsp",
      "v2-pattern-trailing-space",
    ].map(id);
    expect(new Set(patterns).size).toBe(patterns.length);
    expect(id("v2-roots-machine-a")).toBe(id("v2-roots-machine-b"));
    expect(JSON.stringify(byName.get("v2-secret-argument")?.manifest)).not.toContain("sk-proj-");
  });

  it("each argRules setting: prompt normalizes like a prompt, none keeps roots, a list only its rules", () => {
    expect(byName.get("v2-argrules-prompt")?.manifest.args).toEqual({
      line: "at {timestamp} run {uuid} ok",
    });
    expect(byName.get("v2-argrules-none")?.manifest.args).toEqual({ path: "/tmp/x/a.txt" });
    expect(byName.get("v2-argrules-list")?.manifest.args).toEqual({
      line: "run {uuid} at {tmp}/x  ok",
    });
  });

  it("a bad argRules is a ToolArgRulesError naming the option", () => {
    const bad = (argRules: unknown) => () =>
      toolManifest({ kind: "tool", name: "t", argRules: argRules as never });
    expect(bad("exact")).toThrow(ToolArgRulesError);
    expect(bad("exact")).toThrow(/argRules must be "roots"/);
    expect(bad(["uuid", "secret"])).toThrow(/argRules\[1\]/);
  });

  it("the Python implementation reproduces every tool v2 vector", () => {
    const r = spawnSync("python3", [join(DIR, "verify_identity_vectors.py"), FILE], {
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(`${vectors.length}/${vectors.length} vectors reproduced`);
    expect(r.status).toBe(0);
  });
});
