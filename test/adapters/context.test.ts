/** withInvocation: AsyncLocalStorage scopes that merge field by field. */
import { describe, expect, it } from "vitest";
import { currentInvocation, invocationCall, withInvocation } from "../../src/adapters/index.js";

describe("invocation context", () => {
  it("defaults to role 'default' and attempt 0 outside any scope", () => {
    expect(currentInvocation()).toEqual({
      role: "default",
      task: null,
      attempt: 0,
      projectPath: null,
      inputArtifactHashes: [],
    });
  });

  it("merges nested scopes field by field, the inner one winning, and restores the outer", async () => {
    await withInvocation({ role: "builder", task: "t", projectPath: "/p" }, async () => {
      await withInvocation(
        { attempt: 2, inputArtifactHashes: ["sha256:b", "sha256:a"] },
        async () => {
          await new Promise((r) => setTimeout(r, 1)); // survives async hops
          expect(currentInvocation()).toEqual({
            role: "builder",
            task: "t",
            attempt: 2,
            projectPath: "/p",
            inputArtifactHashes: ["sha256:b", "sha256:a"],
          });
          withInvocation({ role: "reviewer", task: null }, () => {
            expect(currentInvocation()).toMatchObject({ role: "reviewer", task: null, attempt: 2 });
          });
        },
      );
      expect(currentInvocation()).toMatchObject({ role: "builder", attempt: 0 });
    });
    expect(currentInvocation().role).toBe("default");
  });

  it("keeps concurrent scopes apart", async () => {
    const seen = await Promise.all(
      [0, 1, 2].map((attempt) =>
        withInvocation({ attempt }, async () => {
          await new Promise((r) => setTimeout(r, 3 - attempt));
          return currentInvocation().attempt;
        }),
      ),
    );
    expect(seen).toEqual([0, 1, 2]);
  });

  it("builds recorder.call arguments: role/task/projectPath in the request, attempt/inputs in the options", () => {
    const [req, opts] = withInvocation(
      { role: "r", task: "t", attempt: 1, projectPath: "/p", inputArtifactHashes: ["sha256:a"] },
      () => invocationCall({ prompt: "p", model: "m", params: { temperature: 0 } }),
    );
    expect(req).toEqual({
      role: "r",
      task: "t",
      projectPath: "/p",
      prompt: "p",
      model: "m",
      params: { temperature: 0 },
    });
    expect(opts).toEqual({ attempt: 1, inputArtifactHashes: ["sha256:a"] });
  });

  it("refuses malformed fields with a TypeError naming them", () => {
    const run = (ctx: object) => () => withInvocation(ctx, () => 0);
    expect(run({ role: "" })).toThrow(/role/);
    expect(run({ attempt: -1 })).toThrow(/attempt/);
    expect(run({ attempt: 1.5 })).toThrow(/attempt/);
    expect(run({ task: 3 })).toThrow(/task/);
    expect(run({ projectPath: {} })).toThrow(/projectPath/);
    expect(run({ inputArtifactHashes: "sha256:a" })).toThrow(/inputArtifactHashes/);
    expect(() => withInvocation(null as never, () => 0)).toThrow(TypeError);
  });
});
