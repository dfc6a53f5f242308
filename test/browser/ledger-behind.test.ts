import { afterAll, describe, expect, it } from "vitest";
import { createWorkerClient } from "../../src/pipeline/index.js";
import { type ReconcileService, startReconcileService } from "../../src/reconcile/index.js";
import { paymentsOfBatch, REDIS_URL } from "../integration/pipeline/helpers.js";
import { submitSheetThroughApi, until } from "../support/api-stack.js";
import { axeFindings } from "../support/axe.js";
import { logInAt, screenshot } from "../support/browser.js";
import { useConsoleStack } from "../support/console-stack.js";

// No reconcile option: no webhooks reach the server and nothing looks at the rows.
const fx = useConsoleStack({
  label: "ledger-behind",
  clock: { toInProgressMs: 50, toFinalMs: 50 },
  tokens: { ops: "admin" },
  users: { lena: ["admin", "lena checks 123"] },
});
const { call } = fx;
let reconcile: ReconcileService | undefined;

afterAll(async () => {
  await reconcile?.stop(2000);
}, 60_000);

describe("a ledger check of rows behind their payments", () => {
  it("says they only wait for the worker, which makes them follow; checked again, the batch matches", async () => {
    const { page, stack } = fx;
    const batchId = await submitSheetThroughApi(
      stack.server.url,
      fx.tokens.ops,
      "behind.csv",
      "reference,from_account,to_account,amount,currency\nLB-1,ops-checking,vendor-ach,12.40,USD\nLB-2,ops-checking,vendor-ach,12.50,USD\n",
    );
    await until(
      "both payments completed at the service",
      async () => {
        const payments = await paymentsOfBatch(stack.client, batchId);
        return payments.length === 2 && payments.every((p) => p.status === "completed") ? true : undefined;
      },
      30_000,
    );
    const rows = (await call("GET", `/api/v1/batches/${batchId}/rows`)).json.data as { state: string }[];
    expect(rows.map((r) => r.state)).toEqual(["submitted", "submitted"]);

    await logInAt(page, `${stack.server.url}/#/batches/${batchId}`, "lena", "lena checks 123");
    await page.getByRole("button", { name: "Check against the service's ledger" }).click();
    await page.locator("#ledger-behind").waitFor();
    expect(await page.locator("#ledger-behind").innerText()).toMatch(
      /^2 of these rows were only behind their payment: the service showed a newer state/,
    );
    expect(await page.locator("#ledger-summary").innerText()).toContain("2 differences");
    expect(await page.locator("#ledger-differences").innerText()).toContain("has not followed it yet");
    // Nothing for a person to chase: the advice to open each row is not given.
    expect(await page.getByText("Next: open each row").count()).toBe(0);
    expect(await axeFindings(page)).toEqual([]);
    await screenshot(page, "ledger-behind-01-marked");

    // A reconciler comes up: the rows the check marked are looked at, and follow their payments.
    reconcile = await startReconcileService({
      redisUrl: REDIS_URL,
      prefix: stack.prefix,
      client: createWorkerClient(stack.api),
      sweepEveryMs: 600_000,
      staleAfterMs: 600_000,
      quietMs: 0,
      lookEveryMs: 50,
    });
    await until("both rows to follow", async () => {
      const now = (await call("GET", `/api/v1/batches/${batchId}/rows`)).json.data as { state: string }[];
      return now.every((r) => r.state === "completed") ? true : undefined;
    });
    await page.getByRole("button", { name: "Check the ledger again" }).click();
    await page.locator("#ledger-summary .state", { hasText: "matches" }).waitFor();
    expect(await page.locator("#ledger-behind").count()).toBe(0);
    // The rows below follow too: the page read the batch anew after the check and saw rows move.
    await page.locator("#rows td", { hasText: "completed" }).first().waitFor({ timeout: 10_000 });
    await screenshot(page, "ledger-behind-02-matches");

    // Another operator checks it again (through the API): the open page shows their check, unreloaded.
    const checkedAt = () => page.locator("#ledger-summary time").getAttribute("datetime");
    const shown = await checkedAt();
    const again = await call("GET", `/api/v1/batches/${batchId}/audit`);
    expect(again.status).toBe(200);
    await expect.poll(checkedAt, { timeout: 15_000 }).not.toBe(shown);
    expect(await page.locator("#ledger-summary").innerText()).toContain("matches");
  }, 120_000);
});
