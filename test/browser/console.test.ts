/**
 * The operator console in a real browser (Debian's Chromium driven by playwright-core) against a real
 * `payouts demo --stay`: its printed login must work, then the whole flow of an operator: upload a
 * sheet with mistakes and see them, upload the valid XLSX, submit, watch the batch finish, filter the
 * failed row, retry it, read its history, download the result. Screenshots of each page go to
 * test/browser/screenshots/ (ignored by git) for people to look at.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliProcess, spawnCli } from "../integration/pipeline/processes.js";
import { launchChromium, screenshot } from "../support/browser.js";

const SAMPLES = path.resolve("samples");

let dir: string;
let demo: CliProcess;
let browser: BrowserContext;
let page: Page;
let consoleUrl: string;
let login: { name: string; password: string };

const shot = (name: string): Promise<void> => screenshot(page, name);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "payouts-browser-"));
  // The demo's own batch uses other references than the samples the browser submits (an externalId is
  // unique for ever: the samples' references must still be unused when the browser submits them).
  const warmup = path.join(dir, "warmup.csv");
  await writeFile(
    warmup,
    "reference,from_account,to_account,amount,currency\nWARMUP-1,ops-checking,vendor-ach,10.00,USD\n",
  );
  demo = spawnCli(["demo", warmup, "--stay"], {
    REDIS_URL: "",
    DATA_DIR: path.join(dir, "data"),
    LOG_LEVEL: "warn",
  });
  const line = await demo.waitFor(/console: http/, 90_000);
  const m = /console: (http:\/\/\S+?)\/\s+\(log in as (\S+) \/ (\S+?);/.exec(line);
  if (!m) throw new Error(`unexpected console line: ${line}`);
  consoleUrl = m[1]!;
  login = { name: m[2]!, password: m[3]! };
  ({ browser, page } = await launchChromium(path.join(dir, "profile"), { acceptDownloads: true }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (demo) {
    demo.child.kill("SIGTERM");
    await demo.exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

describe("the console", () => {
  it("takes an operator from log-in to the result file", { timeout: 240_000 }, async () => {
    // Log in with what the demo printed.
    await page.goto(`${consoleUrl}/`);
    await page.waitForURL(/\/login$/);
    await shot("01-login");
    await page.getByLabel("User name").fill(login.name);
    await page.getByLabel("Password").fill(login.password);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`${consoleUrl}/`);
    await expect.poll(() => page.locator("#who").textContent()).toBe(`${login.name} (admin)`);

    // A sheet with mistakes: its problems show, the cells are marked, submitting under reject is off.
    await page.setInputFiles("#file", path.join(SAMPLES, "payouts-mistakes.csv"));
    await page.locator("#validation-title", { hasText: "payouts-mistakes.csv" }).waitFor();
    expect(await page.locator("#preview td.problem").count()).toBeGreaterThan(0);
    expect(await page.locator("#problems li").count()).toBeGreaterThan(0);
    expect(await page.locator("#submit-reject").isDisabled()).toBe(true);
    await expect.poll(() => page.locator("#report-links a").count()).toBeGreaterThan(0);
    await shot("02-validation-mistakes");

    // The valid XLSX: totals per currency, then submit.
    await page.setInputFiles("#file", path.join(SAMPLES, "payouts-valid.xlsx"));
    await page.locator("#validation-title", { hasText: "payouts-valid.xlsx" }).waitFor();
    await shot("03-validation-valid");
    // Its one file attachment (a path next to the sheet) cannot come along with an upload: that row is
    // the only problem, and the rest is submitted with it skipped.
    expect(await page.locator("#problems li").allTextContents()).toEqual([
      expect.stringContaining("ATTACHMENT_NOT_FOUND"),
    ]);
    const currencies = await page.locator("#totals tbody td:first-child").allTextContents();
    expect(currencies).toEqual(expect.arrayContaining(["USD", "EUR", "GBP", "JPY"]));
    await page.getByRole("button", { name: /^Submit the valid rows, skip/ }).click();

    // The batch page follows the progress live until every row is final.
    await page.locator("#batch").waitFor({ state: "visible" });
    await page.locator("#batch-summary .state", { hasText: "finished" }).waitFor({ timeout: 120_000 });
    expect(await page.locator("#rows-more").isHidden()).toBe(true);
    await shot("04-batch-finished");

    // The failed row alone, retried.
    await page.getByLabel("State").selectOption("failed");
    await page.getByRole("button", { name: "Show rows" }).click();
    await expect.poll(() => page.locator("#rows tbody tr[data-state]").count()).toBe(1);
    const failed = page.locator("#rows tbody tr[data-state='failed']");
    const rowNumber = await failed.getAttribute("data-row");
    await shot("05-failed-row");
    await failed.locator("input.pick").check();
    await page.getByRole("button", { name: "Retry selected rows" }).click();
    await expect.poll(() => page.locator("#status").textContent()).toContain(`Retrying row(s) ${rowNumber}`);
    await page.getByLabel("State").selectOption("");
    await page.getByLabel("Reference or payment id").fill("PAY-2404-022");
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Show rows" }).click();
          const row = page.locator(`#rows tbody tr[data-row='${rowNumber}']`);
          return `${await row.getAttribute("data-state")} ${await row.locator("td").nth(6).textContent()}`;
        },
        { timeout: 60_000, interval: 1000 },
      )
      .toBe("failed 2");
    await page.getByRole("button", { name: `History of row ${rowNumber}` }).click();
    await expect.poll(() => page.locator("#history-list li").count()).toBeGreaterThan(3);
    await shot("06-retried-history");

    // The result file, as a person downloads it.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download the result (CSV)" }).click(),
    ]);
    const saved = path.join(dir, "result.csv");
    await download.saveAs(saved);
    const csv = await readFile(saved, "utf8");
    expect(csv).toContain("PAY-2404-022");
    expect(csv).toMatch(/PAY-2404-022.*failed/);

    // The other pages, for the screenshots and for a look at what an admin sees.
    await page.getByRole("button", { name: "Batches" }).click();
    await expect.poll(() => page.locator("#batch-list tbody tr").count()).toBeGreaterThan(1);
    await shot("07-batches");
    await page.getByRole("button", { name: "Audit trail" }).click();
    await expect.poll(() => page.locator("#audit-list tbody tr").count()).toBeGreaterThan(3);
    await shot("08-audit");
  });
});
