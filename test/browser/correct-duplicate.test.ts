import { describe, expect, it } from "vitest";
import { paymentsOfBatch } from "../integration/pipeline/helpers.js";
import { submitSheetThroughApi, until } from "../support/api-stack.js";
import { axeFindings } from "../support/axe.js";
import { logInAt, screenshot } from "../support/browser.js";
import { useConsoleStack } from "../support/console-stack.js";

const fx = useConsoleStack({
  label: "correct-dup-browser",
  clock: { toInProgressMs: 50, toFinalMs: 50 },
  reconcile: { sweepEveryMs: 200, staleAfterMs: 100 },
  duplicateWindowDays: 30,
  // An admin's token: it submits, and reads the audit trail.
  tokens: { ops: "admin" },
  users: { olga: ["admin", "olga corrects 123"] },
});
const { call } = fx;

/** Submits a one-row sheet and waits for its row to reach `state`. */
async function batchOf(name: string, row: string, state: string): Promise<string> {
  const batchId = await submitSheetThroughApi(
    fx.stack.server.url,
    fx.tokens.ops,
    name,
    `reference,from_account,to_account,amount,currency\n${row}\n`,
  );
  await until(
    `row 2 of ${name} to be ${state}`,
    async () =>
      (await call("GET", `/api/v1/batches/${batchId}/rows/2`)).json.state === state ? true : undefined,
    30_000,
  );
  return batchId;
}

describe("a correction that is a possible duplicate", () => {
  it("is refused naming the other row, and paid once the operator confirms it", async () => {
    const { page, stack } = fx;
    const paid = await batchOf("paid.csv", "PAID-1,ops-checking,vendor-ach,41.27,USD", "completed");
    const failing = await batchOf("failing.csv", "FIX-1,ops-checking,vendor-ach,5.13,USD", "failed");

    await logInAt(page, `${stack.server.url}/#/batches/${failing}/rows/2`, "olga", "olga corrects 123");
    await page.locator("#correct-form").waitFor();
    // Nothing to confirm until the gate says there is.
    expect(await page.getByLabel(/Pay possible duplicates/).isVisible()).toBe(false);
    await page.getByLabel("New amount").fill("41.27");
    await page.getByRole("button", { name: "Correct and retry" }).click();
    await expect
      .poll(() => page.locator("#correct-result").textContent(), { timeout: 30_000 })
      .toContain("Refused");
    const refused = (await page.locator("#correct-result").textContent()) ?? "";
    expect(refused).toContain("POSSIBLE_DUPLICATE");
    expect(refused).toContain(`row 2 (reference PAID-1) of batch ${paid}`);
    expect(await call("GET", `/api/v1/batches/${failing}/rows/2`)).toMatchObject({
      json: { state: "failed", attempt: 1 },
    });
    const confirm = page.getByLabel(/Pay possible duplicates/);
    await confirm.waitFor();
    expect(await axeFindings(page)).toEqual([]);
    await screenshot(page, "correct-duplicate-01-refused");

    await confirm.check();
    await page.getByRole("button", { name: "Correct and retry" }).click();
    await expect
      .poll(() => page.locator("#correct-result").textContent(), { timeout: 30_000 })
      .toContain("Retried");
    // The row's details follow it to its new attempt, above the outcome.
    await expect.poll(() => page.locator("#row-facts").textContent()).toMatch(/USD\s41\.27/);
    expect(await page.locator("#row-facts dl").textContent()).toMatch(/Attempt\s*2/);
    expect(await page.locator("#correct-result").textContent()).toContain("Retried");
    await screenshot(page, "correct-duplicate-02-retried");
    await until(
      "the confirmed row to be paid",
      async () => {
        const r = (await call("GET", `/api/v1/batches/${failing}/rows/2`)).json;
        return r.attempt === 2 && r.state === "completed" ? r : undefined;
      },
      30_000,
    );
    expect((await paymentsOfBatch(stack.client, failing)).map((p) => [p.externalId, p.amount])).toEqual(
      expect.arrayContaining([["FIX-1-r2", 4127]]),
    );
    const audit = await call("GET", `/api/v1/audit?batch=${failing}&action=batch.duplicates-confirmed`);
    expect(audit.json.data).toEqual([
      expect.objectContaining({
        actor: expect.objectContaining({ name: "olga" }),
        detail: expect.objectContaining({ rows: [2] }),
      }),
    ]);
  }, 180_000);
});
