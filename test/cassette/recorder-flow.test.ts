/**
 * The recorder on a cassette, end to end: record in auto mode, replay with
 * zero upstream calls, misses that explain themselves, stable re-records,
 * stream-shaped responses.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { createRecorder, type Mode, ReplayMissError } from "../../src/index.js";
import { upstream } from "../helpers/upstream.js";
import { MACHINE, tempDir } from "./helpers.js";

const dir = tempDir("cassette-flow");

async function session<T>(
  path: string,
  mode: Mode,
  body: (r: ReturnType<typeof createRecorder>) => Promise<T>,
): Promise<T> {
  const store = cassetteStore(path, { parseCache: false });
  const recorder = createRecorder({
    store,
    mode,
    identity: MACHINE,
    rerecordHint: "RERECORD-HINT",
  });
  try {
    return await body(recorder);
  } finally {
    await recorder.close();
    await store.close();
  }
}

const req = (prompt: string) => ({ role: "planner", model: "gpt-5", prompt, task: "T-1" });

describe("recorder on a cassette", () => {
  it("records in auto mode, then replays in replay mode with zero upstream calls", async () => {
    const path = join(dir, "flow.yaml");
    const live = upstream();
    const recorded = await session(path, "auto", (r) =>
      r.run(async () => [
        await r.call(req("plan A"), live.fn),
        await r.call(req("plan A"), live.fn), // occurrence 1: its own entry
        await r.call(req("plan B"), live.fn),
      ]),
    );
    expect(live.calls).toBe(3);
    const replay = upstream();
    const replayed = await session(path, "replay", (r) =>
      r.run(async () => [
        await r.call(req("plan A"), replay.fn),
        await r.call(req("plan A"), replay.fn),
        await r.call(req("plan B"), replay.fn),
      ]),
    );
    expect(replay.calls).toBe(0);
    expect(replayed).toStrictEqual(recorded);
    expect(recorded.map((x) => x.text)).toStrictEqual(["answer 1", "answer 2", "answer 3"]);
  });

  it("a replay miss shows the nearest entries and says when the entry was already consumed", async () => {
    const path = join(dir, "miss.yaml");
    await session(path, "auto", (r) =>
      r.run(async () => {
        await r.call(req("Summarize the release notes"), upstream().fn);
      }),
    );
    // Called twice in one run, recorded once: the second is a miss, never a silent replay.
    const consumed = await session(path, "replay", (r) =>
      r.run(async () => {
        await r.call(req("Summarize the release notes"), upstream().fn);
        return r.call(req("Summarize the release notes"), upstream().fn).catch((e: unknown) => e);
      }),
    );
    expect(consumed).toBeInstanceOf(ReplayMissError);
    expect((consumed as ReplayMissError).recordedOccurrences).toStrictEqual([0]);
    expect((consumed as ReplayMissError).message).toMatch(/already consumed/);
    expect((consumed as ReplayMissError).message).toMatch(/RERECORD-HINT/);
    expect((consumed as ReplayMissError).store).toBe(`cassette://${path}`);

    const nearest = await session(path, "replay", (r) =>
      r.call(req("Summarize the release note"), upstream().fn).catch((e: unknown) => e),
    );
    expect(nearest).toBeInstanceOf(ReplayMissError);
    const miss = nearest as ReplayMissError;
    expect(miss.nearest).toHaveLength(1);
    expect(miss.nearest[0]!.diffs.map((d) => d.field)).toStrictEqual(["prompt"]);
    expect(miss.message).toMatch(/Nearest 1: .* differs in:/);
  });

  it("re-recording an unchanged response leaves the file byte-identical", async () => {
    const path = join(dir, "stable.yaml");
    const fixed = async () => ({ text: "the same answer", finish_reason: "stop" });
    const record = (mode: Mode, verdict: boolean) =>
      session(path, mode, (r) =>
        r.run(
          async () => {
            await r.call(req("plan A"), fixed);
            if (verdict) await r.verdict(r.last!.id, "accepted", { reason: "looks right" });
            await r.call(req("plan B"), fixed);
          },
          { runId: "stable-run" },
        ),
      );
    await record("record", true);
    const first = readFileSync(path);
    await new Promise((resolve) => setTimeout(resolve, 20)); // a later recordedAt, durationMs
    await record("record", true);
    expect(readFileSync(path).equals(first)).toBe(true);
    await record("auto", false);
    expect(readFileSync(path).equals(first)).toBe(true);
  });

  it("a changed response changes only its own lines", async () => {
    const path = join(dir, "changed.yaml");
    const answers: Record<string, string> = {
      "plan A": "alpha",
      "plan B": "beta",
      "plan C": "gamma",
    };
    const record = () =>
      session(path, "record", (r) =>
        r.run(async () => {
          for (const p of ["plan A", "plan B", "plan C"]) {
            await r.call(req(p), async () => ({ text: answers[p] }));
          }
        }),
      );
    await record();
    const before = readFileSync(path, "utf8").split("\n");
    answers["plan B"] = "beta, revised";
    await record();
    const after = readFileSync(path, "utf8").split("\n");
    expect(after).toHaveLength(before.length);
    const changed = before.map((line, i) => [line, after[i]]).filter(([a, b]) => a !== b);
    // The response text, and the recording's own time and duration (which may
    // happen to equal the old one, to the microsecond): nothing else.
    const fields = changed.map(([, b]) => b!.trim().split(":")[0]);
    expect(fields[0]).toBe("text");
    expect(["recordedAt", "durationMs"]).toEqual(expect.arrayContaining(fields.slice(1)));
    expect(fields).toContain("recordedAt");
    expect(changed[0]![1]).toBe("      text: beta, revised");
  });

  it("records and replays stream-shaped responses: same events, same order", async () => {
    const path = join(dir, "stream.yaml");
    const events = [
      { t: 0, data: { delta: "Hel" } },
      { t: 8.25, data: { delta: "lo" } },
      { t: 9, data: { delta: ", world\n" } },
      { t: 31.5, data: "[DONE]" },
    ];
    const streamed = async () => ({ kind: "stream", events });
    await session(path, "auto", (r) => r.call(req("stream it"), streamed));
    const text = readFileSync(path, "utf8");
    expect(text).toContain('        - { t: 31.5, data: "[DONE]" }');
    const live = upstream();
    const replayed = await session(path, "replay", (r) => r.call(req("stream it"), live.fn));
    expect(live.calls).toBe(0);
    expect(replayed).toStrictEqual({ kind: "stream", events });
  });
});
