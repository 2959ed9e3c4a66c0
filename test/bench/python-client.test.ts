/**
 * Smoke run of bench/python/run.ts (a few calls, no timing verdict): the
 * Python openai client records through the proxy, replays every call with
 * its own answer, and runs against the constant server.
 */
import { describe, expect, it } from "vitest";
import { pythonClientBench } from "../../bench/python/run.js";
import { python, SKIP, SKIP_REASON } from "../python/python-env.js";

describe("bench/python: the Python openai client through the proxy", () => {
  it.skipIf(SKIP)(
    `records, replays and runs beside the constant server${SKIP_REASON}`,
    async () => {
      const r = await pythonClientBench(python(), 5);
      expect(r.calls).toBe(5);
      for (const rate of [r.constant, r.record, r.replay]) expect(rate).toBeGreaterThan(0);
      expect(r.ratio).toBeGreaterThan(0);
    },
    120_000,
  );
});
