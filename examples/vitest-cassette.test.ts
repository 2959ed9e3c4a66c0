/**
 * Testing an agent step against recorded model calls, with `invocache/vitest`.
 *
 * Each test gets its own cassette under cassettes/examples/vitest-cassette/,
 * committed to the repository. Locally (mode `auto`) a missing recording is
 * made by calling the model; in CI (mode `replay`) every call must come from
 * the cassette, so CI never makes a live, paid call. Re-record one test with
 * the command a replay miss prints, e.g.
 *   INVOCACHE_MODE=record npx vitest run examples/vitest-cassette.test.ts -t '^…$'
 *
 * The "model vendor" here is a loopback HTTP server speaking a tiny
 * OpenAI-like protocol, so the example runs offline.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Recorder } from "../src/index.js";
import { withCassette } from "../src/testing/vitest.js"; // in your project: "invocache/vitest"

let server: Server;
let baseUrl = "";
let upstreamCalls = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      upstreamCalls++;
      const { prompt, stream } = JSON.parse(body) as { prompt: string; stream?: boolean };
      const text = prompt.includes("Review")
        ? prompt.includes("attempt 1")
          ? "ACCEPT: the plan covers tests."
          : "REJECT: the plan has no tests."
        : `1. Read the code\n2. Change it\n${prompt.includes("tests") ? "3. Add tests\n" : ""}`;
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify(
          stream
            ? {
                kind: "stream",
                events: text.split(/(?<=\n)/).map((data, i) => ({ t: i * 10, data })),
              }
            : { text, usage: { input_tokens: prompt.length, output_tokens: text.length } },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** One model call through the recorder: the request is the identity, the fetch is the upstream. */
async function complete(
  recorder: Recorder,
  role: string,
  prompt: string,
  attempt = 0,
  stream = false,
) {
  return recorder.call(
    { role, model: "example-model-1", prompt, params: stream ? { stream } : {} },
    async () => {
      const res = await fetch(`${baseUrl}/v1/complete`, {
        method: "POST",
        body: JSON.stringify({ prompt, stream }),
      });
      return (await res.json()) as Record<string, unknown>;
    },
    { attempt },
  );
}

describe("planner and reviewer", () => {
  it(
    "replans after the reviewer rejects the first plan",
    withCassette(async ({ recorder, mode }) => {
      const before = upstreamCalls;
      const plan0 = (await complete(recorder, "planner", "Plan: add a --json flag")) as {
        text: string;
      };
      const review0 = (await complete(
        recorder,
        "reviewer",
        `Review attempt 0:\n${plan0.text}`,
      )) as { text: string };
      expect(review0.text).toMatch(/^REJECT/);
      // A retry after a rejection is attempt 1: a new identity, never the rejected output.
      const plan1 = (await complete(
        recorder,
        "planner",
        "Plan: add a --json flag, with tests",
        1,
      )) as { text: string };
      const review1 = (await complete(
        recorder,
        "reviewer",
        `Review attempt 1:\n${plan1.text}`,
      )) as { text: string };
      expect(review1.text).toMatch(/^ACCEPT/);
      if (mode === "replay") expect(upstreamCalls).toBe(before); // CI: all from the cassette
    }),
  );

  it(
    "streams the plan: the same chunks, in the same order",
    withCassette(async ({ recorder, mode }) => {
      const before = upstreamCalls;
      const out = (await complete(
        recorder,
        "planner",
        "Plan: add a --json flag, with tests",
        0,
        true,
      )) as {
        events: Array<{ t: number; data: string }>;
      };
      expect(out.events.map((e) => e.data).join("")).toBe(
        "1. Read the code\n2. Change it\n3. Add tests\n",
      );
      if (mode === "replay") expect(upstreamCalls).toBe(before);
    }),
  );
});
