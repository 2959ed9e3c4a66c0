#!/usr/bin/env node
/**
 * The `invocache` executable. Everything happens in `runCli`; this file only
 * wires it to the real process.
 */
import { processIo } from "./io.js";
import { runCli } from "./run.js";

// `invocache ls | head`: a closed pipe ends the command quietly.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const code = await runCli(process.argv.slice(2), processIo());
process.exitCode = code;
// Let pending output drain; if a stray handle would keep the process alive, leave anyway.
setTimeout(() => process.exit(code), 2_000).unref();
