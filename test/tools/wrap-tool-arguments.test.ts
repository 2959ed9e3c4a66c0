/**
 * Issue 29, item 3: every argument wrapTool's function receives is part of
 * the identity, in a shape that cannot collide. The default mapping used to
 * hash the first argument alone when it was a plain object (dropping the
 * rest) and `{ args: [...] }` otherwise, so `t({ args: [1, 2] })` was `t(1, 2)`.
 */
import { describe, expect, it } from "vitest";
import { createRecorder, wrapTool } from "../../src/index.js";

function counted() {
  const rec = createRecorder({ store: "memory://", mode: "auto" });
  let n = 0;
  const t = wrapTool(
    async (...a: unknown[]) => {
      n++;
      return a;
    },
    { name: "t", recorder: rec, readOnlyHint: true },
  );
  return { rec, t, runs: () => n };
}

describe("wrapTool: the default mapping hashes every argument", () => {
  it("t({ args: [1, 2] }) and t(1, 2) are different calls", async () => {
    const { rec, t, runs } = counted();
    expect(await t({ args: [1, 2] })).toEqual([{ args: [1, 2] }]);
    expect(await t(1, 2)).toEqual([1, 2]);
    expect(runs()).toBe(2);
    await rec.close();
  });

  it('t({ q: "x" }, "asc") and t({ q: "x" }, "desc") are different calls', async () => {
    const { rec, t, runs } = counted();
    expect(await t({ q: "x" }, "asc")).toEqual([{ q: "x" }, "asc"]);
    expect(await t({ q: "x" }, "desc")).toEqual([{ q: "x" }, "desc"]);
    expect(await t({ q: "x" })).toEqual([{ q: "x" }]);
    expect(runs()).toBe(3);
    expect(rec.last?.manifest).toMatchObject({ args: { arguments: [{ q: "x" }] } });
    // The same call again is still a hit.
    await t({ q: "x" }, "asc");
    expect(runs()).toBe(3);
    await rec.close();
  });
});
