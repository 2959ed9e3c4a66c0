/**
 * A deterministic, realistic agent prompt of a given UTF-8 size: prose
 * instructions, fenced code, pretty-printed JSON tool output, shell and log
 * output, stack traces; paths under the project, home, tmp and an extra root;
 * UUIDs, ISO datetimes and epoch millis at the density an agent transcript has
 * (a few hundred matches per 100 KiB), plus the look-alikes the rules must
 * keep (dates, git shas, 10-digit seconds, version numbers, hex constants).
 */
import type { NormalizeOptions } from "../../src/normalize/index.js";

/** The roots the bench prompt is normalized with (explicit, so every machine sees the same text). */
export const PROMPT_ROOTS = {
  project: "/home/dev/work/acme-agent",
  home: "/home/dev",
  tmp: "/tmp",
  cache: "/var/cache/ci",
} as const;

/** The `normalizePrompt` options matching {@link PROMPT_ROOTS}. */
export const PROMPT_OPTIONS: NormalizeOptions = {
  projectPath: PROMPT_ROOTS.project,
  homeDir: PROMPT_ROOTS.home,
  tmpDirs: [PROMPT_ROOTS.tmp],
  roots: { cache: PROMPT_ROOTS.cache },
};

/** mulberry32: a tiny seeded PRNG, so the prompt is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the agent should update build test module function request response cache " +
  "planner builder reviewer gate retry attempt artifact manifest identity " +
  "normalize config value error handler stream token model prompt output input " +
  "file path directory change diff patch commit branch merge check lint type " +
  "schema field record replay store entry verdict run scope café naïve — → ✓"
).split(" ");

const FILES = [
  "src/index.ts",
  "src/recorder/recorder.ts",
  "src/store/sqlite.ts",
  "test/recorder.test.ts",
  "package.json",
  "docs/identity.md",
  "src/adapters/fetch.ts",
];

/** Build a prompt of `bytes` UTF-8 bytes (a few less when the cut falls inside a character). */
export function buildPrompt(bytes: number, seed = 1): string {
  const rnd = prng(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const hex = (n: number) => {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[int(16)];
    return s;
  };
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
  const pad = (n: number) => String(n).padStart(2, "0");
  const iso = () =>
    `2026-${pad(1 + int(12))}-${pad(1 + int(28))}T${pad(int(24))}:${pad(int(60))}:${pad(int(60))}.${int(1000)}Z`;
  const epoch = () => String(1_767_225_600_000 + int(30_000_000_000));
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  const projectFile = () => `${PROMPT_ROOTS.project}/${pick(FILES)}`;
  const anyPath = () =>
    pick([
      projectFile(),
      projectFile(),
      `${PROMPT_ROOTS.home}/.npmrc`,
      `${PROMPT_ROOTS.home}/.cache/invocache/${hex(8)}`,
      `${PROMPT_ROOTS.tmp}/invocache-${hex(6)}/out.json`,
      `/private/tmp/vitest-${int(999)}/run.log`,
      `${PROMPT_ROOTS.cache}/npm/_cacache/index-v5`,
      "/usr/lib/node_modules/npm/bin/npm-cli.js",
      `${PROMPT_ROOTS.home}-old/notes.txt`, // not on a boundary: kept
    ]);

  const prose = () =>
    `${words(25 + int(30))}. Look at ${anyPath()} before you ${words(6)}; ` +
    `it is due 2026-09-${pad(1 + int(28))} and version 1.${int(20)}.${int(9)} is pinned.\n\n`;

  const code = () => {
    const lines = ["```ts", `// ${words(8)}`, `import { load } from "./${pick(FILES)}";`];
    for (let i = 0; i < 6 + int(8); i++) {
      const indent = " ".repeat(2 * (1 + int(3)));
      lines.push(
        `${indent}const v${i} = load("${pick(FILES)}", { retries: ${int(5)}, mask: 0x${hex(8)} });`,
      );
    }
    lines.push(`  return { ${words(3).replace(/ /g, ", ")} };`, "```\n\n");
    return lines.join("\n");
  };

  const json = () => {
    const obj = {
      tool: pick(["read_file", "run_tests", "search", "apply_patch"]),
      call_id: uuid(),
      started_at: iso(),
      mtime_ms: Number(epoch()),
      path: anyPath(),
      commit: hex(40),
      exit_code: int(3),
      duration_s: Number((rnd() * 20).toFixed(3)),
      output: `${words(12)}\n${words(10)}`,
      tags: [words(1), words(1)],
    };
    return `Tool result:\n${JSON.stringify(obj, null, 2)}\n\n`;
  };

  const shell = () => {
    const lines = [`$ ls -la ${PROMPT_ROOTS.tmp}/invocache-${hex(6)}`];
    for (let i = 0; i < 4 + int(4); i++) {
      lines.push(
        `-rw-r--r--  1 dev  staff  ${int(99999)}  Sep  ${1 + int(28)} ${pad(int(24))}:${pad(int(60))}  ${words(1)}-${hex(7)}.json`,
      );
    }
    lines.push(`$ npm test  # at ${Math.floor(Number(epoch()) / 1000)}`);
    return `${lines.join("\n")}\n\n`;
  };

  const logs = () => {
    const lines: string[] = [];
    for (let i = 0; i < 3 + int(4); i++) {
      lines.push(
        `[${iso().replace("T", " ")}] ${pick(["INFO", "WARN", "DEBUG"])} request_id=${uuid()} ` +
          `took ${int(900)}ms ts=${epoch()} ${words(5)}`,
      );
    }
    return `${lines.join("\n")}\n\n`;
  };

  const stack = () =>
    [
      `Error: ENOENT: no such file or directory, open '${PROMPT_ROOTS.tmp}/invocache-${hex(6)}/lock'`,
      "    at Object.openSync (node:fs:573:3)",
      `    at readCassette (${projectFile()}:${int(300)}:${int(40)})`,
      `    at file://${PROMPT_ROOTS.project}/node_modules/.pnpm/vitest@4.1.12/dist/runner.js:${int(900)}:${int(40)}`,
      `    at async Promise.all (index ${int(9)})`,
      `    at ${PROMPT_ROOTS.home}/.nvm/versions/node/v20.19.0/lib/node_modules/npm/index.js:${int(99)}:${int(9)}`,
      "\n",
    ].join("\n");

  const sections = [prose, prose, prose, prose, code, code, json, shell, logs, stack];
  let out = "";
  while (Buffer.byteLength(out) < bytes) out += pick(sections)();
  return truncateUtf8(out, bytes);
}

/** The longest prefix of `s` (on a code point boundary) whose UTF-8 size is at most `bytes`. */
function truncateUtf8(s: string, bytes: number): string {
  const buf = Buffer.from(s, "utf8");
  if (buf.length <= bytes) return s;
  let end = bytes;
  // Never cut a multi-byte sequence: back off to the start of the one at the cut.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}
