/**
 * What the normalization resolves once instead of per call (the default tmp
 * directories, the options of one request): a changed environment or a
 * changed option must always give the fresh answer, and a request's
 * prepared normalization must give exactly what per-string calls give.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { invocationManifest, requestRulesFired } from "../../src/identity/index.js";
import {
  explainNormalization,
  type NormalizeOptions,
  normalizePrompt,
} from "../../src/normalize/index.js";
import { prepareNormalizer } from "../../src/normalize/normalize.js";

const TMP_VARS = ["TMPDIR", "TMP", "TEMP"] as const;
const saved = Object.fromEntries(TMP_VARS.map((k) => [k, process.env[k]]));

function setEnv(values: Partial<Record<(typeof TMP_VARS)[number], string>>): void {
  for (const k of TMP_VARS) {
    if (values[k] === undefined) delete process.env[k];
    else process.env[k] = values[k];
  }
}

afterEach(() => {
  for (const k of TMP_VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe.skipIf(process.platform === "win32")("the default tmp directories", () => {
  it("follow TMPDIR, TMP and TEMP as they change, call after call", () => {
    setEnv({ TMPDIR: "/q8-tmp-one" });
    expect(normalizePrompt("at /q8-tmp-one/a")).toBe("at {tmp}/a");
    setEnv({ TMPDIR: "/q8-tmp-two" });
    expect(normalizePrompt("at /q8-tmp-two/a")).toBe("at {tmp}/a");
    expect(normalizePrompt("at /q8-tmp-one/a")).toBe("at /q8-tmp-one/a");
    setEnv({ TMP: "/q8-tmp-three" });
    expect(normalizePrompt("at /q8-tmp-three/a")).toBe("at {tmp}/a");
    expect(normalizePrompt("at /q8-tmp-two/a")).toBe("at /q8-tmp-two/a");
    setEnv({ TEMP: "/q8-tmp-four/" });
    expect(normalizePrompt("at /q8-tmp-four/a")).toBe("at {tmp}/a");
    setEnv({});
    expect(normalizePrompt("at /q8-tmp-four/a")).toBe("at /q8-tmp-four/a");
    expect(normalizePrompt("at /tmp/a")).toBe("at {tmp}/a");
  });

  it("are read again for each request, not kept by a request's prepared options", () => {
    const identity = Object.freeze({ homeDir: "/home/u" });
    const req = {
      role: "builder",
      conversation: {
        messages: [{ role: "user", content: "see /q8-tmp-five/x and /q8-tmp-six/y" }],
      },
      task: "in /q8-tmp-six/z",
    };
    setEnv({ TMPDIR: "/q8-tmp-five" });
    const first = invocationManifest(req, identity);
    expect(first.prompt).toContain("{tmp}/x and /q8-tmp-six/y");
    expect(first.task).toBe("in /q8-tmp-six/z");
    setEnv({ TMPDIR: "/q8-tmp-six" });
    const second = invocationManifest(req, identity);
    expect(second.prompt).toContain("/q8-tmp-five/x and {tmp}/y");
    expect(second.task).toBe("in {tmp}/z");
    expect(requestRulesFired(req, identity)["root:tmp"]).toBe(2);
  });
});

describe("a request's options resolved once", () => {
  const choices = {
    projectPath: fc.constantFrom(undefined, "/work/run-7", "/work/run-8"),
    homeDir: fc.constantFrom(undefined, "/home/u", "/home/v"),
    tmpDirs: fc.constantFrom(undefined, ["/tmp"], ["/scratch"]),
    roots: fc.constantFrom(undefined, { cache: "/var/cache/ci" }),
    disableRules: fc.constantFrom(undefined, ["uuid"], ["root:home", "whitespace"]),
    secrets: fc.constantFrom(undefined, false as const, { env: { MY_TOKEN: "q8-tok3n-abcdef12" } }),
  };
  const text = fc
    .array(
      fc.constantFrom(
        "/work/run-7/a",
        "/work/run-8/b",
        "/home/u/c",
        "/home/v/d",
        "/tmp/e",
        "/scratch/f",
        "/var/cache/ci/g",
        "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
        "2026-09-09T10:00:00Z",
        "q8-tok3n-abcdef12",
        "  \n ",
        "word",
        " ",
      ),
      { maxLength: 8 },
    )
    .map((parts) => parts.join(""));

  it("normalize and explain each string as the per-string calls do, under every option set", () => {
    fc.assert(
      fc.property(
        fc.record(choices),
        fc.array(text, { minLength: 1, maxLength: 4 }),
        (o, strings) => {
          const opts = o as NormalizeOptions;
          const prepared = prepareNormalizer(opts);
          for (const s of strings) {
            expect(prepared.normalize(s)).toBe(normalizePrompt(s, opts));
            expect(prepared.explain(s)).toEqual(explainNormalization(s, opts));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("give each request its own options: a changed option gives the fresh result", () => {
    const req = {
      role: "r",
      conversation: [{ content: "/home/u/a and /home/v/b" }],
      task: "/home/v/c",
    };
    const u = invocationManifest(req, { homeDir: "/home/u" });
    const v = invocationManifest(req, { homeDir: "/home/v" });
    expect(u.prompt).toBe('[{"content":"{home}/a and /home/v/b"}]');
    expect(u.task).toBe("/home/v/c");
    expect(v.prompt).toBe('[{"content":"/home/u/a and {home}/b"}]');
    expect(v.task).toBe("{home}/c");
    const off = invocationManifest(req, { homeDir: "/home/v", disableRules: ["root:home"] });
    expect(off.prompt).toBe('[{"content":"/home/u/a and /home/v/b"}]');
  });

  it("report a bad conversation before bad options, as the per-string calls did", () => {
    const bad = { role: "r", conversation: { n: 1n } };
    expect(() => invocationManifest(bad, { disableRules: ["nope"] })).toThrow(
      "request.conversation.n is a bigint",
    );
    expect(() =>
      invocationManifest({ role: "r", conversation: { s: "x" } }, { disableRules: ["nope"] }),
    ).toThrow('disableRules[0] is "nope"');
    expect(() => prepareNormalizer({ disableRules: ["nope"] }).normalize(7 as never)).toThrow(
      "text must be a string",
    );
  });
});

describe("the last options' root spellings, kept (src/normalize/roots.ts)", () => {
  it("an options object changed in place between calls gives the fresh answer", () => {
    const tmpDirs = ["/q9-scratch-a"];
    const roots: Record<string, string> = { cache: "/q9-cache-a" };
    const opts = { homeDir: "/home/q9", tmpDirs, roots };
    const text = "/q9-scratch-a/x /q9-scratch-b/x /q9-cache-a/y /q9-cache-b/y /home/q9/z";
    expect(normalizePrompt(text, opts)).toBe(
      "{tmp}/x /q9-scratch-b/x {cache}/y /q9-cache-b/y {home}/z",
    );
    tmpDirs[0] = "/q9-scratch-b";
    expect(normalizePrompt(text, opts)).toBe(
      "/q9-scratch-a/x {tmp}/x {cache}/y /q9-cache-b/y {home}/z",
    );
    roots.cache = "/q9-cache-b";
    expect(normalizePrompt(text, opts)).toBe(
      "/q9-scratch-a/x {tmp}/x /q9-cache-a/y {cache}/y {home}/z",
    );
    roots.extra = "/q9-cache-a";
    expect(normalizePrompt(text, opts)).toBe(
      "/q9-scratch-a/x {tmp}/x {extra}/y {cache}/y {home}/z",
    );
    delete roots.extra;
    tmpDirs.push("/q9-scratch-a");
    expect(normalizePrompt(text, opts)).toBe("{tmp}/x {tmp}/x /q9-cache-a/y {cache}/y {home}/z");
    opts.homeDir = "/home/other";
    expect(normalizePrompt(text, opts)).toBe("{tmp}/x {tmp}/x /q9-cache-a/y {cache}/y /home/q9/z");
  });

  it("equal options in different objects, and alternating options, give each their own answer", () => {
    const a = { homeDir: "/home/qa", tmpDirs: ["/tmp"] };
    const b = { homeDir: "/home/qb", tmpDirs: ["/tmp"] };
    for (let i = 0; i < 3; i++) {
      expect(normalizePrompt("/home/qa/1 /home/qb/2", { ...a })).toBe("{home}/1 /home/qb/2");
      expect(normalizePrompt("/home/qa/1 /home/qb/2", b)).toBe("/home/qa/1 {home}/2");
    }
  });
});
