/**
 * Real headless Chromium for the viewer tests: the system's Debian
 * `chromium` (never a downloaded browser), a fresh profile per launch,
 * everything that could phone home switched off.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

export const CHROMIUM = process.env.INVOCACHE_CHROMIUM ?? "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

export async function launch(colorScheme: "light" | "dark" = "light"): Promise<BrowserContext> {
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "invocache-chromium-")), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 900 },
    colorScheme,
  });
}
