/**
 * Done-when of issue 11, in a real browser (Debian's Chromium driven by playwright-core): with
 * APPROVAL_THRESHOLDS set, a sheet over the threshold dropped into the inbox waits; nothing is paid
 * until a second person (an approver, not the inbox that submitted it) approves it in the console;
 * then its rows are paid. Screenshots go to test/browser/screenshots/ (ignored by git).
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import {
  connectRedis,
  createWorkerClient,
  type PaymentService,
  startPaymentService,
} from "../../../src/pipeline/index.js";
import { type RunningSandbox, startSandbox } from "../../../src/sandbox/index.js";
import { type RunningServer, startServer } from "../../../src/server/index.js";
import { startWatchService, type WatchService } from "../../../src/watch/index.js";
import { deleteKeys, paymentsOfBatch, REDIS_URL, uniquePrefix } from "../../integration/pipeline/helpers.js";

// The way production sets the rule: in the environment, read by every way a batch comes in.
process.env.APPROVAL_THRESHOLDS = "USD:1000";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = path.resolve("test/browser/screenshots");
const prefix = uniquePrefix("approvals-browser");
let dir: string;
let sandbox: RunningSandbox;
let client: PayoutsClient;
let server: RunningServer;
let payments: PaymentService;
let watch: WatchService;
let browser: BrowserContext;
let page: Page;
let adminToken: string;
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
type Json = any;

async function get(route: string): Promise<Json> {
  const res = await fetch(`${server.url}${route}`, { headers: { authorization: `Bearer ${adminToken}` } });
  return res.json();
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  dir = await mkdtemp(path.join(tmpdir(), "payouts-approvals-browser-"));
  await mkdir(SHOTS, { recursive: true });
  sandbox = await startSandbox({ clock: { toInProgressMs: 600_000, toFinalMs: 600_000 } });
  client = createPayoutsClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, retry: { maxAttempts: 1 } });
  const api = { apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" };
  server = await startServer({
    redisUrl: REDIS_URL,
    prefix,
    webhookSecret: sandbox.apiKey,
    client,
    dataDir: dir,
  });
  payments = await startPaymentService({
    redisUrl: REDIS_URL,
    prefix,
    client: createWorkerClient(api),
    concurrency: 2,
    rateLimitPerSecond: 100,
  });
  watch = await startWatchService({
    ...api,
    dataDir: dir,
    redisUrl: REDIS_URL,
    prefix,
    stableMs: 200,
    rescanMs: 500,
  });
  adminToken = (await server.auth.createToken("ops-admin", "admin", "test")).token;
  await server.auth.addUser("ann", "approver", "ann approves 123");
  browser = await chromium.launchPersistentContext(path.join(dir, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  page = browser.pages()[0] ?? (await browser.newPage());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await watch?.stop();
  await payments?.stop(1000);
  await server?.close(1000);
  const redis = connectRedis(REDIS_URL);
  await deleteKeys(redis, prefix);
  await redis.quit();
  await client?.close();
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

describe("a sheet over the threshold dropped into the inbox", () => {
  it("is paid only after a second person approves it in the console", async () => {
    await writeFile(
      path.join(dir, "inbox", "big-payroll.csv"),
      [
        "reference,from_account,to_account,amount,currency,delivery",
        "APRB-1,ops-checking,vendor-ach,600.00,USD,standard-ach",
        "APRB-2,ops-checking,vendor-ach,600.00,USD,standard-ach",
      ].join("\n"),
    );
    const batchId = await until("the inbox to submit the sheet", async () => {
      const list = await get("/api/v1/batches");
      return (list.data as Json[]).find((b) => b.sourceName === "big-payroll.csv")?.id as string | undefined;
    });
    const waiting = (await get(`/api/v1/batches/${batchId}/approval`)).approval;
    expect(waiting).toMatchObject({ status: "awaiting-approval", submittedBy: "system:inbox" });
    await sleep(1000);
    expect(await paymentsOfBatch(client, batchId)).toEqual([]);

    await page.goto(`${server.url}/`);
    await page.waitForURL(/\/login$/);
    await page.getByLabel("User name").fill("ann");
    await page.getByLabel("Password").fill("ann approves 123");
    await page.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => page.locator("#who").textContent()).toBe("ann (approver)");
    await page.getByRole("button", { name: "Batches" }).click();
    // The list says the batch waits for approval (not "submitting").
    await expect
      .poll(() => page.locator("tr", { has: page.getByRole("button", { name: batchId }) }).textContent())
      .toContain("awaiting-approval");
    await page.screenshot({ path: path.join(SHOTS, "approvals-00-list.png"), fullPage: true });
    await page.getByRole("button", { name: batchId }).click();
    await expect
      .poll(() => page.locator("#approval-summary").textContent())
      .toContain("waiting for approval");
    expect(await page.locator("#approval-summary").textContent()).toContain("submitted by system:inbox");
    await page.screenshot({ path: path.join(SHOTS, "approvals-01-waiting.png"), fullPage: true });

    await page.getByRole("button", { name: "Approve this batch" }).click();
    await expect.poll(() => page.locator("#status").textContent()).toContain("Approved");
    expect(await page.locator("#approval-list").textContent()).toContain("approved by ann");
    await page.screenshot({ path: path.join(SHOTS, "approvals-02-approved.png"), fullPage: true });

    const paid = await until("both rows to be paid", async () => {
      const found = await paymentsOfBatch(client, batchId);
      return found.length === 2 ? found : undefined;
    });
    expect(new Set(paid.map((p) => p.metadata?.payouts_row)).size).toBe(2);
    const approved = await get(`/api/v1/batches/${batchId}`);
    expect(approved.approval).toMatchObject({ status: "approved", approvals: [{ by: "ann" }] });
    expect(approved.state).not.toBe("awaiting-approval");
  }, 180_000);
});
