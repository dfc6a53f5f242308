/**
 * Stopping a batch in a real browser (Debian's Chromium driven by playwright-core): a batch paused
 * through the API shows a banner saying who paused it and why, with Resume and Cancel; cancelling it
 * in the console (after its confirmation) shows the canceled banner. Screenshots go to
 * test/browser/screenshots/ (ignored by git).
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type Json, withBearer } from "../support/api-stack.js";
import { axeFindings } from "../support/axe.js";
import { logInAt, SHOTS, screenshot } from "../support/browser.js";
import { useConsoleStack } from "../support/console-stack.js";

// Payments stay scheduled: the batch is still running when the operator looks at it.
const fx = useConsoleStack({
  label: "stop-browser",
  clock: { toInProgressMs: 600_000, toFinalMs: 600_000 },
  concurrency: 1,
  tokens: { "ops-admin": "admin" },
  users: { sam: ["submitter", "sam submits 123"] },
});
const { call } = fx;

describe("a batch stopped by an operator", () => {
  it("shows who paused it and why, and can be canceled from the console", async () => {
    const { page, stack } = fx;
    // The submitter has the list of batches open when the batch comes in: it joins the list live.
    await logInAt(page, `${stack.server.url}/#/batches`, "sam", "sam submits 123");
    await page.locator("#batch-list tbody tr").first().waitFor();
    const lines = ["reference,from_account,to_account,amount,currency"];
    for (let i = 1; i <= 40; i++) lines.push(`STOPB-${i},ops-checking,vendor-ach,${10 + i}.00,USD`);
    const form = new FormData();
    form.append("file", new Blob([`${lines.join("\n")}\n`]), "stop-me.csv");
    const up = (await (
      await fetch(
        `${stack.server.url}/api/v1/sheets`,
        withBearer(fx.tokens["ops-admin"], { method: "POST", body: form }),
      )
    ).json()) as Json;
    const made = await call("POST", "/api/v1/batches", { sheetId: up.id });
    expect(made.status, made.text).toBe(201);
    const batchId = made.json.id as string;
    const paused = await call("POST", `/api/v1/batches/${batchId}/pause`, { reason: "amounts look doubled" });
    expect(paused.status, paused.text).toBe(200);
    expect((await call("GET", `/api/v1/batches/${batchId}`)).json.pause).toMatchObject({
      by: "ops-admin",
      reason: "amounts look doubled",
      byBreaker: false,
    });

    const listed = page.locator(`#batch-list tbody tr[data-batch="${batchId}"]`);
    await expect.poll(() => listed.locator(".state-paused").count()).toBe(1);
    expect(await listed.textContent()).toContain("stop-me.csv");
    await screenshot(page, "stop-00-list-paused");
    await listed.getByRole("link", { name: batchId }).click();
    await expect.poll(() => page.locator("#stop-banner").textContent()).toContain("Paused by ops-admin");
    expect(await page.locator("#stop-banner").textContent()).toContain("amounts look doubled");
    expect(await page.getByRole("button", { name: "Resume" }).isVisible()).toBe(true);
    expect(await axeFindings(page)).toEqual([]);
    await screenshot(page, "stop-01-paused");
    await page.locator("#stop-controls").screenshot({ path: path.join(SHOTS, "small-batch-paused.png") });

    await page.getByRole("button", { name: "Cancel batch…" }).click();
    await page.getByRole("dialog").waitFor();
    expect(await axeFindings(page), "axe-core on the cancel confirmation").toEqual([]);
    await screenshot(page, "stop-02-cancel-confirm");
    await page.getByRole("button", { name: "Cancel the batch" }).click();
    await expect.poll(() => page.locator("#stop-banner").textContent()).toContain("Canceled by sam");
    // The rows show it at once: none is left queued.
    await expect.poll(() => page.locator("#rows tbody tr[data-state='queued']").count()).toBe(0);
    expect(await page.locator("#rows tbody tr[data-state='canceled-unsent']").count()).toBeGreaterThan(0);
    // The money per currency still adds up: every row is paid, failed or canceled, or pending.
    const moneyRows = (await page
      .locator("#progress-card table tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
      )) as string[][];
    const amount = (text: string) => Number(text.replace(/[^0-9.]/g, "") || "0");
    for (const [paid, failed, pending, total] of moneyRows) {
      expect(amount(paid!) + amount(failed!) + amount(pending!)).toBeCloseTo(amount(total!), 2);
    }
    expect(moneyRows.length).toBeGreaterThan(0);
    expect(await axeFindings(page), "axe-core on the canceled banner").toEqual([]);
    await screenshot(page, "stop-03-canceled");
    const view = (await call("GET", `/api/v1/batches/${batchId}`)).json;
    expect(view.canceled).toMatchObject({ by: "sam" });
    expect(view.counts["canceled-unsent"]).toBeGreaterThan(0);
    expect(view.counts.queued).toBe(0);
  }, 120_000);
});
