/**
 * A failed row corrected while its batch is still sending, in Debian's Chromium: the batch page keeps
 * refreshing (progress on every event, the rows table every few seconds) while an operator reads a
 * failed row's details and types a correction, then sends it and waits for its outcome. Every refresh
 * leaves the details, the typed values and the outcome in place; while the answer is slow to come (a
 * running batch keeps the service and the server busy: 31.6 s was seen at 20,000 rows; here the browser
 * holds the request), the form says the correction is on its way and sends no second one; the outcome,
 * once there, stays across later refreshes; a page number typed into Go to page while a refresh of the
 * rows is on its way stays typed; a download link pressed while the progress is drawn anew still
 * downloads. Screenshots in test/browser/screenshots/.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { submitSheetThroughApi, until } from "../support/api-stack.js";
import { logInAt, SHOTS, screenshot } from "../support/browser.js";
import { useConsoleStack } from "../support/console-stack.js";

const ROWS = 600;
// One payment at a time against a slow service: the batch is sending for minutes, so the page
// refreshes all through the test.
const fx = useConsoleStack({
  label: "row-details-refresh",
  clock: { toInProgressMs: 50, toFinalMs: 50 },
  concurrency: 1,
  reconcile: { sweepEveryMs: 200, staleAfterMs: 100 },
  tokens: { feeder: "submitter" },
  users: { olga: ["admin", "olga corrects 123"] },
  acceptDownloads: true,
});
const { call } = fx;

/** The page (full) and the row's details alone, which are far below the 50 rows of the table. */
async function shots(name: string): Promise<void> {
  await screenshot(fx.page, name);
  await fx.page.locator("#row-detail").screenshot({ path: path.join(SHOTS, `${name}-details.png`) });
}

/** Times the rows table was drawn since {@link countRedraws} (each draw replaces the body's rows). */
const redraws = async (): Promise<number> =>
  Number(await fx.page.locator("#rows tbody").getAttribute("data-test-redraws"));

/** Counts the draws of the rows table from now on (the page's own script, as a string: no DOM types here). */
async function countRedraws(): Promise<void> {
  await fx.page.evaluate(`(() => {
    const body = document.querySelector("#rows tbody");
    body.setAttribute("data-test-redraws", "0");
    new MutationObserver(() =>
      body.setAttribute("data-test-redraws", String(Number(body.getAttribute("data-test-redraws")) + 1)),
    ).observe(body, { childList: true });
  })()`);
}

/** Waits until the rows table was drawn `n` more times, the focus away from the rows (as a reader's). */
async function waitForRedraws(n: number): Promise<void> {
  await fx.page.locator("#progress-title").click();
  const from = await redraws();
  await expect.poll(redraws, { timeout: 60_000, interval: 500 }).toBeGreaterThanOrEqual(from + n);
}

