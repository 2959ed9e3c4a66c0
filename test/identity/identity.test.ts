import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, wtf8 } from "../../src/identity/canonical-json.js";
import { manifestIdentity, resolvePrefix } from "../../src/identity/index.js";
import {
  preloadNobleSha256,
  SHA256_BACKEND,
  sha256Hex,
  sha256HexNoble,
} from "../../src/identity/sha256.js";
import {
  AmbiguousIdError,
  explainIdentity,
  hashArtifact,
  type IdentityOptions,
  type InvocationRequest,
  invocationIdentity,
  invocationManifest,
  shortId,
} from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";

const machine: IdentityOptions = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const id = (req: InvocationRequest, opts: IdentityOptions = {}) =>
  invocationIdentity(req, { ...machine, ...opts });
const req: InvocationRequest = {
  role: "builder",
  model: "gpt-5",
  prompt: "Build the app",
  task: "T-1",
};

describe("invocationIdentity", () => {
  it("is 64 lowercase hex and stable", () => {
    expect(id(req)).toMatch(/^[0-9a-f]{64}$/);
    expect(id(req)).toBe(id({ ...req }));
  });

  it("is sha256 of the domain tag and the canonical manifest bytes", () => {
    const m = invocationManifest(req, machine);
    const expected = createHash("sha256")
      .update("invocache/invocation/v1\n")
      .update(canonicalJson(m as never))
      .digest("hex");
    expect(id(req)).toBe(expected);
    expect(manifestIdentity(m)).toBe(expected);
  });

  it("RELOOP: a retry after a gate rejection is a new key (attempt 0 cached, 1 and 2 miss)", () => {
    const cache = new Map<string, string>();
    cache.set(id(req, { attempt: 0 }), "rejected output");
    expect(cache.has(id(req, { attempt: 1 }))).toBe(false);
    expect(cache.has(id(req, { attempt: 2 }))).toBe(false);
    expect(new Set([0, 1, 2].map((attempt) => id(req, { attempt }))).size).toBe(3);
    expect(id(req)).toBe(id(req, { attempt: 0 }));
  });

  it("two runs differing only in workspace path, timestamp and session UUID share an identity", () => {
    const run = (ws: string, at: string, session: string) =>
      id({
        role: "planner",
        model: "gpt-5",
        projectPath: ws,
        prompt: `Plan the work in ${ws}/src (started ${at}, session ${session}).\nOutput to ${ws}/plan.md`,
        task: `Refactor ${ws}/src/db.ts`,
        cwd: ws,
        sessionId: session,
      });
    expect(run("/work/run-1", "2026-09-09T14:33:21Z", "3f2504e0-4f89-11d3-9a0c-0305e82c3301")).toBe(
      run(
        "/tmp/ci/run-982",
        "2026-11-30T08:00:00.123+01:00",
        "9a0c0305-e82c-3301-3f25-04e04f8911d3",
      ),
    );
  });

  it("is independent of the home directory when prompts mention home paths", () => {
    const a = id({ ...req, prompt: "read /home/alice/.config/x" }, { homeDir: "/home/alice" });
    const b = id({ ...req, prompt: "read /Users/bob/.config/x" }, { homeDir: "/Users/bob" });
    expect(a).toBe(b);
  });

  it("changes with every semantic field", () => {
    const base = id(req);
    const variants: [InvocationRequest, IdentityOptions][] = [
      [{ ...req, role: "reviewer" }, {}],
      [{ ...req, model: "gpt-5-mini" }, {}],
      [{ ...req, prompt: "Build the app!" }, {}],
      [{ ...req, task: "T-2" }, {}],
      [{ ...req, params: { temperature: 0.2 } }, {}],
      [req, { inputArtifactHashes: ["sha256:aa"] }],
      [req, { attempt: 1 }],
      [{ ...req, prompt: "read /etc/hosts" }, {}],
    ];
    const ids = variants.map(([r, o]) => id(r, o));
    expect(new Set([base, ...ids]).size).toBe(variants.length + 1);
  });

  it("treats model null, undefined and empty the same; task likewise", () => {
    const { model: _m, task: _t, ...bare } = req;
    expect(id({ ...bare, model: null, task: null })).toBe(id({ ...bare, model: "", task: "" }));
    expect(id({ ...bare, model: undefined })).toBe(id(bare));
  });

  it("never hashes extra fields (cwd, session ids, call time)", () => {
    expect(id({ ...req, cwd: "/x", sessionId: "s-1", calledAt: Date.now() })).toBe(id(req));
  });

  it("ignores input artifact order but not content or multiplicity", () => {
    expect(id(req, { inputArtifactHashes: ["h2", "h1"] })).toBe(
      id(req, { inputArtifactHashes: ["h1", "h2"] }),
    );
    expect(id(req, { inputArtifactHashes: ["h1", "h2"] })).not.toBe(
      id(req, { inputArtifactHashes: ["h1h2"] }),
    );
    expect(id(req, { inputArtifactHashes: ["h1", "h1"] })).not.toBe(
      id(req, { inputArtifactHashes: ["h1"] }),
    );
    expect(id(req, { inputArtifactHashes: [] })).toBe(id(req));
  });

  it("ignores params key order; omits empty params", () => {
    expect(id({ ...req, params: { a: 1, b: { c: [1, 2], d: null } } })).toBe(
      id({ ...req, params: { b: { d: null, c: [1, 2] }, a: 1 } }),
    );
    expect(id({ ...req, params: {} })).toBe(id(req));
    expect(invocationManifest({ ...req, params: {} }, machine)).not.toHaveProperty("params");
    expect(id({ ...req, params: { a: undefined } })).toBe(id(req));
  });

  it("keeps a __proto__ key in params as ordinary data", () => {
    const params = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    const m = invocationManifest({ ...req, params }, machine);
    expect(Object.keys(m.params ?? {})).toEqual(["__proto__"]);
    expect(id({ ...req, params })).not.toBe(id(req));
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it("honours toJSON in params like the wire would (Date becomes its ISO string)", () => {
    const at = new Date("2026-01-01T00:00:00Z");
    expect(invocationManifest({ ...req, params: { at } }, machine).params).toEqual({
      at: "2026-01-01T00:00:00.000Z",
    });
  });

  it("canonicalJson refuses array holes, which are not JSON", () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    expect(() => canonicalJson([1, , 2] as never)).toThrow(/hole/);
  });

  it("encodes lone surrogates losslessly: different strings never share bytes", () => {
    const a = id({ ...req, prompt: "x\ud800" });
    const b = id({ ...req, prompt: "x\udc00" });
    const c = id({ ...req, prompt: "x\ufffd" });
    expect(new Set([a, b, c]).size).toBe(3);
    expect([...wtf8("x\ud800")]).toEqual([0x78, 0xed, 0xa0, 0x80]);
    expect([...wtf8("\ud83d\ude00")]).toEqual([0xf0, 0x9f, 0x98, 0x80]);
  });

  it("rejects bad fields with a TypeError naming them", () => {
    const cases: [unknown, IdentityOptions, RegExp][] = [
      [{ ...req, role: "" }, {}, /request\.role/],
      [{ ...req, role: 3 }, {}, /request\.role/],
      [{ role: "r" }, {}, /request\.prompt/],
      [{ ...req, model: 5 }, {}, /request\.model/],
      [{ ...req, task: {} }, {}, /request\.task/],
      [{ ...req, params: [1] }, {}, /request\.params/],
      [{ ...req, params: { t: Number.NaN } }, {}, /request\.params\.t is NaN/],
      [{ ...req, params: { t: [1, undefined] } }, {}, /request\.params\.t\[1\]/],
      [{ ...req, params: { m: new Map() } }, {}, /request\.params\.m is a Map/],
      [{ ...req, params: { f: () => 1 } }, {}, /request\.params\.f is a function/],
      [{ ...req, params: { b: 1n } }, {}, /request\.params\.b is a bigint/],
      [req, { attempt: -1 }, /attempt must be an integer >= 0/],
      [req, { attempt: 1.5 }, /attempt/],
      [req, { attempt: Number.NaN }, /attempt/],
      [req, { attempt: Number.POSITIVE_INFINITY }, /attempt/],
      [req, { attempt: "1" as unknown as number }, /attempt/],
      [
        req,
        { inputArtifactHashes: "h1" as unknown as string[] },
        /inputArtifactHashes must be an array/,
      ],
      [req, { inputArtifactHashes: ["a", 2 as unknown as string] }, /inputArtifactHashes\[1\]/],
      [null, {}, /request must be an object/],
    ];
    for (const [r, o, msg] of cases) {
      expect(() => id(r as InvocationRequest, o), String(msg)).toThrow(TypeError);
      expect(() => id(r as InvocationRequest, o)).toThrow(msg);
    }
    expect(() => id({ ...req, params: { toJSON: () => "abc" } })).toThrow(/plain object/);
    expect(() => id({ ...req, params: { toJSON: () => [1, 2] } })).toThrow(/plain object/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => id({ ...req, params: { cyclic } })).toThrow(/cycle/);
  });

  it("laws: key order, artifact order, never throws on arbitrary strings", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 300 }),
        fc.string({ unit: "binary", maxLength: 50 }),
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 8 }),
        fc.dictionary(fc.string({ unit: "binary", maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), {
          maxKeys: 6,
        }),
        fc.nat({ max: 5 }),
        (prompt, task, hashes, params, attempt) => {
          const r: InvocationRequest = { role: "r", prompt, task, params };
          const a = id(r, { attempt, inputArtifactHashes: hashes });
          const reversedParams = Object.fromEntries(Object.entries(params).reverse());
          const b = id(
            { task, params: reversedParams, prompt, role: "r" },
            {
              inputArtifactHashes: [...hashes].reverse(),
              attempt,
            },
          );
          expect(a).toBe(b);
          expect(a).toMatch(/^[0-9a-f]{64}$/);
        },
      ),
      { numRuns: 500, seed: 11 },
    );
  });
});

