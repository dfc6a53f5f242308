/**
 * Shared set-up of the browser tests: Debian's Chromium driven by playwright-core, headless, with a
 * throw-away profile; screenshots go to test/browser/screenshots/ (ignored by git) for people to look at.
 * Where Chromium is found, and what happens without it (the browser tests are not run, in one line):
 * ./chromium.ts.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { browserTestsSkippedLine, findChromium } from "./chromium.js";

const lookup = findChromium();
/** The Chromium the tests launch (CHROMIUM_PATH, else `chromium` on PATH). */
export const CHROMIUM = lookup.found ? lookup.path : (process.env.CHROMIUM_PATH ?? "/usr/bin/chromium");
export const SHOTS = path.resolve("test/browser/screenshots");

/**
 * Starts Chromium with a profile in `profileDir`; fails with how to install it when it is missing (only
 * when a browser test is run by name: the suite leaves them out then).
 */
export async function launchChromium(
  profileDir: string,
  options: { acceptDownloads?: boolean } = {},
): Promise<{ browser: BrowserContext; page: Page }> {
  if (!lookup.found) throw new Error(browserTestsSkippedLine(lookup.reason));
  await mkdir(SHOTS, { recursive: true });
  const browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: options.acceptDownloads ?? false,
    viewport: { width: 1400, height: 900 },
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
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  return { browser, page };
}

/** A full-page screenshot `<name>.png` in {@link SHOTS}. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Opens `address` as a person who is not logged in: the console sends them to log in, then back there. */
export async function logInAt(page: Page, address: string, name: string, password: string): Promise<void> {
  await page.goto(address);
  await page.waitForURL(/\/login/);
  await page.getByLabel("User name").fill(name);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
}
