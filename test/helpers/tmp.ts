/**
 * Temp folders for tests, each removed when its owner ends: one made inside
 * a test goes when that test finishes, one made anywhere else (file or
 * describe scope, beforeAll, a fixture) goes after the test file. Cleanup is
 * registered here, so no test can forget it.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, onTestFinished, TestRunner } from "vitest";

/** Run just before a folder is removed (e.g. unmount what a test left mounted in it). */
export type BeforeRemove = (dir: string) => void;

const fileScoped: Array<() => void> = [];
// This module is evaluated once per test file (vitest isolates files), while
// that file is being collected: the hook lands on the file's root suite.
afterAll(() => {
  for (const remove of fileScoped.splice(0).reverse()) remove();
});

/**
 * A fresh folder `<parent>/invocache-<label>-XXXXXX` (parent: the OS temp
 * folder), removed with everything in it when the current test (or, outside
 * a test, the test file) ends.
 *
 * @example
 * const dir = tempDir("sqlite");
 * const store = openStore(`sqlite://${join(dir, "cache.sqlite")}`);
 */
export function tempDir(
  label: string,
  beforeRemove?: BeforeRemove,
  parent: string = tmpdir(),
): string {
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, `invocache-${label}-`));
  const remove = () => {
    beforeRemove?.(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  if (TestRunner.getCurrentTest() !== undefined) onTestFinished(remove);
  else fileScoped.push(remove);
  return dir;
}