describe("sha256 backends", () => {
  it("uses node:crypto here and agrees with @noble/hashes byte for byte", async () => {
    expect(SHA256_BACKEND).toBe("node:crypto");
    await preloadNobleSha256(); // not loaded where node:crypto is in use
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), fc.uint8Array({ maxLength: 100 }), (a, b) => {
        expect(sha256Hex(a, b)).toBe(sha256HexNoble(a, b));
      }),
      { numRuns: 300, seed: 2 },
    );
    expect(sha256Hex(new TextEncoder().encode("abc"))).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });
});

describe("shortId and resolvePrefix", () => {
  const ids = [
    "3f2a9c0d1b7e44c2aaaa0000000000000000000000000000000000000000aaaa",
    "3f2a9c0d1b7e44c2bbbb0000000000000000000000000000000000000000bbbb",
    "9999000011112222333344445555666677778888999900001111222233334444",
  ];
  it("shortens to 12 hex and rejects non-ids", () => {
    expect(shortId(ids[2]!)).toBe("999900001111");
    expect(() => shortId("xyz")).toThrow(TypeError);
  });
  it("resolves unique prefixes of 8 or more characters, case-insensitively", () => {
    expect(resolvePrefix("99990000", ids)).toBe(ids[2]);
    expect(resolvePrefix("3F2A9C0D1B7E44C2AAAA", ids)).toBe(ids[0]);
    expect(resolvePrefix(ids[1]!, ids)).toBe(ids[1]);
  });
  it("refuses short prefixes and lists candidates when ambiguous", () => {
    expect(() => resolvePrefix("3f2a", ids)).toThrow(RangeError);
    let err: unknown;
    try {
      resolvePrefix("3f2a9c0d", ids);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AmbiguousIdError);
    expect((err as AmbiguousIdError).candidates).toEqual([ids[0], ids[1]]);
    expect((err as Error).message).toContain(ids[0]);
    expect(() => resolvePrefix("deadbeef", ids)).toThrow(/no identity starts with deadbeef/);
  });
});

