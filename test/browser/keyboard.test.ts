/**
 * The whole flow by keyboard only, in Debian's Chromium: log in, upload, correct a cell, submit, filter
 * and search the rows, open a row and come back, open the batch from the list by its link, log in as
 * the approver from a link, approve, download the result. Every control is reached with Tab (or
 * Shift+Tab), shows a focus ring, and works with Enter or Space; after a filter, a page change or a
 * row's details the focus stays on a control the person can see, never lost to the page's start.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import ExcelJS from "exceljs";
import { describe, expect, it } from "vitest";
import { parseApprovalThresholds } from "../../src/approvals/index.js";
import { axeFindings } from "../support/axe.js";
import { screenshot } from "../support/browser.js";
import { useConsoleStack } from "../support/console-stack.js";
import { focused, focusVisible, openFilePicker, tabTo } from "../support/keyboard.js";

const fx = useConsoleStack({
  label: "console-keys",
  clock: { toInProgressMs: 200, toFinalMs: 300 },
  approval: { thresholds: parseApprovalThresholds("USD:100"), required: 1, expiresHours: 24 },
  reconcile: { sweepEveryMs: 500, staleAfterMs: 300 },
  users: { kim: ["submitter", "kim submits 123"], lee: ["approver", "lee approves 123"] },
  acceptDownloads: true,
});

/** Six rows; the third has its amount in words. */
function sheet(): string {
  const lines = ["reference,from_account,to_account,amount,currency"];
  for (let i = 1; i <= 6; i++) {
    lines.push(`KEY-${i},ops-checking,vendor-ach,${i === 3 ? "ten" : `${20 + i}.00`},USD`);
  }
  return lines.join("\n");
}

const isFocused = (selector: string) =>
  fx.page.evaluate(
    `document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`,
  ) as Promise<boolean>;

/** The focus is on `selector` and visibly so. */
async function focusOn(selector: string): Promise<void> {
  await expect.poll(() => isFocused(selector), { message: `focus on ${selector}` }).toBe(true);
  expect(await focusVisible(fx.page), `focus ring on ${await focused(fx.page)}`).toBe(true);
}

async function logInByKeyboard(name: string, password: string): Promise<void> {
  const { page } = fx;
  await page.waitForURL(/\/login/);
  await page.locator("#login-form").waitFor();
  await tabTo(page, "#name");
  await page.keyboard.type(name);
  await tabTo(page, "#password");
  await page.keyboard.type(password);
  await tabTo(page, "#login-form button[type=submit]");
  await page.keyboard.press("Enter");
  await expect.poll(() => page.locator("#who").textContent()).toContain(name);
}

