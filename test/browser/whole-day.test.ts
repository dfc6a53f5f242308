/**
 * An operator's whole day in the console, in Debian's Chromium (playwright-core), at 30 rows: a
 * submitter uploads a sheet with honest mistakes and its attachment file, corrects the cells in the
 * page (by keyboard only), submits; the batch is held for approval; an approver opens the link she was
 * sent, logs in, sees why it is held, its largest rows and totals in their currencies, and approves
 * after a confirmation that repeats the total; the progress follows to the end; the failed row says
 * what happened and what to do; the submitter corrects its amount, the correction is held for approval
 * again and approved by the other user, and the new attempt is paid; the result file downloads without
 * leaving a file in outbox/. Every page is checked with axe-core (no serious or critical finding) and
 * photographed into test/browser/screenshots/ for people to look at.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseApprovalThresholds } from "../../src/approvals/index.js";
import { axeFindings } from "../support/axe.js";
import { SHOTS, screenshot } from "../support/browser.js";
import { useConsoleStack } from "../support/console-stack.js";
import { openFilePicker, tabTo as tabToOn } from "../support/keyboard.js";

const fx = useConsoleStack({
  label: "console-day",
  clock: { toInProgressMs: 300, toFinalMs: 500 },
  approval: { thresholds: parseApprovalThresholds("USD:1000"), required: 1, expiresHours: 24 },
  reconcile: { sweepEveryMs: 500, staleAfterMs: 300 },
  users: { sam: ["submitter", "sam submits 123"], ann: ["approver", "ann approves 123"] },
  acceptDownloads: true,
});

const PAYEES = ["vendor-ach", "vendor-ach-2", "vendor-check", "vendor-wire"];

/** 30 rows: 27 right, three with mistakes (an amount in words, an unknown payee, a reused reference). */
function daySheet(): string {
  const lines = ["reference,from_account,to_account,amount,currency,payer_memo,attachment"];
  for (let i = 1; i <= 30; i++) {
    const ref = `DAY-${String(i).padStart(3, "0")}`;
    let amount = `${100 + i}.00`;
    let payee = PAYEES[i % PAYEES.length]!;
    let reference = ref;
    let attachment = "";
    if (i === 4) amount = "one hundred";
    if (i === 9) payee = "vendor-unknown";
    if (i === 17) reference = "DAY-016";
    if (i === 12) amount = "112.13"; // the sandbox fails amounts ending in 13
    if (i === 20) attachment = "invoices/inv-20.pdf";
    lines.push(`${reference},ops-checking,${payee},${amount},USD,Services ${i},${attachment}`);
  }
  return lines.join("\n");
}

/** The element's text with the no-break spaces of formatted amounts (`USD 1,000.00`) as plain spaces. */
async function text(selector: string): Promise<string> {
  return ((await fx.page.locator(selector).first().textContent()) ?? "").replaceAll("\u00a0", " ");
}

async function shot(name: string): Promise<void> {
  await screenshot(fx.page, `day-${name}`);
}

/** A small picture of the top of the page (what the README shows), beside the full-page ones. */
async function smallShot(name: string, from?: string): Promise<void> {
  await fx.page.evaluate(
    from ? `document.querySelector(${JSON.stringify(from)}).scrollIntoView()` : "window.scrollTo(0, 0)",
  );
  await fx.page.screenshot({ path: path.join(SHOTS, `small-${name}.png`) });
}

/** Fails on any serious or critical accessibility finding on the page as it is now. */
async function accessible(where: string): Promise<void> {
  expect(await axeFindings(fx.page), `axe-core on ${where}`).toEqual([]);
}

/** Presses Tab until the focused element matches `selector` (keyboard only), its focus ring visible. */
const tabTo = (selector: string, max = 80) => tabToOn(fx.page, selector, { max });

async function logIn(name: string, password: string): Promise<void> {
  const { page } = fx;
  await page.waitForURL(/\/login/);
  await page.getByLabel("User name").fill(name);
  await page.getByLabel("Password").fill(password);
  await page.keyboard.press("Enter");
  await expect.poll(() => page.locator("#who").textContent()).toContain(name);
}

