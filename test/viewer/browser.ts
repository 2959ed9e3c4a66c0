/**
 * Real headless Chromium for the viewer tests: the system's Debian
 * `chromium` (never a downloaded browser), a fresh profile per launch,
 * everything that could phone home switched off.
 */
import { existsSync } from "node:fs";
import { type BrowserContext, chromium } from "playwright-core";
import { tempDir } from "../helpers/tmp.js";

export const CHROMIUM = process.env.INVOCACHE_CHROMIUM ?? "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

export async function launch(colorScheme: "light" | "dark" = "light"): Promise<BrowserContext> {
  return chromium.launchPersistentContext(tempDir("chromium"), {
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
