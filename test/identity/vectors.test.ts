/**
 * Identity recipe v1 is pinned by golden data, never regenerated here:
 * - test/vectors/identity-v1.json: request + options -> manifest -> id. Any
 *   change of a key is a visible, deliberate break (a new recipe version).
 * - test/vectors/verify_identity_vectors.py: a second, independent
 *   implementation (Python stdlib) must reproduce every id from its manifest.
 * - RFC 8785's own samples and the cyberphone/json-canonicalization test
 *   data (test/vectors/jcs/) pin `canonicalJson`.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { CanonicalValue } from "../../src/identity/canonical-json.js";
import {
  canonicalJson,
  type IdentityOptions,
  type InvocationRequest,
  invocationIdentity,
  invocationManifest,
  type Manifest,
  manifestBytes,
  manifestIdentity,
  wtf8,
} from "../../src/identity/index.js";
import { modelOf } from "../helpers/model-manifest.js";
import { tempDir } from "../helpers/tmp.js";

const VECTORS_DIR = fileURLToPath(new URL("../vectors/", import.meta.url));
const VECTORS_FILE = join(VECTORS_DIR, "identity-v1.json");
const PYTHON_SCRIPT = join(VECTORS_DIR, "verify_identity_vectors.py");
const JCS_DIR = join(VECTORS_DIR, "jcs");

interface Vector {
  name: string;
  request: InvocationRequest;
  options: IdentityOptions;
  manifest: Manifest;
  id: string;
}

const fileText = readFileSync(VECTORS_FILE, "utf8");
const vectors = JSON.parse(fileText) as Vector[];
const byName = new Map(vectors.map((v) => [v.name, v]));
const idOf = (name: string): string => {
  const v = byName.get(name);
  if (v === undefined) throw new Error(`no vector named ${name}`);
  return v.id;
};

describe("identity-v1.json golden vectors", () => {
  it("is a well-formed, ASCII-only file of uniquely named vectors", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(16);
    expect(byName.size).toBe(vectors.length);
    // ASCII-only: lone surrogates, U+2028 and decomposed text are \u escapes,
    // so no editor or git filter can silently rewrite them.
    expect(/^[\n\x20-\x7e]*$/.test(fileText)).toBe(true);
    expect(fileText).toContain("broken \\ud83d pair");
    expect(fileText).toContain("broken \\ude00 pair");
    expect(fileText).toContain('"negzero": -0');
    for (const v of vectors) {
      expect(v.id, v.name).toMatch(/^[0-9a-f]{64}$/);
      // Machine-dependent roots are pinned, so the vectors reproduce anywhere.
      expect(typeof v.options.homeDir, v.name).toBe("string");
      expect(Array.isArray(v.options.tmpDirs), v.name).toBe(true);
    }
  });

  it.each(vectors.map((v) => [v.name, v] as const))("%s: manifest and id", (_name, v) => {
    const manifest = invocationManifest(v.request, v.options);
    expect(manifest).toStrictEqual(v.manifest);
    expect(canonicalJson(manifest as unknown as CanonicalValue)).toBe(
      canonicalJson(v.manifest as unknown as CanonicalValue),
    );
    expect(invocationIdentity(v.request, v.options)).toBe(v.id);
    // The recipe alone (manifest -> id), independent of normalization.
    expect(manifestIdentity(v.manifest)).toBe(v.id);
  });

  it("keeps -0 in the request and manifest, and hashes it as 0", () => {
    const v = byName.get("numbers")!;
    expect(Object.is(v.request.params?.negzero, -0)).toBe(true);
    expect(Object.is(modelOf(v.manifest).params?.negzero, -0)).toBe(true);
    expect(new TextDecoder().decode(manifestBytes(v.manifest))).toContain('"negzero":0,');
  });

  it("gives one id to requests that differ only in noise", () => {
    const same = [
      ["plain", "extra-fields-ignored", "whitespace-layout", "params-empty-object", "params-null"],
      ["plain", "attempt-0"],
      ["unicode-nfc-composed", "unicode-nfc-decomposed"],
      ["posix-roots", "posix-roots-other-machine"],
      ["params-nested-key-order", "params-nested-key-order-reversed"],
      ["inputs-unsorted-with-duplicates", "inputs-other-order"],
      ["model-null", "model-empty-string", "model-absent"],
      ["task-absent", "task-null"],
    ];
    for (const group of same) {
      expect(new Set(group.map(idOf)).size, group.join(" = ")).toBe(1);
    }
  });

  it("gives different ids to requests that differ in anything else", () => {
    const distinct = [
      ["lone-high-surrogate", "lone-low-surrogate", "replacement-character"],
      ["attempt-0", "attempt-1", "attempt-7"],
      ["inputs-unsorted-with-duplicates", "inputs-without-duplicate"],
      ["inputs-two-hashes", "inputs-one-concatenated-hash"],
      ["task-absent", "task-present"],
    ];
    for (const group of distinct) {
      expect(new Set(group.map(idOf)).size, group.join(" != ")).toBe(group.length);
    }
  });
});

describe("the pre-image is always JSON", () => {
  it("canonical text of every vector parses back to the same canonical text", () => {
    for (const v of vectors) {
      const text = canonicalJson(v.manifest as unknown as CanonicalValue);
      expect(canonicalJson(JSON.parse(text)), v.name).toBe(text);
    }
  });

  it("refuses array holes in params (they would print as `[,1]`, which is not JSON)", () => {
    const holes: unknown[] = [];
    holes[1] = 1;
    expect(() =>
      invocationManifest(
        { role: "r", prompt: "p", params: { a: holes } },
        { homeDir: "/home/alice", tmpDirs: ["/tmp"] },
      ),
    ).toThrow(/params\.a\[0\] is undefined/);
  });
});

/** python3 on PATH, or undefined. */
function findPython(): string | undefined {
  const r = spawnSync("python3", ["--version"], { encoding: "utf8" });
  return r.error === undefined && r.status === 0 ? "python3" : undefined;
}

