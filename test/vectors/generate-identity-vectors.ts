/**
 * Writes test/vectors/identity-v1.json, the golden vectors of identity recipe
 * v1 (docs/identity.md). Run it by hand, only when adding vectors:
 *
 *   npx tsx test/vectors/generate-identity-vectors.ts
 *
 * The committed JSON is the truth: the tests compare the implementation with
 * the file and never regenerate it. If this script changes an existing `id`,
 * the recipe changed, and that is recipe v2 (a new domain tag), not an update.
 *
 * The file is written ASCII-only: every character outside printable ASCII is a
 * `\uXXXX` escape, so lone surrogates, control characters, U+2028 and the
 * decomposed-vs-composed inputs survive editors, git filters and copy-paste.
 * `-0` is written as `-0` (JSON.stringify would print `0`).
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type IdentityOptions,
  type InvocationRequest,
  invocationIdentity,
  invocationManifest,
} from "../../src/identity/index.js";

/** Machine-dependent roots are pinned, so the vectors reproduce anywhere. */
const PINNED = { homeDir: "/home/alice", tmpDirs: ["/tmp"] } as const;

interface Case {
  name: string;
  request: InvocationRequest;
  options: IdentityOptions;
}

const H = {
  a: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  b: "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
  c: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
};

const base = {
  role: "builder",
  model: "gpt-5",
  task: "Implement the parser",
  prompt: "Write src/parser.ts from the grammar in docs/grammar.md.",
};

const nested = {
  tools: [
    { name: "read_file", parameters: { type: "object", required: ["path"] } },
    { name: "write_file", parameters: { required: ["path", "content"], type: "object" } },
  ],
  response_format: { type: "json_schema", strict: true, schema: null },
  stop: ["\n\n", "END"],
  // UTF-16 order puts U+1F600 (\ud83d\ude00) before U+FF61; code point order would not.
  "\uff61": "halfwidth ideographic full stop",
  "\ud83d\ude00": "grinning face",
  // Keys are not normalized: composed and decomposed are two different keys.
  "\u00e9": "composed",
  "e\u0301": "decomposed",
  Z: 1,
  a: 2,
  "": "empty key",
  "10": "ten",
  "2": "two",
  // An own member named __proto__ (computed key), not the object's prototype.
  ["__proto__"]: "an ordinary member",
};

