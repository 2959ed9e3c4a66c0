/**
 * What the Jest and node:test helper suites share: a temp project on the
 * built package whose one test file makes model calls with an OpenAI client
 * created WITHOUT our fetch (withCassette's global mode), and a way to run
 * the real runner on it as a child process.
 */
import { execFile } from "node:child_process";
import { builtProject } from "../helpers/built-project.js";

/** The test file: `CALLS` chat calls (prompts q1, q2, …) in the test "planner plans". */
export function plannerTest(
  helper: "jest" | "node-test",
  head: string,
  wrap: (body: string) => string,
): string {
  return `${head}
import OpenAI from "openai";
import { withCassette } from "invocache/${helper}";
${wrap(`withCassette({ global: true }, async () => {
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: process.env.PROVIDER_URL + "/v1", maxRetries: 0 });
    for (let i = 1; i <= Number(process.env.CALLS ?? 1); i++) {
      const r = await openai.chat.completions.create({ model: "gpt-fake", messages: [{ role: "user", content: "q" + i }] });
      if (!/reply/.test(r.choices[0].message.content)) throw new Error("not a reply");
    }
  })`)}
`;
}

export function project(label: string, files: Record<string, string>): string {
  return builtProject(label, ["openai"], files);
}

/** Run a command in `cwd`; its exit code and both outputs (never throws on a failing run). */
export function runChild(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd, encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, output: `${stdout}\n${stderr}` });
      },
    );
  });
}
