import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { normalizePrompt } from "../../src/normalize/index.js";
import type { SecretRedactor } from "../../src/normalize/secrets-rule.js";

describe("the secret rule takes its secrets through a narrow interface", () => {
  it("uses the redactor it is handed, nothing else", () => {
    const seen: string[] = [];
    const redactor: SecretRedactor = {
      redactString(text) {
        seen.push(text);
        return text.replaceAll("hunter2", "{secret:PW}");
      },
      redact: (value) => ({ value, found: [] }),
    };
    expect(normalizePrompt("pw hunter2", { secrets: redactor })).toBe("pw {secret:PW}");
    expect(seen).toEqual(["pw hunter2"]);
  });

  it("only roots.ts and secret-env.ts touch the process in src/normalize", () => {
    const dir = fileURLToPath(new URL("../../src/normalize/", import.meta.url));
    const touching = readdirSync(dir)
      .filter((f) => /\bprocess\.|node:os|node:fs/.test(readFileSync(`${dir}${f}`, "utf8")))
      .sort();
    expect(touching).toEqual(["roots.ts", "secret-env.ts"]);
  });
});
