/**
 * The viewer in a real headless Chromium, on the demo pipeline's
 * recording: overview → the run → the rejected attempt → its diff with the
 * accepted retry, checking what each page says; then the exported report
 * opened from file://, navigated, with no request made at all.
 *
 * Set INVOCACHE_VIEWER_SCREENSHOTS=<folder> to also write the screenshots
 * that docs/viewer.md shows.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportReport, startViewer, type Viewer } from "../../src/viewer/index.js";
import { HOSTILE, shellWords } from "../helpers/shell-words.js";
import { HAVE_CHROMIUM, launch } from "./browser.js";
import { recordDemo } from "./fixtures.js";

const SHOTS = process.env.INVOCACHE_VIEWER_SCREENSHOTS;
// CI installs chromium (.ci/run); elsewhere say why this is skipped.
if (!HAVE_CHROMIUM)
  console.warn("viewer Chromium tests skipped: no /usr/bin/chromium (apt-get install chromium)");

describe.skipIf(!HAVE_CHROMIUM)("invocache view in Chromium", () => {
  let demo: { dir: string; store: string };
  let viewer: Viewer;
  let browser: BrowserContext;

  beforeAll(async () => {
    demo = await recordDemo();
    viewer = await startViewer({ store: demo.store });
    browser = await launch();
    if (SHOTS !== undefined) mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
  });

  const shot = async (page: import("playwright-core").Page, name: string) => {
    if (SHOTS !== undefined)
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  };

  it("walks overview → run → rejected attempt → diff with the accepted retry", async () => {
    const page = await browser.newPage();
    await page.goto(viewer.url);
    // The token was traded for a cookie: it is gone from the address bar.
    expect(page.url()).not.toContain("token=");
    await expect.poll(() => page.locator("h1").textContent()).toBe("Overview");
    // The demo's two runs, newest first: the replay, then the recording.
    const runs = page.locator("#runs tbody tr");
    expect(await runs.count()).toBe(2);
    expect(await runs.nth(0).textContent()).toContain("demo-2");
    expect(await runs.nth(1).textContent()).toContain("demo-1");
    // Five model calls and two tool calls (run_tests), each its own entry.
    const entries = page.locator("#entries tbody tr");
    expect(await entries.count()).toBe(7);
    expect(await page.locator("#entries .badge.tool").allTextContents()).toEqual([
      "⚙ run_tests",
      "⚙ run_tests",
    ]);
    // The numbers: tokens and dollars the recordings cost, spent and saved by the runs.
    expect(await page.locator("#recorded-tokens .n").textContent()).toMatch(/^\d[\d.]*k?$/);
    expect(await page.locator("#recorded-tokens .n").textContent()).not.toBe("0");
    expect(await page.locator("#recorded-cost .n").textContent()).toMatch(/^\$\d/);
    expect(await page.locator("#spend").textContent()).toMatch(
      /spent \S+ tokens \(\$[\d.]+\) · .* on recorded calls and saved \S+ tokens \(\$[\d.]+\) · /,
    );
    // demo-2 replayed what demo-1 recorded: what one spent, the other saved.
    const [saved2, spent1] = [
      await runs.nth(0).locator("td.num").nth(2).textContent(),
      await runs.nth(1).locator("td.num").nth(1).textContent(),
    ];
    expect(saved2).toMatch(/tokens \(\$/);
    expect(saved2).toBe(spent1);
    await shot(page, "overview");

    await page.locator("#runs a", { hasText: "demo-1" }).click();
    await page.waitForURL(/\/run\/demo\/demo-1$/);
    expect(await page.locator("h1").textContent()).toBe("Run demo-1");
    expect(await page.locator(".sub").first().textContent()).toContain("0 hits, 7 misses");
    expect(await page.locator("#run-spend").textContent()).toMatch(
      /^spent\S+ tokens \(\$[\d.]+\) · [\d.]+ m?s on the calls this run recordedsaved– /,
    );
    const steps = page.locator(".timeline .step");
    expect(await steps.count()).toBe(7);
    expect(await steps.locator(".role").allTextContents()).toEqual([
      "planner",
      "builder",
      "⚙ run_tests",
      "reviewer",
      "builder",
      "⚙ run_tests",
      "reviewer",
    ]);
    expect(await steps.locator(".meta").allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining("kind tool")]),
    );
    // Run 1 recorded every step: each a miss.
    expect(await steps.locator(".badge.miss").count()).toBe(7);
    const rejected = page.locator(".step.rejected");
    expect(await rejected.count()).toBe(1);
    expect(await rejected.textContent()).toContain("✗ rejected");
    expect(await rejected.textContent()).toContain("attempt 0");
    expect(await rejected.textContent()).toContain("Step 3 of the plan asks for unit tests");
    const accepted = page.locator(".step.accepted");
    expect(await accepted.textContent()).toContain("✓ accepted");
    // Linked by the recorder (meta.parent), not guessed: no "(inferred)".
    expect(await accepted.locator(".lineage").first().textContent()).toMatch(
      /^↳ retry of step 2 \(attempt 0, rejected\) · diff with it$/,
    );
    expect(await page.locator(".timeline .guess").count()).toBe(0);
    expect(await page.locator(".kv .hash").textContent()).toMatch(/^[0-9a-f]{64}$/);
    expect(await page.locator("#compare-runs li").textContent()).toContain("= same trajectory");
    await shot(page, "run");

    // A tool step is an entry of its own: the tool, its arguments and its result.
    await steps.nth(2).locator("a.id").click();
    await page.waitForURL(/\/entry\//);
    expect(await page.locator("h1").textContent()).toContain("⚙ run_tests");
    expect(await page.locator(".sub").first().textContent()).toContain(
      "tool call (tools/call) by builder",
    );
    expect(await page.locator("pre.code").first().textContent()).toContain('"draft"');
    expect(await page.locator("h2", { hasText: "Result" }).count()).toBe(1);
    await shot(page, "tool");
    await page.goBack();

    await page.locator(".step.rejected a.id").click();
    await page.waitForURL(/\/entry\//);
    expect(await page.locator("h1").textContent()).toContain("builder");
    expect(await page.locator("h1").textContent()).toContain("rejected");
    expect(await page.locator(".turn.system").textContent()).toContain("You are the builder");
    expect(await page.locator("#entry-cost").textContent()).toMatch(
      /^\S+ tokens \(\$[\d.]+\) · [\d.]+ m?s \([\d,]+ in, [\d,]+ out\) when recorded/,
    );
    // The checkout path became {project}, highlighted with the rule that made it.
    const tok = page.locator("pre mark.tok", { hasText: "{project}" }).first();
    expect(await tok.getAttribute("title")).toContain("root:project");
    expect(await page.locator(".turn.assistant").textContent()).toContain(
      "export function slugify",
    );
    // The demo stamped the draft after each run: two stamps name this entry.
    const stamps = page.locator("#stamps tbody tr");
    expect(await stamps.count()).toBe(2);
    expect(await stamps.allTextContents()).toEqual([
      expect.stringMatching(
        /^\.invocache\/demo\/slugify\.attempt-0\.ts1the recorded callsigned, keyid [0-9a-f]{12}✓ yes$/,
      ),
      expect.stringMatching(/^\.invocache\/demo\/slugify\.attempt-0\.ts2a replayed callsigned/),
    ]);
    await shot(page, "entry");

    await page.click("text=diff with the retry");
    expect(await page.locator("h1").textContent()).toMatch(/^Diff [0-9a-f]{12} → [0-9a-f]{12}$/);
    const fields = await page.locator("ul.fields li").allTextContents();
    expect(fields[0]).toContain("attempt: 0 → 1");
    expect(fields.some((f) => f.includes("prompt:"))).toBe(true);
    expect(await page.locator("ins").first().textContent()).toContain("Reviewer feedback");
    // The prompt is compared message by message, not as escaped JSON.
    const differing = page.locator("#turns .turn-diff.differs");
    expect(await differing.count()).toBeGreaterThan(0);
    expect(await differing.first().locator("h3").textContent()).toMatch(
      /^message \d+ · \S+ · differs$/,
    );
    expect(await differing.first().locator("ins").first().textContent()).toContain(
      "Reviewer feedback",
    );
    expect(await page.locator("#turns").textContent()).not.toContain('\\"role\\"');
    expect(await page.locator("#turns .turn-diff.same").count()).toBeGreaterThan(0);
    await shot(page, "diff");

    // The replay is its own run: the same trajectory, every step a hit.
    await page.goto(viewer.url.replace(/\/\?token=.*$/, "/run/demo/demo-2"));
    expect(await page.locator("h1").textContent()).toBe("Run demo-2");
    expect(await page.locator(".sub").first().textContent()).toContain("7 hits, 0 misses");
    expect(await page.locator(".timeline .badge.hit").count()).toBe(7);
    await page.close();
    if (SHOTS !== undefined) {
      // The same run with the system in dark mode, for docs/viewer.md.
      const dark = await launch("dark");
      try {
        const p = await dark.newPage();
        await p.goto(viewer.url);
        await p.goto(viewer.url.replace(/\/\?token=.*$/, "/run/demo/demo-1"));
        await shot(p, "run-dark");
      } finally {
        await dark.close();
      }
    }
  }, 120_000);

  it("moves through rows with j/k and opens one with Enter", async () => {
    const page = await browser.newPage();
    await page.goto(viewer.url);
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    expect(await page.locator("tr.sel").count()).toBe(1);
    await page.keyboard.press("Enter");
    // The second row: the older of the two runs.
    await page.waitForURL(/\/run\/demo\/demo-1$/);
    expect(await page.locator("h1").textContent()).toBe("Run demo-1");
    await page.goBack();
    await expect.poll(() => page.locator("h1").textContent()).toBe("Overview");
    // Past the two runs: the newest entry.
    for (let i = 0; i < 3; i++) await page.keyboard.press("j");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/entry\//);
    expect(await page.locator("h2", { hasText: "Manifest" }).count()).toBe(1);
    await page.close();
  }, 60_000);

  it("exports one HTML file that opens from file:// with no request made", async () => {
    const file = join(demo.dir, "report.html");
    const summary = await exportReport({ store: demo.store }, file);
    expect(existsSync(file)).toBe(true);
    expect(summary.sections).toBeGreaterThanOrEqual(7);
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    const url = pathToFileURL(file).href;
    await page.goto(url);
    expect(await page.locator("section:not([hidden]) h1").textContent()).toBe("Overview");
    await page.locator("section:not([hidden]) #runs a", { hasText: "demo-1" }).click();
    // A click changes the URL's `#`; the section is shown on the hashchange
    // event, which fires after the click returns: wait for it (a plain read
    // raced it and saw the page before, as CI once did).
    const shown = () => page.locator("section:not([hidden]) h1").textContent();
    await expect.poll(shown).toBe("Run demo-1");
    await page.locator("section:not([hidden]) .step.rejected a.id").click();
    await expect.poll(shown).toContain("rejected");
    await page.locator("section:not([hidden])").getByText("diff with the retry").click();
    await expect
      .poll(() => page.locator("section:not([hidden]) ul.fields li").first().textContent())
      .toContain("attempt: 0 → 1");
    // The only request is the file itself: nothing from the network, no asset.
    expect(requests).toEqual([url]);
    await page.close();
  }, 60_000);
});

describe.skipIf(!HAVE_CHROMIUM)("the commands an entry page prints, in Chromium", () => {
  it("survive HTML escaping: the text Chromium shows is the shell-quoted command, one word per argument", async () => {
    const demo = await recordDemo(HOSTILE);
    const viewer = await startViewer({ store: demo.store });
    const browser = await launch();
    try {
      const page = await browser.newPage();
      await page.goto(viewer.url);
      await page.locator("#entries a.id").first().click();
      await page.waitForURL(/\/entry\//);
      const commands = await page.locator(".cmds pre").allTextContents();
      expect(commands).toHaveLength(3);
      for (const command of commands) {
        expect(command).toMatch(/^npx invocache (show|explain|prune) /);
        expect(shellWords(command).slice(-2)).toEqual(["--store", demo.store]);
      }
      // The export, opened from file://, shows the same text.
      const file = join(demo.dir, "report.html");
      await exportReport({ store: demo.store }, file);
      await page.goto(pathToFileURL(file).href);
      const exported = await page.locator(".cmds pre").allTextContents();
      expect(exported.length).toBeGreaterThanOrEqual(3);
      for (const command of exported)
        expect(shellWords(command).slice(-2)).toEqual(["--store", demo.store]);
      await page.close();
    } finally {
      await browser.close();
      await viewer.close();
    }
  }, 120_000);
});
