import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./tmp.js";

describe("tempDir", () => {
  const fileScoped = tempDir("tmp-helper-file");
  let fromBeforeAll = "";
  let fromTest = "";
  const removedFirst: string[] = [];
  beforeAll(() => {
    fromBeforeAll = tempDir("tmp-helper-before-all");
  });

  it("makes an empty, writable folder", () => {
    fromTest = tempDir("tmp-helper-test", (dir) => removedFirst.push(dir));
    writeFileSync(join(fromTest, "a.txt"), "a");
    expect(existsSync(join(fromTest, "a.txt"))).toBe(true);
    expect(fromTest).toMatch(/invocache-tmp-helper-test-/);
  });

  it("removes a folder made in a test when that test ends, after its beforeRemove", () => {
    expect(fromTest).not.toBe("");
    expect(existsSync(fromTest)).toBe(false);
    expect(removedFirst).toEqual([fromTest]);
  });

  it("keeps folders made outside a test until the file ends", () => {
    expect(existsSync(fileScoped)).toBe(true);
    expect(existsSync(fromBeforeAll)).toBe(true);
  });
});
