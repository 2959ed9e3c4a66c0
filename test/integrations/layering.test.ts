/**
 * Integrations only translate: they reach invocache through its public API
 * (`../index.js`, or a public subpath's index) and never hash or normalize themselves, so there is one
 * identity recipe everywhere.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dir = fileURLToPath(new URL("../../src/integrations/", import.meta.url));
const FRAMEWORKS =
  /^(@langchain\/[a-z-]+(\/[a-z/_-]+)?|@openai\/agents|@mswjs\/interceptors(\/[A-Za-z]+)?)$/;

describe("src/integrations layering", () => {
  const files = readdirSync(dir).filter((f) => f.endsWith(".ts"));

  it("has the integration files (the control)", () => {
    expect(files).toEqual(
      expect.arrayContaining(["langchain.ts", "langgraph.ts", "openai-agents.ts"]),
    );
  });

  for (const file of files) {
    it(`${file} imports only the public API, its siblings, node: and its framework`, () => {
      const source = readFileSync(`${dir}${file}`, "utf8");
      // Import and re-export statements only (doc comments show user code).
      const specifiers = [...source.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gm)].map(
        (m) => m[1] ?? "",
      );
      for (const s of specifiers) {
        const ok =
          s === "../index.js" ||
          /^\.\.\/(adapters|identity|recorder)\/index\.js$/.test(s) ||
          /^\.\/[a-z-]+\.js$/.test(s) ||
          s.startsWith("node:") ||
          FRAMEWORKS.test(s);
        expect(ok, `${file} imports ${s}`).toBe(true);
      }
      if (file === "langchain.ts") expect(specifiers).toContain("@langchain/core/caches"); // the control
      expect(source).not.toMatch(
        /createHash|sha256|normalizePrompt|invocationIdentity|manifestIdentity/,
      );
    });
  }
});