describe("the operator's day at 30 rows", () => {
  it("goes from a sheet with mistakes to a paid, downloaded result, by keyboard where it matters", {
    timeout: 240_000,
  }, async () => {
    const { page, stack } = fx;
    const url = stack.server.url;
    const { mkdir, writeFile } = await import("node:fs/promises");
    const files = path.join(stack.dir, "files");
    await mkdir(files, { recursive: true });
    await writeFile(path.join(files, "day.csv"), daySheet());
    await writeFile(path.join(files, "inv-20.pdf"), "%PDF-1.4 invoice 20\n");

    // The submitter logs in; the console opens on Upload.
    await page.goto(`${url}/`);
    await page.waitForURL(/\/login/);
    await accessible("the log-in page");
    await shot("01-login");
    await logIn("sam", "sam submits 123");
    await expect.poll(() => page.url()).toContain("#/upload");
    await accessible("upload");
    await shot("02-upload");

    // Keyboard only: to the file picker (its label shows the focus), open it, choose the sheet and the file.
    const chooser = await openFilePicker(page, "#file", "Space");
    await chooser.setFiles([path.join(files, "day.csv"), path.join(files, "inv-20.pdf")]);
    await page.locator("#validation-title", { hasText: "day.csv" }).waitFor();
    await expect.poll(() => page.url()).toMatch(/#\/uploads\/upl_/);
    const uploadUrl = page.url();
    expect(await page.locator("#validation-summary").textContent()).toContain("30 rows: 27 valid, 3 invalid");
    // The rows with problems come first, each cell with its problem marked and editable.
    const firstRows = await page
      .locator("#preview tbody tr")
      .evaluateAll((trs) => trs.slice(0, 4).map((t) => t.getAttribute("data-row")));
    expect(firstRows).toEqual(["5", "10", "18", "2"]);
    await accessible("the upload with mistakes");
    await shot("03-upload-mistakes");
    await smallShot("upload-mistakes");

    // Corrections, by keyboard: type the new value, Enter checks the row again at once.
    const fix = async (row: number, column: string, value: string) => {
      await tabTo(`#preview tr[data-row="${row}"] input[data-column="${column}"]`, 200);
      await page.keyboard.press("Control+A");
      await page.keyboard.type(value);
      await page.keyboard.press("Enter");
      await expect.poll(() => page.locator("#status").textContent()).toContain(`Row ${row} is valid now`);
    };
    await fix(5, "amount", "104.00");
    await fix(10, "to_account", "vendor-ach");
    await fix(18, "reference", "DAY-017");
    expect(await page.locator("#validation-summary").textContent()).toContain("30 rows: 30 valid, 0 invalid");
    expect(await page.locator("#validation-summary").textContent()).toContain("3 row(s) corrected");
    await shot("04-upload-corrected");

    // A reload comes back to the same upload, corrections kept.
    await page.reload();
    await page.locator("#validation-summary", { hasText: "30 valid" }).waitFor();
    expect(page.url()).toBe(uploadUrl);
    await page.getByLabel("Show only rows with problems").check();
    await expect.poll(() => page.url()).toContain("only=1");
    await page.goBack();
    await expect.poll(() => page.url()).toBe(uploadUrl);

    // Submit, confirming the total; it is held for approval.
    await tabTo("#submit-reject");
    await page.keyboard.press("Enter");
    await expect.poll(() => text("dialog")).toContain("30 rows paying USD 3,465.13");
    await accessible("the submit confirmation");
    await shot("05-submit-confirm");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.url()).toMatch(/#\/batches\/b/);
    const batchUrl = page.url();
    const batchId = batchUrl.split("/").pop()!;
    await page.locator("#approval-summary", { hasText: "Waiting for approval" }).waitFor();
    await expect
      .poll(() => page.locator("#approval-card").textContent())
      .toContain("You submitted this batch");
    await accessible("the held batch (submitter)");
    await shot("06-held-for-approval");

    // The archive holds the corrected sheet.
    const archived = await stack.server.redis.hget(`${stack.prefix}:batch:${batchId}`, "sheet");
    const archivedText = await readFile(JSON.parse(archived!).archivedSheetPath, "utf8");
    expect(archivedText).toContain("DAY-004,ops-checking,vendor-ach,104.00");
    expect(archivedText).not.toContain("one hundred");

    // The approver gets the link: it survives her log-in.
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(/\/login/);
    await page.goto(batchUrl);
    await logIn("ann", "ann approves 123");
    await expect.poll(() => page.url()).toBe(batchUrl);
    await expect
      .poll(() => text("#approval-card"))
      .toContain("reached the approval threshold of USD 1,000.00");
    expect(await page.locator("#largest tbody tr").count()).toBe(5);
    expect(await text("#largest tbody tr")).toContain("USD 130.00");
    await accessible("the held batch (approver)");
    await shot("07-approver-sees-why");
    await tabTo("#approve");
    await page.keyboard.press("Enter");
    const total = "USD 3,465.13";
    await expect.poll(() => text("dialog")).toContain(`You approve paying ${total} in 30 rows`);
    await shot("08-approve-confirm");
    await smallShot("approve-confirm");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#status").textContent()).toContain("Approved");

    // Progress to the end: money per currency split into paid, failed, pending.
    await page.locator("#batch-header .state", { hasText: "finished" }).waitFor({ timeout: 120_000 });
    await expect.poll(() => text("#progress-card tbody")).toContain("USD 112.13");
    const usd = (await page.locator("#progress-card tbody tr").first().locator("td").allTextContents()).map(
      (t) => t.replaceAll("\u00a0", " "),
    );
    expect(usd).toEqual(["USD 3,353.00", "USD 112.13", "USD 0.00", total]);
    // The rows table follows the batch: no row still says it waits for the approval.
    await expect
      .poll(() => page.locator("#rows tbody tr[data-state='queued']").count(), { timeout: 10_000 })
      .toBe(0);
    expect(await page.locator("#rows tbody tr[data-state='completed']").count()).toBe(29);
    await accessible("the finished batch");
    await shot("09-finished");
    await smallShot("batch-finished");

    // The failed row: what happened and what to do; its details by address.
    await page.getByLabel("Show").selectOption("failed,rejected,error,canceled,returned");
    await page.getByRole("button", { name: "Show rows" }).click();
    await expect.poll(() => page.locator("#rows tbody tr[data-state]").count()).toBe(1);
    expect(await page.locator("#rows tbody tr[data-state='failed']").textContent()).toContain(
      "Next: Check the payee's bank details",
    );
    await page.getByRole("link", { name: "Details of row 13" }).click();
    await expect.poll(() => page.url()).toContain(`#/batches/${batchId}/rows/13`);
    await expect.poll(() => page.locator("#row-detail").textContent()).toContain("What to do");
    await accessible("a row's details");
    await shot("10-failed-row");

    // Correct and retry, by the submitter: a new amount the service pays. The batch needed approval,
    // so the correction is held for approval again (docs/design.md §3.14) and the other user approves.
    const rowUrl = page.url();
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(/\/login/);
    await page.goto(rowUrl);
    await logIn("sam", "sam submits 123");
    await page.locator("#correct-form").waitFor();
    // By keyboard: to the amount, type it, to the button, Enter.
    await tabTo("#correct-amount", 120);
    await page.keyboard.type("112.00");
    await accessible("the correct-and-retry form");
    await tabTo("#correct-submit");
    await page.keyboard.press("Enter");
    await expect.poll(() => text("#correct-result")).toContain("Held for approval");
    expect(await text("#correct-result")).toContain("amount 112.13 → 112.00");
    await page.locator("#correct-form").screenshot({ path: path.join(SHOTS, "small-correct-row.png") });
    await accessible("a correction held for approval");
    await shot("10-correct-1-held");
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(/\/login/);
    await page.goto(batchUrl);
    await logIn("ann", "ann approves 123");
    await expect.poll(() => text("#held-corrections")).toContain("Row 13, by sam (console)");
    await accessible("a correction round waiting for approval");
    await shot("10-correct-2-to-approve");
    // The round decides the corrections only, and its buttons say so.
    expect(await page.locator("#approve").textContent()).toBe("Approve these corrections…");
    expect(await page.locator("#reject").textContent()).toBe("Reject these corrections…");
    await page.locator("#approve").click();
    await expect.poll(() => text("dialog")).toContain("Row 13, by sam: amount 112.13 → 112.00");
    await accessible("the confirmation of a correction round");
    await shot("10-correct-3-approve-confirm");
    await page.getByRole("dialog").getByRole("button", { name: "Approve the corrections" }).click();
    await expect.poll(() => page.locator("#status").textContent()).toContain("Approved");
    await expect
      .poll(
        async () =>
          (await page.evaluate(`fetch("/api/v1/batches/${batchId}/rows/13").then((r) => r.json())`)) as {
            attempt: number;
            state: string;
          },
        { timeout: 60_000 },
      )
      .toMatchObject({ attempt: 2, state: "completed" });
    await page.goto(`${batchUrl}/rows/13`);
    await expect.poll(() => text("#row-detail")).toContain("(attempt 2)");
    await expect.poll(() => text("#row-detail")).toContain("completed");
    await shot("10-correct-4-paid");
    await page.goto(batchUrl);
    // Every row paid now: the money moved from failed to paid (the total is the corrected amounts').
    await expect
      .poll(async () =>
        (await page.locator("#progress-card tbody tr").first().locator("td").allTextContents()).map((t) =>
          t.replaceAll("\u00a0", " "),
        ),
      )
      .toEqual(["USD 3,465.00", "USD 0.00", "USD 0.00", "USD 3,465.00"]);

    // Searches: by payee name, by amount, by reference; each has an address.
    for (const [q, rows] of [
      ["Summit", 7],
      ["130.00", 1],
      ["day-02", 10],
    ] as const) {
      await page.goto(`${batchUrl}?q=${encodeURIComponent(q)}`);
      await expect.poll(() => page.locator("#rows tbody tr[data-row]").count(), { message: q }).toBe(rows);
    }

    // The ledger check, run from the page: every row agrees with the service's payments.
    await page.goto(batchUrl);
    await page.locator("#ledger-summary", { hasText: "Not checked yet" }).waitFor();
    await page.getByRole("button", { name: "Check against the service's ledger" }).click();
    await page.locator("#ledger-summary .state", { hasText: "matches" }).waitFor();
    expect(await text("#ledger-summary")).toContain(
      "All 30 rows agree with the service's ledger (31 payments)",
    );
    await accessible("the ledger check");

    // The bank returns a paid row: the batch shows it apart, and the row says what to do.
    const paid = (await page.evaluate(
      `fetch("/api/v1/batches/${batchId}/rows/2").then((r) => r.json())`,
    )) as { paymentId: string; state: string };
    expect(paid.state).toBe("completed");
    const returned = await fetch(`${stack.sandbox.url}/_sandbox/payments/${paid.paymentId}/return`, {
      method: "POST",
      headers: { "api-key": stack.sandbox.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ reason: { code: "R02", message: "account closed" } }),
    });
    expect(returned.status).toBe(200);
    await page.locator("#returned-note").waitFor({ timeout: 60_000 });
    expect(await text("#returned-note")).toContain("1 row was paid, then came back");
    const money = (await page.locator("#progress-card tbody tr").first().locator("td").allTextContents()).map(
      (t) => t.replaceAll("\u00a0", " "),
    );
    expect(money).toEqual(["USD 3,364.00", "USD 0.00", "USD 101.00", "USD 0.00", "USD 3,465.00"]);
    await page.getByRole("link", { name: "Show the returned rows" }).click();
    await expect.poll(() => page.locator("#rows tbody tr[data-state]").count()).toBe(1);
    expect(await text("#rows tbody tr[data-state='returned']")).toContain("PAYMENT_RETURNED");
    expect(await text("#rows tbody tr[data-state='returned']")).toContain(
      "Next: Check the payee's bank details",
    );
    // Checked again: the ledger agrees (the service reports the payment failed; the row is returned).
    await page.getByRole("button", { name: "Check the ledger again" }).click();
    await expect.poll(() => text("#ledger-summary")).toContain("All 30 rows agree");
    await accessible("a batch with a returned row");
    await shot("10b-returned-and-ledger");

    // A second payment for row 3 appears at the service: the check names it, with a link to the row.
    const row3 = (await page.evaluate(
      `fetch("/api/v1/batches/${batchId}/rows/3").then((r) => r.json())`,
    )) as {
      paymentId: string;
    };
    const first = await stack.client.payments.get(row3.paymentId);
    await stack.client.payments.create(
      {
        amount: first.amount,
        originatingAccountId: first.originatingAccountId,
        receivingAccountId: first.receivingAccountId,
        deliveryPreference: first.deliveryPreference,
        externalId: "DAY-002-again",
        metadata: { ...first.metadata },
      },
      { idempotencyKey: `again-${batchId}` },
    );
    await page.getByRole("button", { name: "Check the ledger again" }).click();
    await expect.poll(() => text("#ledger-summary")).toContain("29 of 30 rows agree");
    expect(await text("#ledger-kinds")).toContain(
      "1 × the service has a second payment for the row (second-payment)",
    );
    expect(await page.locator("#ledger-differences tbody tr").count()).toBe(1);
    await page.locator("#ledger-card").screenshot({ path: path.join(SHOTS, "small-ledger-difference.png") });
    await page.locator("#ledger-differences").getByRole("link", { name: "3", exact: true }).click();
    await expect.poll(() => page.url()).toContain(`#/batches/${batchId}/rows/3`);
    await accessible("the ledger check with a difference");
    await shot("10c-ledger-difference");
    await smallShot("batch-returned", "#progress-card");

    // The result file, in the other format, mid-day or not: nothing added to outbox/.
    const before = await readdir(path.join(stack.dir, "outbox")).catch(() => [] as string[]);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download the result (XLSX)" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/\.xlsx$/);
    const after = await readdir(path.join(stack.dir, "outbox")).catch(() => [] as string[]);
    expect(after.filter((f) => f.endsWith(".xlsx"))).toEqual(before.filter((f) => f.endsWith(".xlsx")));

    // The other pages: the list, the audit trail (admins only: the approver gets the list), the reference.
    await page.getByRole("link", { name: "Batches", exact: true }).click();
    await expect.poll(() => page.locator("#batch-list tbody tr").count()).toBeGreaterThan(0);
    await accessible("the batch list");
    await shot("11-batches");
    await page.getByRole("link", { name: "API reference" }).click();
    await page.locator("#ref-title").waitFor();
    await accessible("the API reference");
    await shot("12-reference");
  });
});