describe("a row's details while its batch is sending", () => {
  it("keeps the details, the typed correction and its outcome across refreshes", {
    timeout: 240_000,
  }, async () => {
    const { page, stack } = fx;
    // Row 2 fails at once (amounts ending in .13 fail at the sandbox); the other rows are paid.
    const lines = [
      "reference,from_account,to_account,amount,currency",
      "RDR-1,ops-checking,vendor-ach,5.13,USD",
    ];
    for (let i = 2; i <= ROWS; i++)
      lines.push(`RDR-${i},ops-checking,vendor-ach,${(10 + i / 100).toFixed(2)},USD`);
    stack.sandbox.setFaults({ latencyMs: 100 });
    const batchId = await submitSheetThroughApi(
      stack.server.url,
      fx.tokens.feeder,
      "sending.csv",
      `${lines.join("\n")}\n`,
    );
    await until(
      "row 2 to fail",
      async () => (await call("GET", `/api/v1/batches/${batchId}/rows/2`)).json.state === "failed",
      60_000,
    );

    await logInAt(page, `${stack.server.url}/#/batches/${batchId}`, "olga", "olga corrects 123");
    await page.locator("#rows tbody tr[data-row='2'][data-state='failed']").waitFor();
    await countRedraws();

    // The operator opens the failed row from the table and types a correction.
    await page.getByRole("link", { name: "Details of row 2", exact: true }).click();
    await page.locator("#correct-form").waitFor();
    await page.locator("#row-detail section").evaluate((s) => s.setAttribute("data-test-mark", "opened"));
    await page.getByLabel("New amount").fill("5.10");
    await page.getByLabel("New payee account").fill("vendor-ach-2");

    // Several refreshes while it is open: progress moves, the rows are drawn again, the details stay.
    const doneBefore = Number(await page.locator("progress").getAttribute("value"));
    await waitForRedraws(3);
    expect(Number(await page.locator("progress").getAttribute("value"))).toBeGreaterThan(doneBefore);
    expect(await page.locator("#row-detail section").getAttribute("data-test-mark")).toBe("opened");
    expect(await page.getByLabel("New amount").inputValue()).toBe("5.10");
    expect(await page.getByLabel("New payee account").inputValue()).toBe("vendor-ach-2");
    await shots("row-details-01-typed-while-sending");

    // The answer takes a while (a large batch keeps the service and the server busy: 31.6 s was seen):
    // here the browser holds the request until the test has looked. Meanwhile the form says the
    // correction is on its way and sends no second one.
    const corrections: string[] = [];
    let release = (): void => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route("**/rows/2/correct", async (route) => {
      corrections.push(route.request().method());
      await held;
      await route.continue();
    });
    await page.getByRole("button", { name: "Correct and retry" }).click();
    expect(await page.locator("#correct-result").textContent()).toContain("Correcting row 2");
    expect(await page.locator("#correct-submit").getAttribute("aria-disabled")).toBe("true");
    // An impatient second click (forced: the button says it is disabled, a person can still click it).
    await page.getByRole("button", { name: "Correct and retry" }).click({ force: true });
    await shots("row-details-02-correcting");
    await expect.poll(() => corrections).toEqual(["POST"]);
    release();
    await expect
      .poll(() => page.locator("#correct-result").textContent(), { timeout: 120_000, interval: 250 })
      .toContain("Retried");
    const outcome = (await page.locator("#correct-result").textContent()) ?? "";
    expect(outcome).toContain("amount 5.13 → 5.10");
    expect(outcome).toContain("to_account vendor-ach → vendor-ach-2");
    expect(corrections).toEqual(["POST"]);
    expect(await page.locator("#correct-submit").getAttribute("aria-disabled")).toBeNull();

    // The outcome stays while the batch goes on sending and the page refreshes.
    await waitForRedraws(3);
    expect(await page.locator("#row-detail section").getAttribute("data-test-mark")).toBe("opened");
    expect(await page.locator("#correct-result").textContent()).toBe(outcome);
    expect((await call("GET", `/api/v1/batches/${batchId}`)).json.state).toBe("running");
    await shots("row-details-03-retried-while-sending");

    // A download pressed while the progress moves is not lost: the page draws the progress anew
    // between the press and the release, and the link under the pointer stays the one pressed (the
    // status line floats, so its going after a while moves nothing either).
    const download = page.getByRole("link", { name: "Download the result (CSV)" });
    await download.scrollIntoViewIfNeeded();
    const box = (await download.boundingBox())!;
    const progressValue = async (): Promise<number> =>
      Number(await page.locator("progress").getAttribute("value"));
    const doneAtPress = await progressValue();
    // Longer than the wait for the progress below: the download comes only after the release.
    const downloaded = page.waitForEvent("download", { timeout: 90_000 });
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await expect.poll(progressValue, { timeout: 60_000, interval: 100 }).toBeGreaterThan(doneAtPress);
    await page.mouse.up();
    const saved = path.join(stack.dir, "pressed-while-drawn.csv");
    await (await downloaded).saveAs(saved);
    expect(await readFile(saved, "utf8")).toContain("RDR-600");

    // A page number typed while a refresh of the rows is on its way (held here) stays typed: the
    // refresh comes back under the reader's keyboard and is dropped, and Enter goes where they asked.
    const rowsRead = /\/api\/v1\/batches\/[^/]+\/rows\?/;
    let releaseRows = (): void => {};
    const rowsHeld = new Promise<void>((resolve) => {
      releaseRows = resolve;
    });
    let heldReads = 0;
    await page.route(rowsRead, async (route) => {
      heldReads += 1;
      await rowsHeld;
      await route.continue();
    });
    await page.locator("#progress-title").click();
    await expect.poll(() => heldReads, { timeout: 60_000, interval: 250 }).toBeGreaterThan(0);
    await page.getByLabel("Go to page").fill("3");
    const drawnBefore = await redraws();
    const answered = page.waitForResponse(rowsRead);
    releaseRows();
    await answered;
    // The page's script reads the answer after the browser has it: give it time to (not) draw.
    await page.waitForTimeout(500);
    await page.unroute(rowsRead);
    expect(await redraws()).toBe(drawnBefore);
    expect(await page.getByLabel("Go to page").inputValue()).toBe("3");
    await page.getByLabel("Go to page").press("Enter");
    await expect.poll(() => page.locator("#rows-summary").textContent()).toContain("Rows 101–150 of 600");
  });
});
