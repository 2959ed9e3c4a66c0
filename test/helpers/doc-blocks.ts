/**
 * Docs that cannot drift: the fenced code blocks of a markdown file, run as
 * written, and the tests a doc names for what it states ("Tested by:
 * `file › describe › test`"), each checked to exist.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runNode } from "./run-node.js";
import { tempDir } from "./tmp.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface DocBlock {
  /** The fence's language (`ts`, `sh`, `text`, …). */
  readonly lang: string;
  readonly body: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The nearest `##`/`###` heading above it. */
  readonly heading: string;
  /**
   * The name of a `<!-- snippet: NAME -->` marker on the line above the
   * fence: such a snippet is run by its own test (against the framework it
   * needs), not by the generic block runner.
   */
  readonly snippet?: string;
}

/** Every fenced block of `markdown`, in order. */
export function docBlocks(markdown: string): DocBlock[] {
  const out: DocBlock[] = [];
  const lines = markdown.split("\n");
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{2,3} /.test(line)) heading = line.replace(/^#+ /, "");
    const open = /^```(\w*)\s*$/.exec(line);
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const marker = /^<!-- snippet: ([\w-]+) -->$/.exec(lines[start - 1] ?? "");
    out.push({
      lang: open[1] ?? "",
      body: body.join("\n"),
      line: start + 1,
      heading,
      ...(marker === null ? {} : { snippet: marker[1]! }),
    });
  }
  return out;
}

/** The `##` sections of `markdown`: heading and text (subsections included). */
export function docSections(markdown: string): { heading: string; text: string }[] {
  const parts = markdown.split(/^(?=## )/m).slice(1);
  return parts.map((p) => ({ heading: p.split("\n")[0]!.slice(3), text: p }));
}

/** Test references of "Tested by:" lines: `file.test.ts › describe › test`. */
export function testedBy(text: string): string[] {
  const refs: string[] = [];
  for (const m of text.matchAll(/Tested by:?([\s\S]*?)(?:\n\n|$)/g)) {
    for (const r of m[1]!.matchAll(/`([\w./-]+\.test\.ts(?: › [^`]+)?)`/g)) {
      refs.push(r[1]!.replace(/\s*\n\s*/g, " "));
    }
  }
  return refs;
}

/**
 * Why `ref` names no existing test, or undefined when it does: the file
 * exists and holds every name part (a part ending in `…` is a prefix).
 */
export function missingTest(ref: string): string | undefined {
  const [file, ...names] = ref.split(" › ");
  const path = join(ROOT, file!);
  if (!existsSync(path)) return `no file ${file}`;
  const source = readFileSync(path, "utf8");
  for (const name of names) {
    const text = name.endsWith("…") ? name.slice(0, -1) : name;
    if (!source.includes(text)) return `${file} has no "${text}"`;
  }
  return undefined;
}

export interface BlockRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Run a ts block as a module (tsx), `invocache` imports pointing at the
 * source, after `prelude`'s `setup()` (which provides what the snippet
 * leaves to the reader: a client, a request, …) and before its `teardown()`.
 * The working directory is a fresh temp folder.
 */
export function runTsBlock(block: DocBlock, prelude: string): Promise<BlockRun> {
  // Inside node_modules/.cache, so the block's bare imports (openai, ai, …)
  // resolve from the project's node_modules.
  const dir = tempDir("doc-block", undefined, join(ROOT, "node_modules", ".cache"));
  const cwd = tempDir("doc-block-cwd");
  const src = pathToFileURL(join(ROOT, "src")).href;
  const body = block.body
    .replace(/from "invocache\/vitest"/g, `from "${src}/testing/vitest.ts"`)
    .replace(/from "invocache"/g, `from "${src}/index.ts"`);
  writeFileSync(join(dir, "block.mts"), `${body}\n`);
  writeFileSync(
    join(dir, "main.mts"),
    `import { setup, teardown } from ${JSON.stringify(pathToFileURL(prelude).href)};
await setup();
try {
  await import("./block.mts");
} finally {
  await teardown();
}
process.exit(0);
`,
  );
  const tsx = pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
  const env: NodeJS.ProcessEnv = { ...process.env, INVOCACHE_MODE: "auto" };
  delete env.CI;
  return runNode(["--import", tsx, join(dir, "main.mts")], cwd, env).then(
    ({ code, stdout, stderr }) => ({ status: code, stdout, stderr }),
  );
}
