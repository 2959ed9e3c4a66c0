/** wrapStep: recorder.wrap fed by the invocation context. */
import { afterEach, describe, expect, it } from "vitest";
import { withInvocation, wrapStep } from "../../src/adapters/index.js";
import { createRecorder, type Recorder } from "../../src/index.js";

const recorders: Recorder[] = [];
afterEach(async () => {
  for (const r of recorders.splice(0)) await r.close();
});
function recorder(): Recorder {
  const r = createRecorder({ store: "memory://", mode: "auto", env: {} });
  recorders.push(r);
  return r;
}

describe("wrapStep", () => {
  it("memoizes a step per arguments, role, task and attempt from the context", async () => {
    const r = recorder();
    let calls = 0;
    const summarize = wrapStep(r, async function summarize(doc: string, words: number) {
      calls++;
      return { summary: `${doc.slice(0, words)} #${calls}` };
    });
    const a = await withInvocation({ role: "summarizer", task: "t" }, () => summarize("abcdef", 3));
    expect(r.last?.manifest).toMatchObject({
      role: "summarizer",
      task: "t",
      attempt: 0,
      params: { ":step": "summarize", args: ["abcdef", 3] },
    });
    expect(
      await withInvocation({ role: "summarizer", task: "t" }, () => summarize("abcdef", 3)),
    ).toEqual(a);
    await withInvocation({ role: "summarizer", task: "t", attempt: 1 }, () =>
      summarize("abcdef", 3),
    );
    await summarize("abcdef", 3); // no scope: role fn:summarize
    expect(r.last?.manifest.role).toBe("fn:summarize");
    expect(calls).toBe(3);
  });

  it("never lets two steps with the same arguments share a recording", async () => {
    const r = recorder();
    const up = wrapStep(r, async (s: string) => s.toUpperCase(), { name: "upper" });
    const low = wrapStep(r, async (s: string) => s.toLowerCase(), { name: "lower" });
    expect(await withInvocation({ role: "x" }, () => up("Ab"))).toBe("AB");
    expect(await withInvocation({ role: "x" }, () => low("Ab"))).toBe("ab");
  });

  it("takes prompt, model and params from toRequest", async () => {
    const r = recorder();
    const ask = wrapStep(r, async (q: string) => `answer to ${q}`, {
      name: "ask",
      toRequest: (q) => ({ prompt: q, model: "m", params: { temperature: 0 } }),
    });
    await ask("why?");
    expect(r.last?.manifest).toMatchObject({
      prompt: "why?",
      model: "m",
      params: { ":step": "ask", temperature: 0 },
    });
  });

  it("requires a name for anonymous functions", () => {
    const anonymous = [async () => 1][0]!;
    expect(() => wrapStep(recorder(), anonymous)).toThrow(/name/);
    expect(() => wrapStep(recorder(), anonymous, { name: "one" })).not.toThrow();
  });
});
