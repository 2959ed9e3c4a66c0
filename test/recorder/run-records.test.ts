/**
 * Run records (`<namespace>:run:<runId>`): every run with an explicit id has
 * its own, replayed runs included, with how each step was answered (hit or
 * recorded), written once when the run ends; and a retry's `meta.parent`
 * names the attempt the run actually served before it, even when the retry's
 * prompt carries the gate's feedback.
 */
import { describe, expect, it } from "vitest";
import {
  createRecorder,
  type InvocationRequest,
  type Mode,
  openStore,
  type Recorder,
  type Store,
} from "../../src/index.js";
import { countingStore, writesOf } from "../helpers/counting-store.js";

const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

/** A builder whose retry's prompt carries the reviewer's feedback, as a real pipeline's does. */
async function reloop(r: Recorder, runId: string) {
  return r.run(
    async () => {
      let feedback = "";
      const ids: string[] = [];
      for (let attempt = 0; attempt < 2; attempt++) {
        const req: InvocationRequest = {
          role: "builder",
          model: "gpt-5",
          task: "build the parser",
          prompt: `Build the parser.${feedback}`,
        };
        const out = await r.call(req, async () => ({ text: `draft ${attempt}` }), { attempt });
        const built = r.last!.id;
        // The builder's step also runs a tool, same role, task and attempt: not the builder's attempt.
        await r.call(
          {
            kind: "tool",
            name: "run_tests",
            role: "builder",
            task: "build the parser",
            args: { draft: out.text },
          },
          async () => ({ passed: attempt }),
          { attempt, tool: { idempotentHint: true } },
        );
        ids.push(built);
        const ok = out.text === "draft 1";
        await r.verdict(r.last!.id, ok ? "accepted" : "rejected", {
          ...(ok ? {} : { reason: "no tests" }),
        });
        if (ok) break;
        feedback = "\nThe reviewer said: no tests.";
      }
      return ids;
    },
    { runId },
  );
}

interface StoredRun {
  runId: string;
  calls: string[];
  served: string[];
  verdicts: string[];
}

const recorder = (store: Store, mode: Mode) =>
  createRecorder({ store, mode, identity: machine, namespace: "ns" });

describe("run records", () => {
  it("a replayed run with its own id stores its own record, with hit/miss per step", async () => {
    const store = openStore("memory://");
    const first = await reloop(recorder(store, "auto"), "run-1");
    const second = await reloop(recorder(store, "replay"), "run-2");
    expect(second).toEqual(first);
    const r1 = (await store.get("ns:run:run-1")) as unknown as StoredRun;
    const r2 = (await store.get("ns:run:run-2")) as unknown as StoredRun | undefined;
    expect(r1.calls).toHaveLength(4);
    expect(r1.calls[0]).toBe(`${first[0]}:0`);
    expect(r1.calls[2]).toBe(`${first[1]}:0`);
    expect(r1.served).toEqual(["recorded", "recorded", "recorded", "recorded"]);
    expect(r2).toBeDefined();
    expect(r2!.runId).toBe("run-2");
    expect(r2!.calls).toEqual(r1.calls);
    expect(r2!.served).toEqual(["hit", "hit", "hit", "hit"]);
    expect(r2!.verdicts).toEqual(r1.verdicts);
  });

  it("a replayed run of hits writes exactly one key, once, when the run ends: its record", async () => {
    const counting = countingStore(openStore("memory://"));
    await reloop(recorder(counting.store, "auto"), "run-1");
    counting.reset();
    const replay = recorder(counting.store, "replay");
    const sets: string[] = [];
    const set = counting.store.set.bind(counting.store);
    counting.store.set = (key, value) => {
      sets.push(key);
      return set(key, value);
    };
    await reloop(replay, "run-2");
    expect(replay.stats.hits).toBe(4);
    expect(sets).toEqual(["ns:run:run-2"]);
    expect(writesOf(counting.counts)).toBe(1);
  });

  it("replaying a stored run id with the same trajectory writes nothing and keeps the record", async () => {
    const store = openStore("memory://");
    await reloop(recorder(store, "auto"), "run-1");
    const before = await store.get("ns:run:run-1");
    const counting = countingStore(store);
    for (const mode of ["replay", "auto"] as const) {
      await reloop(recorder(counting.store, mode), "run-1");
    }
    expect(writesOf(counting.counts)).toBe(0);
    expect(await store.get("ns:run:run-1")).toEqual(before);
  });
});

describe("meta.parent", () => {
  it("names the attempt n-1 this run served of the same kind, role and task, even when the retry's prompt changed", async () => {
    const store = openStore("memory://");
    const [attempt0, attempt1] = await reloop(recorder(store, "auto"), "run-1");
    const entry = (await store.get(`ns:e:${attempt1}:0`)) as { meta: { parent?: string } };
    expect(attempt0).not.toBe(attempt1);
    expect(entry.meta.parent).toBe(attempt0);
  });

  it("outside a run (or with no earlier attempt served) it stays the identity attempt n-1 would have with the same prompt", async () => {
    const store = openStore("memory://");
    const r = recorder(store, "auto");
    const req: InvocationRequest = { role: "builder", model: "gpt-5", prompt: "Build it" };
    await r.call(req, async () => "one", { attempt: 1 });
    const id1 = r.last!.id;
    await r.call(req, async () => "zero", { attempt: 0 });
    const id0 = r.last!.id;
    const entry = (await store.get(`ns:e:${id1}:0`)) as { meta: { parent?: string } };
    expect(entry.meta.parent).toBe(id0);
  });
});