/** Same members as `nested`, inserted in the reverse order, recursively. */
function reversed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversed);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).reverse()) {
      Object.defineProperty(out, k, {
        value: reversed((v as Record<string, unknown>)[k]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return v;
}

const cases: Case[] = [
  { name: "plain", request: { ...base }, options: { ...PINNED } },
  {
    name: "extra-fields-ignored",
    request: {
      ...base,
      cwd: "/somewhere/else",
      sessionId: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
      startedAt: "2026-09-09T10:00:00Z",
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    },
    options: { ...PINNED },
  },
  {
    name: "whitespace-layout",
    request: {
      ...base,
      prompt: "  Write src/parser.ts\r\nfrom the grammar\tin   docs/grammar.md.\n\n",
    },
    options: { ...PINNED },
  },
  {
    name: "unicode-nfc-composed",
    request: { role: "writer", prompt: "R\u00e9sum\u00e9 for the caf\u00e9, na\u00efve \u1e0d\u0307 \u00c5ngstr\u00f6m" },
    options: { ...PINNED },
  },
  {
    name: "unicode-nfc-decomposed",
    request: {
      role: "writer",
      prompt: "Re\u0301sume\u0301 for the cafe\u0301, nai\u0308ve d\u0307\u0323 \u212bngstro\u0308m",
    },
    options: { ...PINNED },
  },
  {
    name: "astral-characters",
    request: {
      role: "writer",
      model: "gpt-5",
      prompt: "Ship it \ud83d\ude80, reviewed by \ud83d\udc69\ud83c\udffd\u200d\ud83d\udcbb; clef \ud834\udd1e",
      params: {
        "\ud83d\ude80": "rocket key",
        "emoji \ud83d\ude00": ["\ud83d\ude00", "\ud834\udd1e", "\ud83c\uddeb\ud83c\uddf7"],
      },
    },
    options: { ...PINNED },
  },
  {
    name: "lone-high-surrogate",
    request: { role: "writer", prompt: "broken \ud83d pair" },
    options: { ...PINNED },
  },
  {
    name: "lone-low-surrogate",
    request: { role: "writer", prompt: "broken \ude00 pair" },
    options: { ...PINNED },
  },
  {
    name: "replacement-character",
    request: { role: "writer", prompt: "broken \ufffd pair" },
    options: { ...PINNED },
  },
  {
    name: "lone-surrogates-in-params",
    request: {
      role: "writer",
      prompt: "p",
      params: { "\udbff": "\udc00\ud800", mixed: "\ud800\ud83d\ude00\udfff" },
    },
    options: { ...PINNED },
  },
  {
    name: "control-characters",
    request: {
      role: "tester",
      prompt: "nul\u0000 us\u001f del\u007f ls\u2028ps\u2029 nbsp\u00a0end",
      params: {
        "ctl\u0000key\u001f": "v\u0001\u001f\u007f\u2028",
        escapes: "\b\f\n\r\t\"\\/\u000b",
      },
    },
    options: { ...PINNED },
  },
  {
    name: "windows-project-path",
    request: {
      role: "builder",
      model: "gpt-5",
      projectPath: "C:\\Users\\Me\\proj",
      task: "Fix C:\\Users\\Me\\proj\\src\\main.ts",
      prompt:
        'Open C:\\Users\\Me\\proj\\src\\main.ts and c:/users/me/PROJ/README.md; the log says {"file":"C:\\\\Users\\\\Me\\\\proj\\\\out.txt"}; keep C:\\Users\\Me\\proj2\\x and C:\\Users\\Me\\project.',
    },
    options: { ...PINNED },
  },
  {
    name: "posix-roots",
    request: {
      role: "builder",
      model: "gpt-5",
      projectPath: "/work/run-7",
      prompt:
        "Edit /work/run-7/src/a.ts, read /home/alice/.npmrc, write /tmp/out.json and /private/tmp/x.log, cache in /var/cache/ci/pkgs. Keep /home/alice2/x, /home/alice-old/y and /work/run-7-old/z. Session 3F2504E0-4F89-11D3-9A0C-0305E82C3301 started 2026-09-09T14:33:21.5+00:00 (ts=1767225600000), due 2026-09-10. Done in /home/alice.",
    },
    options: { ...PINNED, roots: { cache: "/var/cache/ci" } },
  },
  {
    name: "posix-roots-other-machine",
    request: {
      role: "builder",
      model: "gpt-5",
      projectPath: "/builds/x9/checkout",
      prompt:
        "Edit /builds/x9/checkout/src/a.ts, read /Users/bob/.npmrc, write /var/folders/zz/T/out.json and /private/var/folders/zz/T/x.log, cache in /opt/ci-cache/pkgs. Keep /home/alice2/x, /home/alice-old/y and /work/run-7-old/z. Session 9b2c1e6a-0d5f-4c1e-8a77-2f0e5d9c4b11 started 2027-01-02T03:04:05Z (ts=1798761600123), due 2026-09-10. Done in /Users/bob.",
    },
    options: {
      homeDir: "/Users/bob",
      tmpDirs: ["/var/folders/zz/T"],
      roots: { cache: "/opt/ci-cache" },
    },
  },
  {
    name: "numbers",
    request: {
      role: "sampler",
      prompt: "p",
      params: {
        integers: [0, 1, -1, 7, 42, 9007199254740991, -9007199254740991],
        pow53: 9007199254740992,
        pow60: 1152921504606846976,
        big: 1e21,
        justBelowBig: 999999999999999900000,
        small: 1e-7,
        millionth: 0.000001,
        tenth: 0.1,
        sum: 0.1 + 0.2,
        negzero: -0,
        denormMin: 5e-324,
        max: 1.7976931348623157e308,
        frac: 123456789.123,
        third: 333333333.3333333,
        exps: [1e20, 1e23, 1.5e300, -2.5e-8, 100, 1e-6, 1.25e-5],
        temperature: 0.7,
        top_p: 1,
      },
    },
    options: { ...PINNED },
  },
  {
    name: "params-nested-key-order",
    request: { role: "planner", model: "gpt-5", prompt: "Plan the work.", params: nested },
    options: { ...PINNED },
  },
  {
    name: "params-nested-key-order-reversed",
    request: {
      role: "planner",
      model: "gpt-5",
      prompt: "Plan the work.",
      params: reversed(nested) as Record<string, unknown>,
    },
    options: { ...PINNED },
  },
  {
    name: "params-empty-object",
    request: { ...base, params: {} },
    options: { ...PINNED },
  },
  {
    name: "params-null",
    request: { ...base, params: null },
    options: { ...PINNED },
  },
  {
    name: "inputs-unsorted-with-duplicates",
    request: { ...base },
    options: { ...PINNED, inputArtifactHashes: [H.b, H.a, H.c, H.b] },
  },
  {
    name: "inputs-other-order",
    request: { ...base },
    options: { ...PINNED, inputArtifactHashes: [H.c, H.b, H.b, H.a] },
  },
  {
    name: "inputs-without-duplicate",
    request: { ...base },
    options: { ...PINNED, inputArtifactHashes: [H.a, H.b, H.c] },
  },
  {
    name: "inputs-two-hashes",
    request: { ...base },
    options: { ...PINNED, inputArtifactHashes: ["h1", "h2"] },
  },
  {
    name: "inputs-one-concatenated-hash",
    request: { ...base },
    options: { ...PINNED, inputArtifactHashes: ["h1h2"] },
  },
  {
    name: "inputs-utf16-order",
    request: { ...base },
    options: { ...PINNED, inputArtifactHashes: ["\uff61", "\ud83d\ude00", "z", "Z"] },
  },
  { name: "attempt-0", request: { ...base }, options: { ...PINNED, attempt: 0 } },
  { name: "attempt-1", request: { ...base }, options: { ...PINNED, attempt: 1 } },
  { name: "attempt-7", request: { ...base }, options: { ...PINNED, attempt: 7 } },
  {
    name: "model-null",
    request: { role: "reviewer", prompt: "Review the diff.", model: null },
    options: { ...PINNED },
  },
  {
    name: "model-empty-string",
    request: { role: "reviewer", prompt: "Review the diff.", model: "" },
    options: { ...PINNED },
  },
  {
    name: "model-absent",
    request: { role: "reviewer", prompt: "Review the diff." },
    options: { ...PINNED },
  },
  {
    name: "task-absent",
    request: { role: "reviewer", prompt: "Review the diff.", model: "gpt-5" },
    options: { ...PINNED },
  },
  {
    name: "task-null",
    request: { role: "reviewer", prompt: "Review the diff.", model: "gpt-5", task: null },
    options: { ...PINNED },
  },
  {
    name: "task-present",
    request: {
      role: "reviewer",
      prompt: "Review the diff.",
      model: "gpt-5",
      task: "  Review\n/work/run-7/src/a.ts at 2026-09-09 10:00 ",
      projectPath: "/work/run-7",
    },
    options: { ...PINNED },
  },
  // Normalization table v2: what looks like noise but is the question.
  {
    name: "isbn-13-kept",
    request: { role: "librarian", prompt: "Summarize ISBN 9780262033848, call +4915112345678." },
    options: { ...PINNED },
  },
  {
    name: "isbn-13-kept-other",
    request: { role: "librarian", prompt: "Summarize ISBN 9780131103627, call +4915112345678." },
    options: { ...PINNED },
  },
  {
    name: "epoch-millis-templated",
    request: { role: "ops", prompt: "Logs of run-1757428401123 since 1767225600000 (ratio 0.1767225600000)" },
    options: { ...PINNED },
  },
  {
    name: "md5-kept-uuid-templated",
    request: {
      role: "verifier",
      prompt: "md5 d41d8cd98f00b204e9800998ecf8427e of upload 1b4e28ba2fa141d2883f0016d3cca427",
    },
    options: { ...PINNED },
  },
  {
    name: "fenced-code-print-inside-loop",
    request: {
      role: "reviewer",
      prompt: "What does this print?\n\n```python\nfor i in range(3):\n    x = i\n    print(x)\n```\n",
    },
    options: { ...PINNED },
  },
  {
    name: "fenced-code-print-after-loop",
    request: {
      role: "reviewer",
      prompt: "What does this print?\r\n\r\n```python\r\nfor i in range(3):\r\n    x = i\r\nprint(x)   \r\n```",
    },
    options: { ...PINNED },
  },
  {
    name: "impossible-datetimes-kept",
    request: {
      role: "scheduler",
      prompt: "Not instants: 2026-02-30T10:00:00Z, 2026-09-09 24:59, 2026-09-09T10:00+05:60; one is: 2024-02-29T23:59:60Z",
    },
    options: { ...PINNED },
  },
  {
    name: "epoch-millis-rule-off",
    request: { role: "ops", prompt: "order 1767225600000" },
    options: { ...PINNED, disableRules: ["epoch-millis"] },
  },
  {
    // 32 K code units and more: invocationIdentity hashes the normalized
    // pieces and never joins them (src/identity/manifest.ts); lone
    // surrogates meet tokens at piece edges, an astral character sits whole.
    name: "long-prompt-pieces",
    request: { ...base, prompt: longPrompt(), projectPath: "/work/run-7" },
    options: { ...PINNED },
  },
];

/** A prompt of about 35 K code units, dense in matches. */
function longPrompt(): string {
  const lines: string[] = [];
  for (let i = 0; i < 330; i++) {
    const ss = String(i % 60).padStart(2, "0");
    lines.push(
      `step ${i}: /work/run-7/src/m${i % 9}.ts "q" \\ at 2026-09-09T10:00:${ss}Z  id 3f2504e0-4f89-11d3-9a0c-0305e82c33${ss} \ud83c\udf89\n`,
    );
  }
  return `${lines.join("")}lone \ud83c2026-09-09T10:00:00Z edge 3f2504e0-4f89-11d3-9a0c-0305e82c3301\udf89 end`;
}

// ---------------------------------------------------------------------------
// An ASCII-only JSON writer that keeps -0 and pretty-prints small arrays inline.

function str(s: string): string {
  // JSON.stringify escapes `"`, `\`, U+0000..U+001F and lone surrogates; the
  // rest of non-ASCII (and DEL) is escaped here.
  return JSON.stringify(s).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function num(n: number): string {
  if (!Number.isFinite(n)) throw new TypeError(`not a JSON number: ${n}`);
  return Object.is(n, -0) ? "-0" : String(n);
}

function write(v: unknown, indent: string): string {
  if (v === null) return "null";
  if (typeof v === "string") return str(v);
  if (typeof v === "number") return num(v);
  if (typeof v === "boolean") return String(v);
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    const flat = v.every((x) => x === null || typeof x !== "object");
    const one = `[${v.map((x) => write(x, inner)).join(", ")}]`;
    if (flat && one.length + indent.length < 100) return one;
    return `[\n${v.map((x) => inner + write(x, inner)).join(",\n")}\n${indent}]`;
  }
  if (typeof v === "object") {
    const keys = Object.keys(v);
    if (keys.length === 0) return "{}";
    const body = keys
      .map((k) => `${inner}${str(k)}: ${write((v as Record<string, unknown>)[k], inner)}`)
      .join(",\n");
    return `{\n${body}\n${indent}}`;
  }
  throw new TypeError(`cannot write a ${typeof v}`);
}

const vectors = cases.map((c) => ({
  name: c.name,
  request: c.request,
  options: c.options,
  manifest: invocationManifest(c.request, c.options),
  id: invocationIdentity(c.request, c.options),
}));

const names = new Set(vectors.map((v) => v.name));
if (names.size !== vectors.length) throw new Error("vector names must be unique");

const out = join(dirname(fileURLToPath(import.meta.url)), "identity-v1.json");
writeFileSync(out, `${write(vectors, "")}\n`);
console.log(`wrote ${vectors.length} vectors to ${out}`);