describe("second implementation (Python, stdlib only)", () => {
  const python = findPython();
  const reason = python === undefined ? " (python3 not found on PATH)" : "";
  const required = process.env.CI !== undefined && process.env.CI !== "";

  const run = (...args: string[]) => {
    if (python === undefined) throw new Error("python3 is required in CI to verify the vectors");
    return spawnSync(python, [PYTHON_SCRIPT, ...args], { encoding: "utf8", timeout: 20_000 });
  };

  it.skipIf(python === undefined && !required)(
    `verify_identity_vectors.py reproduces every vector${reason}`,
    () => {
      const r = run();
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      const lines = r.stdout.trimEnd().split("\n");
      expect(lines).toHaveLength(vectors.length + 1);
      vectors.forEach((v, i) => {
        expect(lines[i]).toBe(`ok   ${v.id.slice(0, 12)} ${v.name}`);
      });
      expect(lines.at(-1)).toBe(
        `${vectors.length}/${vectors.length} vectors reproduced (identity-v1.json)`,
      );
    },
  );

  it.skipIf(python === undefined && !required)(
    `verify_identity_vectors.py fails on a tampered manifest${reason}`,
    () => {
      const dir = tempDir("vectors");
      const tampered = structuredClone(vectors);
      tampered[0]!.manifest.attempt = 1;
      const file = join(dir, "tampered.json");
      writeFileSync(file, JSON.stringify(tampered));
      const r = run(file);
      expect(r.status).toBe(1);
      expect(r.stdout).toContain(`FAIL `);
      expect(r.stdout).toContain(`${vectors.length - 1}/${vectors.length} vectors reproduced`);
    },
  );
});

/** A double from its IEEE 754 bits, as RFC 8785 Appendix B lists them. */
function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

const hexBytes = (s: string): Uint8Array =>
  Uint8Array.from(s.trim().split(/\s+/), (b) => Number.parseInt(b, 16));

describe("canonicalJson against RFC 8785", () => {
  // RFC 8785 Appendix B, "Number Serialization Samples" (finite rows).
  const APPENDIX_B: [string, string][] = [
    ["0000000000000000", "0"],
    ["8000000000000000", "0"],
    ["0000000000000001", "5e-324"],
    ["8000000000000001", "-5e-324"],
    ["7fefffffffffffff", "1.7976931348623157e+308"],
    ["ffefffffffffffff", "-1.7976931348623157e+308"],
    ["4340000000000000", "9007199254740992"],
    ["c340000000000000", "-9007199254740992"],
    ["4430000000000000", "295147905179352830000"],
    ["44b52d02c7e14af5", "9.999999999999997e+22"],
    ["44b52d02c7e14af6", "1e+23"],
    ["44b52d02c7e14af7", "1.0000000000000001e+23"],
    ["444b1ae4d6e2ef4e", "999999999999999700000"],
    ["444b1ae4d6e2ef4f", "999999999999999900000"],
    ["444b1ae4d6e2ef50", "1e+21"],
    ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
    ["3eb0c6f7a0b5ed8d", "0.000001"],
    ["41b3de4355555553", "333333333.3333332"],
    ["41b3de4355555554", "333333333.33333325"],
    ["41b3de4355555555", "333333333.3333333"],
    ["41b3de4355555556", "333333333.3333334"],
    ["41b3de4355555557", "333333333.33333343"],
    ["becbf647612f3696", "-0.0000033333333333333333"],
    ["43143ff3c1cb0959", "1424953923781206.2"],
  ];

  it.each(APPENDIX_B)("Appendix B: %s -> %s", (bits, expected) => {
    expect(canonicalJson(fromBits(bits))).toBe(expected);
  });

  it.each([
    ["7fffffffffffffff", "NaN"],
    ["7ff0000000000000", "Infinity"],
    ["fff0000000000000", "-Infinity"],
  ])("Appendix B: %s (%s) is an error", (bits) => {
    expect(() => canonicalJson(fromBits(bits))).toThrow(TypeError);
  });

  it("§3.2.3: sorts property names by UTF-16 code units", () => {
    const input = String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`;
    const expected =
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control",' +
      '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
      '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
    expect(canonicalJson(JSON.parse(input))).toBe(expected);
  });

  it("§3.2.2 / §3.2.4: the sample object gives exactly the RFC's UTF-8 bytes", () => {
    const input = String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`;
    const text = canonicalJson(JSON.parse(input));
    expect(text).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
    expect(wtf8(text)).toEqual(
      hexBytes(`
        7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72
        75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a
        5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
        65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37
        5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30
        30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d`),
    );
  });

  // cyberphone/json-canonicalization testdata (Apache-2.0), see jcs/README.md.
  const fixtures = readdirSync(join(JCS_DIR, "output")).filter((f) => f.endsWith(".json"));

  it("has the reference test data", () => {
    expect(fixtures.sort()).toEqual([
      "french.json",
      "structures.json",
      "unicode.json",
      "values.json",
      "weird.json",
    ]);
  });

  it.each(fixtures)("testdata %s: input canonicalizes to the output bytes", (file) => {
    const input = readFileSync(join(JCS_DIR, "input", file), "utf8");
    const output = readFileSync(join(JCS_DIR, "output", file));
    expect(Buffer.from(wtf8(canonicalJson(JSON.parse(input))))).toEqual(output);
  });
});
