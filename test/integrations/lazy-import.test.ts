/**
 * Install hygiene: every framework is an optional peer behind its own
 * subpath. Importing `invocache` loads none of them; importing one
 * integration loads its own framework and none of the others.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";

const loaded = vi.hoisted(() => new Set<string>());
vi.mock("@langchain/core/caches", async (importOriginal) => {
  loaded.add("@langchain/core");
  return importOriginal();
});
vi.mock("@langchain/langgraph-checkpoint", async (importOriginal) => {
  loaded.add("@langchain/langgraph-checkpoint");
  return importOriginal();
});
vi.mock("@langchain/langgraph", async (importOriginal) => {
  loaded.add("@langchain/langgraph");
  return importOriginal();
});
vi.mock("@openai/agents", async (importOriginal) => {
  loaded.add("@openai/agents");
  return importOriginal();
});
vi.mock("openai", async (importOriginal) => {
  loaded.add("openai");
  return importOriginal();
});

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("integrations load lazily", () => {
  // One file, in order: each step adds one integration to the module graph.
  it("importing invocache loads no framework", async () => {
    await import("../../src/index.js");
    expect([...loaded]).toStrictEqual([]);
  });

  it("invocache/langchain loads @langchain/core only", async () => {
    const { InvocacheCache } = await import("../../src/integrations/langchain.js");
    expect(typeof InvocacheCache).toBe("function");
    expect([...loaded]).toStrictEqual(["@langchain/core"]);
  });

  it("invocache/langgraph adds LangGraph's checkpoint package only", async () => {
    const { InvocacheNodeCache } = await import("../../src/integrations/langgraph.js");
    expect(typeof InvocacheNodeCache).toBe("function");
    expect([...loaded].sort()).toStrictEqual([
      "@langchain/core",
      "@langchain/langgraph-checkpoint",
    ]);
  });

  it("invocache/openai-agents adds @openai/agents only", async () => {
    const { invocacheModelProvider } = await import("../../src/integrations/openai-agents.js");
    expect(typeof invocacheModelProvider).toBe("function");
    expect(loaded.has("@openai/agents")).toBe(true);
    expect(loaded.has("@langchain/langgraph")).toBe(false);
  });
});

describe("package.json", () => {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as {
    exports: Record<string, { types?: string; import?: string }>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
    devDependencies: Record<string, string>;
  };
  const subpaths = {
    "./langchain": ["langchain", ["@langchain/core"]],
    "./langgraph": ["langgraph", ["@langchain/langgraph", "@langchain/langgraph-checkpoint"]],
    "./openai-agents": ["openai-agents", ["@openai/agents"]],
  } as const;

  for (const [subpath, [file, peers]] of Object.entries(subpaths)) {
    it(`exports ${subpath} from src/integrations/${file}.ts, its framework an optional peer pinned for tests`, () => {
      expect(pkg.exports[subpath]).toStrictEqual({
        types: `./dist/integrations/${file}.d.ts`,
        import: `./dist/integrations/${file}.js`,
      });
      expect(existsSync(`${root}src/integrations/${file}.ts`)).toBe(true);
      for (const peer of peers) {
        expect(pkg.peerDependencies[peer], peer).toBeDefined();
        expect(pkg.peerDependenciesMeta[peer]?.optional, peer).toBe(true);
        expect(pkg.devDependencies[peer], peer).toMatch(/^\d+\.\d+\.\d+$/);
      }
    });
  }

  it("each framework's peer range starts at the release test/compat pins, and the dev dependency is inside it", () => {
    const compat = JSON.parse(readFileSync(`${root}test/compat/package.json`, "utf8")) as {
      dependencies: Record<string, string>;
    };
    const num = (v: string) => v.split(".").map(Number);
    const below = (a: string, b: string) => {
      const [x, y] = [num(a), num(b)];
      for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
      return false;
    };
    for (const [, [, peers]] of Object.entries(subpaths)) {
      for (const peer of peers) {
        const range = /^>=(\d+\.\d+\.\d+) <(\d+\.\d+\.\d+)$/.exec(pkg.peerDependencies[peer] ?? "");
        expect(range, `${peer}: write the range as ">=lowest <next-major"`).not.toBeNull();
        const [, lowest = "", limit = ""] = range ?? [];
        expect(compat.dependencies[peer], peer).toBe(lowest);
        const newest = pkg.devDependencies[peer] ?? "";
        expect(below(newest, lowest) || !below(newest, limit), `${peer} ${newest}`).toBe(false);
      }
    }
  });
});
