/**
 * Run a Node script as a child process and collect what it printed: the
 * bench smoke tests run `bench/…` entry points this way, as `npm run
 * bench…` would, so a bench's own process setup (forks, env reads at
 * import) is what is tested.
 */
import { spawn } from "node:child_process";

export interface NodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `node <args>` in `cwd` with `env` (the whole environment, not merged);
 * resolves once it has exited and its output streams have closed (`close`,
 * not `exit`, which can come before the last of its output is read).
 */
export function runNode(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