describe("the console by keyboard only", () => {
  it("walks log-in, upload, correction, submit, filters, links, approval and download", {
    timeout: 180_000,
  }, async () => {
    const { page, stack } = fx;
    const url = stack.server.url;
    const files = path.join(stack.dir, "files");
    await mkdir(files, { recursive: true });
    await writeFile(path.join(files, "keys.csv"), sheet());

    // Log in: name, password, Enter.
    await page.goto(`${url}/`);
    await logInByKeyboard("kim", "kim submits 123");
    await expect.poll(() => page.url()).toContain("#/upload");

    // A workbook from another system: a title, the header on row 3 in its own words. Its columns are
    // matched to ours in the page (type-ahead in each list), then its rows are checked.
    const book = new ExcelJS.Workbook();
    const ws = book.addWorksheet("Export");
    ws.getRow(1).values = ["Payments export"];
    ws.getRow(3).values = ["Beleg", "Quelle", "Empfaenger", "Summe", "ISO"];
    ws.getRow(4).values = ["KEYX-1", "ops-checking", "vendor-ach", 12.5, "USD"];
    ws.getRow(5).values = ["KEYX-2", "ops-checking", "vendor-wire", 7, "USD"];
    await book.xlsx.writeFile(path.join(files, "export.xlsx"));
    const xlsxChooser = await openFilePicker(page, "#file", "Enter");
    await xlsxChooser.setFiles(path.join(files, "export.xlsx"));
    await page.locator("#mapping-form").waitFor();
    expect(await axeFindings(page)).toEqual([]);
    await screenshot(page, "keys-xlsx-mapping");
    for (const [ours, theirs] of [
      ["reference", "Beleg"],
      ["from_account", "Quelle"],
      ["to_account", "Empfaenger"],
      ["amount", "Summe"],
      ["currency", "ISO"],
    ] as const) {
      await tabTo(page, `#map-${ours}`);
      await page.keyboard.type(theirs);
      expect(await page.locator(`#map-${ours}`).inputValue()).toBe(theirs);
    }
    await tabTo(page, "#mapping-form button[type=submit]");
    await page.keyboard.press("Enter");
    await page.locator("#validation-summary", { hasText: "2 rows: 2 valid, 0 invalid" }).waitFor();
    expect(
      await page.locator("#preview tbody tr").evaluateAll((t) => t.map((r) => r.getAttribute("data-row"))),
    ).toEqual(["4", "5"]);
    await tabTo(page, 'a[href="#/upload"]');
    await page.keyboard.press("Enter");
    await page.locator("#upload-title").waitFor();

    // The control totals are fields of the drop zone like the others (left empty here).
    await tabTo(page, "#expect-rows");
    await tabTo(page, "#expect-totals");

    // Upload: Space on the file picker (its label shows the focus).
    const chooser = await openFilePicker(page, "#file", "Space", { back: true });
    await chooser.setFiles(path.join(files, "keys.csv"));
    await page.locator("#validation-summary", { hasText: "1 invalid" }).waitFor();

    // Correct the wrong cell; Enter checks the row; the focus stays in the row.
    await tabTo(page, '#preview tr[data-row="4"] input[data-column="amount"]');
    await page.keyboard.press("Control+A");
    await page.keyboard.type("23.00");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#status").textContent()).toContain("Row 4 is valid now");
    await focusOn('#preview tr[data-row="4"] button');

    // "Pay possible duplicates too": Space checks and unchecks it.
    await tabTo(page, "#allow-possible-duplicates");
    await page.keyboard.press("Space");
    expect(await page.locator("#allow-possible-duplicates").isChecked()).toBe(true);
    await page.keyboard.press("Space");
    expect(await page.locator("#allow-possible-duplicates").isChecked()).toBe(false);

    // Submit, and confirm in the dialog (its first control has the focus).
    await tabTo(page, "#submit-reject");
    await page.keyboard.press("Enter");
    await focusOn("dialog button[value=yes]");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.url()).toMatch(/#\/batches\/b/);
    // The message about the submission is on the batch's page (not cleared by the page change).
    await page.locator("#approval-summary", { hasText: "Waiting for approval" }).waitFor();
    expect(await page.locator("#status").textContent()).toContain("it waits for approval");
    const batchUrl = page.url();
    const batchId = batchUrl.split("/").pop()!;
    await page.locator("#approval-summary", { hasText: "Waiting for approval" }).waitFor();

    // Pause and resume the batch: Enter on each button; the banner says it is paused.
    await tabTo(page, "#pause-batch");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#stop-banner").textContent()).toContain("Paused by kim");
    await tabTo(page, "#resume-batch", { back: true });
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#stop-banner").count()).toBe(0);

    // Filter by state with the keyboard (type-ahead in the list), search, Enter: the focus stays put.
    await tabTo(page, "#state-filter");
    await page.keyboard.type("queued");
    expect(await page.locator("#state-filter").inputValue()).toBe("queued");
    await tabTo(page, "#q");
    await page.keyboard.type("KEY-5");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.url()).toContain("state=queued");
    await expect.poll(() => page.locator("#rows tbody tr[data-row]").count()).toBe(1);
    await focusOn("#q");
    // Space on the button does the same.
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Backspace");
    await tabTo(page, "#row-filter button[type=submit]");
    await page.keyboard.press("Space");
    await expect.poll(() => page.locator("#rows tbody tr[data-row]").count()).toBe(6);
    await focusOn("#row-filter button[type=submit]");

    // A row's details by its link, then back to the rows: the focus returns to that link.
    await tabTo(page, '#rows a[href*="/rows/6"]');
    await page.keyboard.press("Enter");
    await expect.poll(() => page.url()).toContain(`/rows/6`);
    await expect.poll(() => isFocused("#row-title")).toBe(true);
    await tabTo(page, "#row-detail a");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.url()).not.toContain("/rows/");
    await focusOn('#rows a[href*="/rows/6"]');

    // Log out (back up to the header).
    await tabTo(page, "#logout", { back: true, max: 120 });
    await page.keyboard.press("Enter");

    // The approver follows the link she was sent; it survives her log-in.
    await page.waitForURL(/\/login/);
    await page.goto(batchUrl);
    await logInByKeyboard("lee", "lee approves 123");
    await expect.poll(() => page.url()).toBe(batchUrl);
    await page.locator("#approval-summary", { hasText: "Waiting for approval" }).waitFor();

    // The batch from the list, by its link.
    await tabTo(page, "#nav-batches");
    await page.keyboard.press("Enter");
    await page.locator("#batch-list tbody tr").first().waitFor();
    await tabTo(page, `#batch-list a[href$="${batchId}"]`);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.url()).toBe(batchUrl);

    // Approve, confirming.
    await tabTo(page, "#approve");
    await page.keyboard.press("Enter");
    await focusOn("dialog button[value=yes]");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#status").textContent()).toContain("Approved");
    await page.locator("#batch-header .state", { hasText: "finished" }).waitFor({ timeout: 60_000 });

    // Download the result: Enter on its link.
    await tabTo(page, '#batch-header a[href$="result.csv"]');
    const [download] = await Promise.all([page.waitForEvent("download"), page.keyboard.press("Enter")]);
    expect(download.suggestedFilename()).toMatch(/\.csv$/);
  });
});
