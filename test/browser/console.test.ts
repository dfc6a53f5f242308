/**
 * The operator console in a real browser (Debian's Chromium driven by playwright-core) against a real
 * `payouts demo --stay`: its printed login must work, then the flow of an operator: upload a sheet
 * with mistakes and see them, upload the valid XLSX with its attachment file, submit, watch the batch
 * finish, filter the failed row, retry it, read its history, download the result. Screenshots of each page go to
 * test/browser/screenshots/ (ignored by git) for people to look at.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliProcess, spawnCli } from "../integration/pipeline/processes.js";
import { axeFindings } from "../support/axe.js";
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
  it("takes an operator from the demo's log-in to the result file", { timeout: 240_000 }, async () => {
    // Log in with what the demo printed.
    await page.goto(`${consoleUrl}/`);
    await page.waitForURL(/\/login/);
    await shot("01-login");
    await page.getByLabel("User name").fill(login.name);
    await page.getByLabel("Password").fill(login.password);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => page.locator("#who").textContent()).toBe(`${login.name} (admin)`);

    // A sheet with mistakes: its problems show first, marked on their cells; submitting under reject is off.
    await page.setInputFiles("#file", path.join(SAMPLES, "payouts-mistakes.csv"));
    await page.locator("#validation-title", { hasText: "payouts-mistakes.csv" }).waitFor();
    await expect.poll(() => page.locator("#preview td.problem").count()).toBeGreaterThan(0);
    expect(await page.locator("#submit-reject").isDisabled()).toBe(true);
    await expect.poll(() => page.locator("#report-links a").count()).toBeGreaterThan(0);
    expect(await axeFindings(page)).toEqual([]);
    await shot("02-validation-mistakes");

    // The valid XLSX with its attachment file: every row valid now, then submit.
    await page.goto(`${consoleUrl}/#/upload`);
    await page.setInputFiles("#file", [
      path.join(SAMPLES, "payouts-valid.xlsx"),
      path.join(SAMPLES, "attachments", "invoice-mxn-0001.pdf"),
    ]);
    await page.locator("#validation-title", { hasText: "payouts-valid.xlsx" }).waitFor();
    expect(await page.locator("#validation-summary").textContent()).toContain("23 rows: 23 valid, 0 invalid");
    const currencies = await page.locator("#totals tbody th").allTextContents();
    expect(currencies).toEqual(expect.arrayContaining(["USD", "EUR", "GBP", "JPY", "MXN"]));
    await shot("03-validation-valid");
    await page.getByRole("button", { name: /^Submit \(nothing is paid/ }).click();
    await page.getByRole("button", { name: "Submit", exact: true }).click();

    // The batch page follows the progress live until every row is final.
    await page.locator("#batch-header .state", { hasText: "finished" }).waitFor({ timeout: 120_000 });
    const batchId = page.url().split("/").pop()!;
    await shot("04-batch-finished");

    // The same file again is refused, naming the earlier batch once, as a link to it.
    await page.goto(`${consoleUrl}/#/upload`);
    await page.setInputFiles("#file", [
      path.join(SAMPLES, "payouts-valid.xlsx"),
      path.join(SAMPLES, "attachments", "invoice-mxn-0001.pdf"),
    ]);
    await page.locator("#validation-title", { hasText: "payouts-valid.xlsx" }).waitFor();
    await page.getByRole("button", { name: /^Submit \(nothing is paid/ }).click();
    await page.getByRole("button", { name: "Submit", exact: true }).click();
    await expect.poll(() => page.locator("#status").textContent()).toContain("already submitted");
    expect((await page.locator("#status").textContent())!.split(batchId).length - 1).toBe(1);
    await page
      .locator("#status")
      .getByRole("link", { name: `batch ${batchId}` })
      .click();
    await expect.poll(() => page.url()).toContain(`#/batches/${batchId}`);

    // The failed row alone, retried.
    await page.getByLabel("Show").selectOption("failed");
    await page.getByRole("button", { name: "Show rows" }).click();
    await expect.poll(() => page.locator("#rows tbody tr[data-state]").count()).toBe(1);
    const failed = page.locator("#rows tbody tr[data-state='failed']");
    const rowNumber = await failed.getAttribute("data-row");
    await shot("05-failed-row");
    await failed.locator("input.pick").check();
    await page.getByRole("button", { name: "Retry selected rows" }).click();
    await expect.poll(() => page.locator("#status").textContent()).toContain(`Retrying row(s) ${rowNumber}`);
    // The status line floats over the page: when it goes, nothing under the reader's pointer moves.
    const pageTop = async (): Promise<number> => (await page.locator("#page").boundingBox())!.y;
    const topWhileSaid = await pageTop();
    await page.locator("#status-box").getByRole("button", { name: "Dismiss" }).click();
    await page.locator("#status").waitFor({ state: "hidden" });
    expect(await pageTop()).toBe(topWhileSaid);
    await page.goto(`${consoleUrl}/#/batches/${batchId}/rows/${rowNumber}?q=PAY-2404-022`);
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.locator("#row-detail h2").waitFor();
          return page.locator("#history-list").textContent();
        },
        { timeout: 60_000, interval: 1000 },
      )
      .toContain("→ failed (attempt 2)");
    expect(await axeFindings(page)).toEqual([]);
    await shot("06-retried-history");

    // The result file in the other format, as a person downloads it: nothing is added to outbox/.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download the result (CSV)" }).click(),
    ]);
    const saved = path.join(dir, "result.csv");
    await download.saveAs(saved);
    const csv = await readFile(saved, "utf8");
    expect(csv).toMatch(/PAY-2404-022.*failed/);
    const outbox = await readdir(path.join(dir, "data", "outbox"));
    expect(outbox.filter((f) => f.includes(batchId) && f.endsWith(".csv"))).toEqual([]);

    // The other pages, for the screenshots and for a look at what an admin sees.
    await page.getByRole("link", { name: "Batches", exact: true }).click();
    await expect.poll(() => page.locator("#batch-list tbody tr").count()).toBeGreaterThan(1);
    await shot("07-batches");
    await page.getByRole("link", { name: "Audit trail" }).click();
    await expect.poll(() => page.locator("#audit-list tbody tr").count()).toBeGreaterThan(3);
    expect(await axeFindings(page)).toEqual([]);
    await shot("08-audit");
  });
});
