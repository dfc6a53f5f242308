/**
 * The approvals flow in a real browser (Debian's Chromium driven by playwright-core): with
 * APPROVAL_THRESHOLDS set, a sheet over the threshold dropped into the inbox waits; nothing is paid
 * until a second person (an approver, not the inbox that submitted it) approves it in the console;
 * then its rows are paid. Screenshots go to test/browser/screenshots/ (ignored by git).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import { DEFAULT_TIMEOUT_MS } from "../../../src/payouts-api/index.js";
import { startWatchService, type WatchService } from "../../../src/watch/index.js";
import { paymentsOfBatch, REDIS_URL } from "../../integration/pipeline/helpers.js";
import { type Json, until } from "../../support/api-stack.js";
import { axeFindings } from "../../support/axe.js";
import { logInAt, screenshot } from "../../support/browser.js";
import { useConsoleStack } from "../../support/console-stack.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";

// The rule as production sets it (APPROVAL_THRESHOLDS), given to every way a batch comes in.
const approval = loadConfig({ APPROVAL_THRESHOLDS: "USD:1000" }).approval;
const fx = useConsoleStack({
  label: "approvals-browser",
  clock: { toInProgressMs: 600_000, toFinalMs: 600_000 },
  concurrency: 2,
  approval,
  tokens: { "ops-admin": "admin" },
  users: { ann: ["approver", "ann approves 123"] },
});
let watch: WatchService | undefined;

const get = async (route: string): Promise<Json> => (await fx.call("GET", route)).json;

beforeAll(async () => {
  watch = await startWatchService({
    ...fx.stack.api,
    apiTimeoutMs: DEFAULT_TIMEOUT_MS,
    pipeline: {
      ...PIPELINE_DEFAULTS,
      approval,
      redisUrl: REDIS_URL,
      prefix: fx.stack.prefix,
      dataDir: fx.stack.dir,
    },
    stableMs: 200,
    rescanMs: 500,
  });
}, 60_000);

afterAll(async () => {
  await watch?.stop();
}, 60_000);

describe("a sheet over the threshold dropped into the inbox", () => {
  it("is paid only after a second person approves it in the console", async () => {
    const { page, stack } = fx;
    await writeFile(
      path.join(stack.dir, "inbox", "big-payroll.csv"),
      [
        "reference,from_account,to_account,amount,currency,delivery",
        "APRB-1,ops-checking,vendor-ach,600.00,USD,standard-ach",
        // Not the same payee and amount twice: that is a possible duplicate, which the inbox refuses.
        "APRB-2,ops-checking,vendor-ach,650.00,USD,standard-ach",
      ].join("\n"),
    );
    const batchId = await until(
      "the inbox to submit the sheet",
      async () => {
        const list = await get("/api/v1/batches");
        return (list.data as Json[]).find((b) => b.sourceName === "big-payroll.csv")?.id as
          | string
          | undefined;
      },
      60_000,
    );
    const waiting = (await get(`/api/v1/batches/${batchId}/approval`)).approval;
    expect(waiting).toMatchObject({ status: "awaiting-approval", submittedBy: "system:inbox" });
    await sleep(1000);
    expect(await paymentsOfBatch(stack.client, batchId)).toEqual([]);

    // The approver opens the batch's link (as she would from a message) and logs in on the way.
    await logInAt(page, `${stack.server.url}/#/batches/${batchId}`, "ann", "ann approves 123");
    await expect.poll(() => page.locator("#who").textContent()).toBe("ann (approver)");
    await expect.poll(() => page.url()).toContain(`#/batches/${batchId}`);
    await expect
      .poll(() => page.locator("#approval-summary").textContent())
      .toContain("Waiting for approval: 0 of 1 given");
    expect(await page.locator("#approval-card").textContent()).toContain("Submitted by system:inbox");
    expect(await axeFindings(page)).toEqual([]);
    await screenshot(page, "approvals-01-waiting");
    // The list says the batch waits for approval (not "submitting").
    await page.getByRole("link", { name: "Batches", exact: true }).click();
    await expect
      .poll(() => page.locator("tr", { has: page.getByRole("link", { name: batchId }) }).textContent())
      .toContain("awaiting-approval");
    await screenshot(page, "approvals-00-list");
    await page.getByRole("link", { name: batchId }).click();

    await page.getByRole("button", { name: "Approve this batch…" }).click();
    await page.getByRole("button", { name: /^Approve paying USD/ }).click();
    await expect.poll(() => page.locator("#status").textContent()).toContain("Approved");
    expect(await page.locator("#approval-list").textContent()).toContain("Approved by ann");
    await screenshot(page, "approvals-02-approved");

    const paid = await until(
      "both rows to be paid",
      async () => {
        const found = await paymentsOfBatch(stack.client, batchId);
        return found.length === 2 ? found : undefined;
      },
      60_000,
    );
    expect(new Set(paid.map((p) => p.metadata?.payouts_row)).size).toBe(2);
    const approved = await get(`/api/v1/batches/${batchId}`);
    expect(approved.approval).toMatchObject({ status: "approved", approvals: [{ by: "ann" }] });
    expect(approved.state).not.toBe("awaiting-approval");
  }, 180_000);
});
