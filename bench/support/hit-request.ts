/**
 * The request every hit-path measurement replays (bench/recorder.bench.ts,
 * bench/scale.ts, bench/support/hit-profile.ts): one definition, so their
 * figures describe the same call.
 */

/** Explicit roots, so every machine normalizes the prompt alike. */
export const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

/** A realistic request: 1 KiB prompt with a path and a timestamp. */
export const req = {
  role: "builder",
  model: "gpt-5",
  prompt: `Implement the parser in /home/u/proj/src/parse.ts as of 2026-09-09T10:00:00Z. ${"Keep the API stable. ".repeat(48)}`,
  params: { temperature: 0.2, max_tokens: 800 },
};

/** A 2 KiB chat-completion-like answer. */
export const response = {
  id: "chatcmpl-1",
  object: "chat.completion",
  model: "gpt-5",
  choices: [
    { index: 0, finish_reason: "stop", message: { role: "assistant", content: "x".repeat(2000) } },
  ],
  usage: { prompt_tokens: 300, completion_tokens: 500, total_tokens: 800 },
};
