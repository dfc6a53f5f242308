/**
 * "Correct and retry" in a real browser (Debian's Chromium driven by playwright-core), against the real
 * server, Redis and sandbox, with APPROVAL_THRESHOLDS=USD:1000: an operator opens a failed row, gives
 * it a new amount and payee, and the console says it is held for approval (a changed payment over the
 * threshold, docs/design.md §3.14); the batch's approval card lists the correction; nothing is paid
 * until an approver approves it; the audit page, filtered by the batch, shows what changed. Screenshots
 * go to test/browser/screenshots/ (ignored by git).
 */
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { parseApprovalThresholds } from "../../src/approvals/index.js";
import { paymentsOfBatch } from "../integration/pipeline/helpers.js";
import { submitSheetThroughApi, until } from "../support/api-stack.js";
import { axeFindings } from "../support/axe.js";
import { logInAt, SHOTS, screenshot } from "../support/browser.js";
import { useConsoleStack } from "../support/console-stack.js";

const fx = useConsoleStack({
  label: "correct-browser",
  clock: { toInProgressMs: 50, toFinalMs: 50 },
  reconcile: { sweepEveryMs: 200, staleAfterMs: 100 },
  approval: { thresholds: parseApprovalThresholds("USD:1000"), required: 1, expiresHours: 72 },
  tokens: { feeder: "submitter", ann: "approver" },
  users: { olga: ["admin", "olga corrects 123"] },
});
const call = fx.callAs;
const { tokens } = fx;

describe("correct and retry in the console", () => {
  it("holds a corrected failed row for approval, shows it to the approver, and audits it", async () => {
    const { page, stack } = fx;
    const sheet =
      "reference,from_account,to_account,amount,currency\nFIX-ME-1,ops-checking,vendor-ach,5.13,USD\n";
    const batchId = await submitSheetThroughApi(stack.server.url, tokens.feeder, "to-fix.csv", sheet);
    await until(
      "the row to fail",
      async () =>
        (await call("feeder", "GET", `/api/v1/batches/${batchId}/rows/2`)).json.state === "failed"
          ? true
          : undefined,
      30_000,
    );

    await logInAt(page, `${stack.server.url}/#/batches/${batchId}/rows/2`, "olga", "olga corrects 123");
    await expect.poll(() => page.locator("#who").textContent()).toBe("olga (admin)");
    await page.locator("#correct-form").waitFor();
    await page.getByLabel("New amount").fill("2500.00");
    await page.getByLabel("New payee account").fill("vendor-ach-2");
    expect(await axeFindings(page)).toEqual([]);
    await page.getByRole("button", { name: "Correct and retry" }).click();
    await expect.poll(() => page.locator("#correct-result").textContent()).toContain("Held for approval");
    const result = (await page.locator("#correct-result").textContent()) ?? "";
    expect(result).toContain("USD 2500.00 reaches the USD threshold");
    expect(result).toContain("amount 5.13 → 2500.00");
    expect(result).toContain("to_account vendor-ach → vendor-ach-2");
    await screenshot(page, "correct-01-held");

    // Nothing is paid: the row is still its failed first attempt, and the service has one payment.
    await sleep(500);
    expect((await call("feeder", "GET", `/api/v1/batches/${batchId}/rows/2`)).json).toMatchObject({
      state: "failed",
      attempt: 1,
    });
    expect(await paymentsOfBatch(stack.client, batchId)).toHaveLength(1);

    // The approval card lists the correction waiting.
    await page.goto(`${stack.server.url}/#/batches/${batchId}`);
    await expect
      .poll(() => page.locator("#held-corrections").textContent())
      .toContain("Row 2, by olga (console)");
    expect(await page.locator("#approval-summary").textContent()).toContain("Waiting for approval");
    await screenshot(page, "correct-02-approval-card");

    // An approver approves; the corrected row is paid on its second attempt.
    expect((await call("ann", "POST", `/api/v1/batches/${batchId}/approve`)).json.outcome).toBe("approved");
    await until(
      "the corrected row to be paid",
      async () => {
        const r = (await call("feeder", "GET", `/api/v1/batches/${batchId}/rows/2`)).json;
        return r.attempt === 2 && r.state === "completed" ? r : undefined;
      },
      30_000,
    );
    const payments = await paymentsOfBatch(stack.client, batchId);
    expect(payments.find((p) => p.externalId === "FIX-ME-1-r2")?.amount).toBe(250_000);

    // The audit page, filtered by the batch: who corrected what, with old and new values.
    await page.goto(`${stack.server.url}/#/audit?batch=${batchId}`);
    await expect.poll(() => page.locator("#audit-list").textContent()).toContain("rows.correct");
    const audit = (await page.locator("#audit-list").textContent()) ?? "";
    expect(audit).toContain("row 2 amount: 5.13 → 2500.00");
    expect(audit).toContain("batch.approve");
    expect(await page.locator("#audit-export").getAttribute("href")).toBe(
      `/api/v1/audit.csv?batch=${batchId}`,
    );
    expect(await axeFindings(page)).toEqual([]);
    await screenshot(page, "correct-03-audit");

    // The filters in the page: the action typed in its field narrows the entries; the export follows.
    await page.getByLabel("What").fill("rows.correct");
    await page.getByRole("button", { name: "Show entries" }).click();
    await expect.poll(() => page.url()).toContain("action=rows.correct");
    await expect
      .poll(() => page.locator("#audit-list tbody tr").allTextContents())
      .toEqual([expect.stringContaining("rows.correct")]);
    expect(await page.locator("#audit-export").getAttribute("href")).toBe(
      `/api/v1/audit.csv?batch=${batchId}&action=rows.correct`,
    );
    expect(await axeFindings(page), "axe-core on the audit page, filtered in the page").toEqual([]);
    await page.evaluate("window.scrollTo(0, 0)");
    await page.screenshot({ path: path.join(SHOTS, "small-audit-filtered.png") });
  }, 180_000);
});
