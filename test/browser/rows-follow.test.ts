/**
 * The rows table follows its batch to the end, in Debian's Chromium: while the reader's focus is in
 * the rows (the Show filter), the live refreshes leave the table alone; once the focus leaves, the
 * table shows every row's outcome, even when the batch finished meanwhile and nothing moves any more.
 */
import { describe, expect, it } from "vitest";
import { submitSheetThroughApi, until } from "../support/api-stack.js";
import { logInAt } from "../support/browser.js";
import { useConsoleStack } from "../support/console-stack.js";

// Payments settle seconds after they are sent: the page is open, and the focus in the rows, first.
const fx = useConsoleStack({
  label: "rows-follow",
  clock: { toInProgressMs: 4_000, toFinalMs: 8_000 },
  reconcile: { sweepEveryMs: 200, staleAfterMs: 100 },
  tokens: { feeder: "submitter" },
  users: { vera: ["viewer", "vera reads 123"] },
});

const FINAL = new Set(["completed", "failed", "canceled", "rejected", "returned"]);

describe("the rows of a batch that finishes while the reader is in the table", () => {
  it("stay as they are under the reader's focus, and show every outcome once it leaves", {
    timeout: 120_000,
  }, async () => {
    const { page, stack } = fx;
    const sheet = [
      "reference,from_account,to_account,amount,currency",
      "FOL-1,ops-checking,vendor-ach,21.00,USD",
      "FOL-2,ops-checking,vendor-ach,22.00,USD",
      "FOL-3,ops-checking,vendor-ach,23.00,USD",
    ].join("\n");
    const batchId = await submitSheetThroughApi(
      stack.server.url,
      fx.tokens.feeder,
      "follow.csv",
      `${sheet}\n`,
    );
    await logInAt(page, `${stack.server.url}/#/batches/${batchId}`, "vera", "vera reads 123");
    await page.locator("#rows tbody tr[data-row='4']").waitFor();
    const states = () =>
      page
        .locator("#rows tbody tr[data-state]")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-state")));
    await page.getByLabel("Show").focus();
    const before = await states();
    expect(
      before.some((s) => !FINAL.has(s ?? "")),
      `rows already final when the page opened: ${before}`,
    ).toBe(true);

    // The batch finishes while the focus stays on the filter: the table is left as it was.
    await until(
      "the batch to finish",
      async () => (await fx.call("GET", `/api/v1/batches/${batchId}`)).json.state === "finished",
      60_000,
    );
    await page.locator("#batch-header .state", { hasText: "finished" }).waitFor();
    await page.waitForTimeout(4_000);
    expect(await states()).toEqual(before);

    // The focus leaves the rows: the table catches up, with nothing left to move the batch.
    await page.locator("#progress-title").click();
    await expect
      .poll(states, { timeout: 20_000, interval: 250 })
      .toEqual(["completed", "completed", "completed"]);
  });
});
