/**
 * Views rendered from real sources (a folder of YAML cassettes, a SQLite
 * store with two runs), through the same route table the server uses:
 * comparing two runs highlights the first differing step; the cassette
 * view draws the folder as a tree and marks stale entries.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { createRecorder } from "../../src/recorder/index.js";
import type { Store } from "../../src/store/types.js";
import { openViewerCatalog } from "../../src/viewer/catalog.js";
import { serverLinks } from "../../src/viewer/links.js";
import { type RouteContext, renderRoute } from "../../src/viewer/routes.js";
import { searchEntries } from "../../src/viewer/views/overview.js";
import { tempDir } from "../helpers/tmp.js";

async function record(store: string | Store, runId: string, prompts: string[]) {
  const rec = createRecorder({ store, namespace: "ns", mode: "record" });
  await rec.run(
    async () => {
      for (const p of prompts)
        await rec.call({ role: "builder", model: "m", prompt: p }, async () => `did ${p}`, {
          attempt: 0,
        });
    },
    { runId },
  );
  await rec.close();
}

function ctx(catalog: RouteContext["catalog"], maxAgeMs?: number): RouteContext {
  return {
    catalog,
    links: serverLinks(),
    missLog: "/nonexistent/misses.jsonl",
    sourceFlag: "",
    maxAgeMs,
  };
}

describe("views", () => {
  it("compares two runs and highlights the first differing step", async () => {
    const dir = tempDir("view-cmp");
    const store = `sqlite://${join(dir, "c.sqlite")}`;
    await record(store, "one", ["plan", "build", "review"]);
    await record(store, "two", ["plan", "build it differently", "review"]);
    const catalog = await openViewerCatalog({ store });
    try {
      const run = await renderRoute("/run/ns/one", ctx(catalog));
      expect(run.body.value).toContain("/compare?a=ns%2Fone&amp;b=ns%2Ftwo");
      expect(run.body.value).toContain("≠ differs");
      const cmp = await renderRoute("/compare?a=ns%2Fone&b=ns%2Ftwo", ctx(catalog));
      expect(cmp.status).toBe(200);
      expect(cmp.body.value).toContain("The runs diverge at step 2");
      const rows = cmp.body.value.match(/<tr class="[^"]*">/g) ?? [];
      expect(rows.map((r) => r.includes("first-diff"))).toEqual([false, true, false]);
      const same = await renderRoute("/compare?a=ns%2Fone&b=ns%2Fone", ctx(catalog));
      expect(same.body.value).toContain("Same trajectory");
      expect((await renderRoute("/compare?a=ns%2Fone&b=ns%2Fnope", ctx(catalog))).status).toBe(404);
    } finally {
      await catalog.close();
    }
  });

  it("shows a folder of cassettes as a tree, with stale entries marked", async () => {
    const dir = tempDir("view-tree");
    mkdirSync(join(dir, "unit"), { recursive: true });
    const a = cassetteStore(join(dir, "unit", "planner.yaml"));
    await record(a, "r", ["plan"]);
    await a.close();
    const b = cassetteStore(join(dir, "top.yaml"));
    await record(b, "r", ["x", "y"]);
    await b.close();
    const catalog = await openViewerCatalog({ cassette: dir });
    try {
      const fresh = await renderRoute("/cassettes", ctx(catalog, 86_400_000));
      expect(fresh.body.value).toContain("<strong>unit/</strong>");
      expect(fresh.body.value).toContain("planner.yaml · 1 entry");
      expect(fresh.body.value).toContain("top.yaml · 2 entries");
      expect(fresh.body.value).not.toContain("stale</span>");
      // Everything recorded is older than 0 ms.
      const stale = await renderRoute("/cassettes", ctx(catalog, -1));
      expect(stale.body.value).toContain("⚠ 2 stale");
      const overview = await renderRoute("/", ctx(catalog));
      expect(overview.body.value).toContain("?file=unit%2Fplanner.yaml");
    } finally {
      await catalog.close();
    }
  });

  it("lists a cassette's unused entries (not served by its last run) and its stale ones", async () => {
    const dir = tempDir("view-unused");
    const path = join(dir, "build.yaml");
    // Recorded with three steps, then the test changed: the run now makes two.
    const first = cassetteStore(path);
    await record(first, "build", ["plan", "build", "old step"]);
    await first.close();
    const second = cassetteStore(path);
    const rec = createRecorder({ store: second, namespace: "ns", mode: "auto" });
    await rec.run(
      async () => {
        for (const p of ["plan", "build"])
          await rec.call({ role: "builder", model: "m", prompt: p }, async () => `did ${p}`);
      },
      { runId: "build" },
    );
    await rec.close();
    await second.close();
    // And one cassette without a run record: its usage is unknown, and it says so.
    const plain = cassetteStore(join(dir, "plain.yaml"));
    const r2 = createRecorder({ store: plain, namespace: "ns", mode: "record" });
    await r2.call({ role: "builder", model: "m", prompt: "alone" }, async () => "ok");
    await r2.close();
    await plain.close();
    const catalog = await openViewerCatalog({ cassette: dir });
    try {
      const snap = await catalog.snapshot();
      const oldStep = snap.entries.find((e) => e.text.includes("old step"))!;
      const page = await renderRoute("/cassettes", ctx(catalog, -1));
      const body = page.body.value;
      expect(body).toContain("build.yaml · 3 entries");
      expect(body).toContain("◌ 1 unused");
      const unused = body.slice(body.indexOf("<dt>unused</dt>"));
      expect(unused).toContain("not served by the last run (build)");
      expect(unused.slice(0, unused.indexOf("</dd>"))).toContain(oldStep.id.slice(0, 12));
      expect(body).toContain("unknown: no run record in this cassette");
      expect(body).toContain("⚠ 3 stale");
      expect(body).toContain("<dt>stale</dt><dd>older than 0 days:");
    } finally {
      await catalog.close();
    }
  });

  it("reads tool-call entries: listed, and rendered with tool, arguments and result", async () => {
    const dir = tempDir("view-tool");
    const store = `sqlite://${join(dir, "c.sqlite")}`;
    const rec = createRecorder({ store, namespace: "ns", mode: "record" });
    await rec.run(
      async () => {
        await rec.call(
          {
            kind: "tool",
            name: "search_docs",
            server: "docs",
            role: "researcher",
            args: { q: "<b>slug</b>" },
          },
          async () => ({ hits: ["slugify.md"] }),
          { tool: { readOnlyHint: true } },
        );
      },
      { runId: "t" },
    );
    await rec.close();
    const catalog = await openViewerCatalog({ store });
    try {
      const snap = await catalog.snapshot();
      expect(snap.problems).toEqual([]);
      expect(snap.entries.map((e) => [e.kind, e.tool, e.role, e.model])).toEqual([
        ["tool", "docs/search_docs", "researcher", ""],
      ]);
      const run = await renderRoute("/run/ns/t", ctx(catalog));
      expect(run.body.value).toContain("⚙ docs/search_docs");
      expect(run.body.value).toContain("<span>kind tool</span>");
      expect(run.body.value).not.toContain("(not in this source)");
      const entry = await renderRoute(
        `/entry/${encodeURIComponent(snap.entries[0]!.key)}`,
        ctx(catalog),
      );
      expect(entry.status).toBe(200);
      expect(entry.body.value).toContain("tool call (tools/call) by researcher");
      expect(entry.body.value).toContain("MCP server docs");
      // Arguments are shown as text: the markup in them is escaped.
      expect(entry.body.value).toContain("&lt;b&gt;slug&lt;/b&gt;");
      expect(entry.body.value).toContain("slugify.md");
    } finally {
      await catalog.close();
    }
  });
});

describe("lineage", () => {
  it("follows meta.parent as the recorder links it; guesses, and says so, only for a parent never recorded", async () => {
    const dir = tempDir("view-lineage");
    const store = `sqlite://${join(dir, "c.sqlite")}`;
    const req = (prompt: string) => ({ role: "builder", model: "m", task: "t", prompt });
    // Inside a run: the retry's prompt carries the feedback, and its parent is the attempt served.
    const rec = createRecorder({ store, namespace: "ns", mode: "record" });
    await rec.run(
      async () => {
        await rec.call(req("build"), async () => "draft 0");
        await rec.call(req("build\nfeedback: add tests"), async () => "draft 1", { attempt: 1 });
      },
      { runId: "linked" },
    );
    // Outside a run the recorder links the same-prompt identity, as every recording once did:
    // never called here, so the viewer has to guess.
    await rec.call(req("other"), async () => "draft 0");
    await rec.call(req("other\nfeedback: add tests"), async () => "draft 1", { attempt: 1 });
    await rec.close();
    const catalog = await openViewerCatalog({ store });
    try {
      const snap = await catalog.snapshot();
      const retry = (word: string) =>
        snap.entries.find((e) => e.attempt === 1 && e.text.includes(word))!;
      const linked = retry("build");
      const guessed = retry("other");
      const run = await renderRoute("/run/ns/linked", ctx(catalog));
      expect(run.body.value).toContain('↳ retry of <a href="#step-1">step 1</a>');
      expect(run.body.value).not.toContain("(inferred)");
      const a = await renderRoute(`/entry/${encodeURIComponent(linked.key)}`, ctx(catalog));
      expect(a.body.value).toContain("<dt>retry of</dt>");
      expect(a.body.value).not.toContain("(inferred)");
      const b = await renderRoute(`/entry/${encodeURIComponent(guessed.key)}`, ctx(catalog));
      expect(b.body.value).toContain("<dt>retry of</dt>");
      expect(b.body.value).toContain("(inferred)</span>");
    } finally {
      await catalog.close();
    }
  });
});

describe("read-only", () => {
  it("opens a SQLite store that does not exist as empty, and creates nothing", async () => {
    const dir = tempDir("view-empty");
    const path = join(dir, "none", "cache.sqlite");
    const catalog = await openViewerCatalog({ store: `sqlite://${path}` });
    try {
      expect((await catalog.snapshot()).entries).toEqual([]);
      const overview = await renderRoute("/", ctx(catalog));
      expect(overview.body.value).toContain("No stored runs");
      expect(existsSync(path)).toBe(false);
    } finally {
      await catalog.close();
    }
  });
});

describe("search", () => {
  it("finds entries by id prefix and by text, newest first", async () => {
    const dir = tempDir("view-search");
    const store = `sqlite://${join(dir, "s.sqlite")}`;
    await record(store, "one", ["plan the Work", "build", "review the build"]);
    const catalog = await openViewerCatalog({ store });
    try {
      const snap = await catalog.snapshot();
      const q = (text: string) =>
        searchEntries(snap, { q: text, role: "", model: "", namespace: "", offset: 0 }).map((e) =>
          e.text.trim(),
        );
      expect(q("BUILD")).toEqual(["review the build", "build"]);
      expect(q("nothing like this")).toEqual([]);
      const target = snap.entries[1]!;
      const byId = searchEntries(snap, {
        q: target.id.slice(0, 10),
        role: "",
        model: "",
        namespace: "",
        offset: 0,
      });
      expect(byId.map((e) => e.key)).toEqual([target.key]);
      // The same prefix length as `invocache show`/`rm`: 8 hex digits name an id, 7 are only text.
      expect(q(target.id.slice(0, 8))).toEqual([target.text.trim()]);
      const seven = target.id.slice(0, 7);
      expect(q(seven)).toEqual(
        snap.entries.filter((e) => e.text.toLowerCase().includes(seven)).map((e) => e.text.trim()),
      );
      expect(
        searchEntries(snap, { q: "", role: "planner", model: "", namespace: "", offset: 0 }),
      ).toEqual([]);
    } finally {
      await catalog.close();
    }
  });
});