describe("explainIdentity", () => {
  const m = (r: InvocationRequest, o: IdentityOptions = {}) =>
    invocationManifest(r, { ...machine, ...o });
  it("is empty for equal manifests", () => {
    expect(explainIdentity(m(req), m({ ...req, cwd: "/elsewhere" }))).toEqual([]);
  });
  it("names each differing field with a readable summary", () => {
    const a = m(
      { ...req, params: { temperature: 0.2, tools: [{ name: "a" }] } },
      { attempt: 0, inputArtifactHashes: ["h1"] },
    );
    const b = m(
      {
        ...req,
        model: "gpt-5-mini",
        params: { temperature: 0.7, tools: [{ name: "b" }] },
        prompt: "Build the new app",
      },
      { attempt: 2, inputArtifactHashes: ["h2"] },
    );
    const diffs = explainIdentity(a, b);
    expect(diffs.map((d) => d.field)).toEqual(["attempt", "model", "params", "prompt", "inputs"]);
    expect(diffs[0]!.summary).toBe("attempt: 0 → 2");
    expect(diffs[1]!.summary).toBe('model: "gpt-5" → "gpt-5-mini"');
    expect(diffs[2]!.paths).toEqual([
      "params.temperature: 0.2 → 0.7",
      'params.tools[0].name: "a" → "b"',
    ]);
    expect(diffs[3]!.diff).toContain("{+new +}");
    expect(diffs[4]!.summary).toBe("inputs: -h1, +h2");
  });
  it("reports a difference past the display width, and an element appended to a list", () => {
    const tool = (name: string) => ({ name, description: "d".repeat(100) });
    const a = m({ ...req, params: { tools: [tool("a"), tool("b")] } });
    const b = m({ ...req, params: { tools: [tool("a"), tool("b"), tool("c")] } });
    const [d] = explainIdentity(a, b);
    expect(d!.paths).toHaveLength(1);
    expect(d!.paths![0]).toMatch(/^params\.tools\[2\]: \(absent\) → \{"description"/);
    const c = m({
      ...req,
      params: { tools: [tool("a"), { ...tool("b"), description: `${"d".repeat(99)}e` }] },
    });
    expect(explainIdentity(a, c)[0]!.paths![0]).toMatch(/^params\.tools\[1\]\.description/);
  });
  it("keeps prompt diffs readable and bounded on large, very different prompts", () => {
    const a = m({ ...req, prompt: "alpha ".repeat(20_000) });
    const b = m({ ...req, prompt: "beta ".repeat(20_000) });
    const [d] = explainIdentity(a, b);
    expect(d!.field).toBe("prompt");
    expect(d!.diff!.length).toBeLessThan(2_000);
  });
});

describe("hashArtifact", () => {
  const dir = tempDir("artifact");
  const bytes = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => (i * 31) & 0xff);
  const expected = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

  it("hashes a file path, bytes and a stream to the same sha256:<hex>", async () => {
    const file = join(dir, "a.bin");
    writeFileSync(file, bytes);
    expect(await hashArtifact(file)).toBe(expected);
    expect(await hashArtifact(bytes)).toBe(expected);
    expect(await hashArtifact(Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]))).toBe(
      expected,
    );
  });
  it("hashes an empty file", async () => {
    const file = join(dir, "empty");
    writeFileSync(file, "");
    expect(await hashArtifact(file)).toBe(
      "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
  });
  it("rejects a missing file and bad input clearly", async () => {
    await expect(hashArtifact(join(dir, "missing"))).rejects.toThrow(/ENOENT/);
    await expect(hashArtifact(42 as unknown as string)).rejects.toThrow(TypeError);
    await expect(hashArtifact(Readable.from(["text"]))).rejects.toThrow(/Uint8Array chunks/);
  });
});
