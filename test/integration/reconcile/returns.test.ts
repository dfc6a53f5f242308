/**
 * A row follows its payment after it is final (docs/design.md §3.5): a completed payment the service
 * later reports failed (a return) makes the row `returned`, in the row's history, its batch's counts
 * and totals, the result file of the finished batch and a signed `payout.returned` notification; an
 * operator may pay it again; and a return whose webhook never came is found by the watch of finished
 * batches, at a cost of pages. Everything real: the sandbox over HTTP delivering signed webhooks to
 * our server, the reconciler reading pages, the outbox writing the result file, a notification
 * receiver on loopback.
 */
import { readFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditAndRecord } from "../../../src/ledger-audit/index.js";
import {
  type BatchFinishedSummary,
  batchFinishedHandler,
  type PayoutReturnedEvent,
  payoutReturnedHandler,
  verifyNotification,
} from "../../../src/notify/index.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { createWorkerClient } from "../../../src/pipeline/index.js";
import { type ReconcileService, startReconcileService } from "../../../src/reconcile/index.js";
import { createResultOutbox, defaultResultPath, type ResultOutbox } from "../../../src/results/index.js";
import { retryRows } from "../../../src/retries/index.js";
import { type RunningServer, startServer, WEBHOOK_PATH } from "../../../src/server/index.js";
import { CONSUMED_EVENTS } from "../../../src/webhooks/index.js";
import { PIPELINE_DEFAULTS, SERVER_DEFAULTS } from "../../support/settings.js";
import { until as waitFor } from "../../support/wait.js";
import { instruction, type PipelineHarness, pipelineHarness, REDIS_URL } from "../pipeline/helpers.js";

const SECRET = "returns-notify-secret";
/** What happens to a batch between its end and its audit (a test's return that lands just then). */
const beforeAudit = new Map<string, () => Promise<void>>();
let sandbox: RunningSandbox;
let h: PipelineHarness;
let server: RunningServer;
let serverClient: PayoutsClient;
let reconcile: ReconcileService;
let outbox: ResultOutbox;
const received: Array<{ raw: Buffer; headers: IncomingHttpHeaders }> = [];
const receiver = createServer(async (req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  received.push({ raw: Buffer.concat(chunks), headers: req.headers });
  res.statusCode = 204;
  res.end();
});

function notifications<T extends { event: string }>(event: T["event"]): T[] {
  return received
    .map((r) => verifyNotification(r.raw, r.headers, SECRET).data as T)
    .filter((n) => n.event === event);
}

/** Reads until `ok` holds for what was read (test/support/wait.ts's `until`, with a condition). */
function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  return waitFor(
    what,
    async () => {
      const value = await read();
      return ok(value) ? value : undefined;
    },
    20_000,
    50,
  );
}

beforeAll(async () => {
  sandbox = await startSandbox({
    clock: { toInProgressMs: 40, toFinalMs: 40, toReturnMs: 1_500 },
    webhookRetry: { attempts: 5, baseDelayMs: 20 },
  });
  h = await pipelineHarness(sandbox, "returns");
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const notify = { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: SECRET };
  serverClient = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  server = await startServer({
    ...PIPELINE_DEFAULTS,
    ...SERVER_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    webhookSecret: sandbox.apiKey,
    client: serverClient,
  });
  await h.api.webhook.update({
    url: `${server.url}${WEBHOOK_PATH}`,
    events: [...CONSUMED_EVENTS],
    isActive: true,
  });
  outbox = createResultOutbox({ store: h.store, dataDir: h.dataDir, debounceMs: 50 });
  reconcile = await startReconcileService({
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    client: createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" }),
    sweepEveryMs: 0,
    quietMs: 200,
    lookEveryMs: 50,
    watchForMs: 60 * 86_400_000,
    watchEveryMs: 100,
    onRowsChanged: (batchId) => outbox.markDirty(batchId),
    onBatchFinished: batchFinishedHandler({
      store: h.store,
      outbox,
      dataDir: h.dataDir,
      notify,
      // As the worker does: the finished batch is held against the ledger before the notice goes, and
      // a row the audit finds behind its payment follows it first.
      beforeNotify: async (batchId) => {
        await beforeAudit.get(batchId)?.();
        await auditAndRecord({
          store: h.store,
          client: serverClient,
          batchId,
          follow: (payments) => reconcile.processor.applyPayments(payments),
        });
      },
    }),
    onRowReturned: payoutReturnedHandler({ store: h.store, notify }),
  });
  await h.startWorker();
});

afterAll(async () => {
  await reconcile?.stop(1000);
  await outbox?.close();
  await server?.close(1000);
  await serverClient?.close();
  await h.close();
  await sandbox.close();
  await new Promise((r) => receiver.close(r));
});

describe("a completed payment the service later reports failed", () => {
  it("makes the row `returned`: in its history and counts, the finished batch's result file and a payout.returned notification", async () => {
    const kept = instruction({ amount: 20_000 });
    const back = instruction({ amount: 20_555 }); // the sandbox returns amounts ending in 555
    const batchId = await h.submit([kept, back]);

    // First the batch finishes with both rows paid.
    await until(
      () => h.store.getBatch(batchId),
      (b) => b?.finishedAt !== undefined,
      "the batch to finish",
    );
    const finishedAt = (await h.store.getBatch(batchId))?.finishedAt;
    const [finishedNotice] = await until(
      async () => notifications<BatchFinishedSummary>("batch.finished").filter((n) => n.batchId === batchId),
      (n) => n.length === 1,
      "the batch.finished notification",
    );
    expect(finishedNotice?.counts).toEqual({ completed: 2 });
    expect(finishedNotice?.ledger).toBe("ledger: 2 rows match, 0 differences");

    // Then the return arrives (a webhook, read back by a page) and the row follows its payment.
    const row = await until(
      () => h.store.getRow(batchId, back.rowKey),
      (r) => r?.state === "returned",
      "the row to be returned",
    );
    expect(row).toMatchObject({ paymentStatus: "failed", errorCode: "PAYMENT_RETURNED" });
    expect(row?.errorMessage).toContain("R01");
    const last = row?.history.at(-1);
    expect(last).toMatchObject({ from: "completed", to: "returned" });
    expect(last?.note).toMatch(/^returned: payment failed at .*R01/);
    expect((await h.store.getRow(batchId, kept.rowKey))?.state).toBe("completed");

    // The batch stays finished; its counts and money moved.
    const progress = await h.store.progress(batchId);
    expect(progress?.batch.finishedAt).toBe(finishedAt);
    expect(progress?.counts).toMatchObject({ completed: 1, returned: 1 });
    expect(progress?.done).toBe(2);
    expect(progress?.totals.USD).toEqual({ completed: 20_000, returned: 20_555 });

    // The accounting team hears of it.
    const [returned] = await until(
      async () => notifications<PayoutReturnedEvent>("payout.returned").filter((n) => n.batchId === batchId),
      (n) => n.length === 1,
      "the payout.returned notification",
    );
    expect(returned).toMatchObject({
      batchId,
      rowNumber: back.rowNumber,
      reference: back.reference,
      paymentId: row?.paymentId,
      paymentStatus: "failed",
      amount: { minor: 20_555, amount: "205.55", currency: "USD" },
      reason: { code: "R01" },
    });

    // The finished batch's result file is written again and says so.
    const batch = (await h.store.getBatch(batchId))!;
    const file = defaultResultPath(h.dataDir, batch, batch.sheet.format);
    const lines = await until(
      async () => {
        const text = await readFile(file, "utf8").catch(() => "");
        return Papa.parse<Record<string, string>>(text.replace(/^\uFEFF/, ""), { header: true }).data;
      },
      (rows) => rows.some((r) => r.status === "returned"),
      "the result file to show the return",
    );
    const line = lines.find((r) => r.payment_id === row?.paymentId);
    expect(line).toMatchObject({
      status: "returned",
      payment_status: "failed",
      error_code: "PAYMENT_RETURNED",
    });

    // The API's row views show it, and find it by its state.
    const { token } = await server.auth.createToken(`viewer-${batchId}`, "viewer", "test");
    const rowsView = await fetch(`${server.url}/api/v1/batches/${batchId}/rows?state=returned`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await rowsView.json()) as { data: unknown[] }).data).toEqual([
      expect.objectContaining({ row: back.rowNumber, state: "returned", errorCode: "PAYMENT_RETURNED" }),
    ]);

    // An operator may pay it again: a new attempt, through the same retry path as any.
    const retried = await retryRows({ store: h.store, enqueuer: h.pipeline.enqueuer, batchId });
    expect(retried).toMatchObject({ kind: "done", retried: [{ rowNumber: back.rowNumber, attempt: 2 }] });
    const again = await until(
      () => h.store.getRow(batchId, back.rowKey),
      (r) => r?.attempt === 2 && r.paymentId !== undefined,
      "the new attempt's payment",
    );
    expect(again?.paymentId).not.toBe(row?.paymentId);
  });
});

describe("a return whose webhook never came", () => {
  it("is found by the watch of the finished batch, reading pages of its failed and canceled payments", async () => {
    const rows = Array.from({ length: 3 }, (_, i) => instruction({ amount: 30_000 + i * 10 }));
    const batchId = await h.submit(rows);
    await until(
      () => h.store.getBatch(batchId),
      (b) => b?.finishedAt !== undefined,
      "the batch to finish",
    );
    const paid = (await h.store.getRow(batchId, rows[1]!.rowKey))!;
    // Deliveries stop; the bank returns one payment.
    await h.api.webhook.update({ isActive: false });
    try {
      const answer = await fetch(`${sandbox.url}/_sandbox/payments/${paid.paymentId}/return`, {
        method: "POST",
        headers: { "api-key": sandbox.apiKey, "content-type": "application/json" },
        body: JSON.stringify({ reason: { code: "R02", message: "account closed" } }),
      });
      expect(answer.status).toBe(200);
      await sleep(150);
      const report = await reconcile.sweep();
      expect(report.watched).toBeGreaterThanOrEqual(1);
      // Pages, not rows: each watched batch's failed payments and its canceled ones, a page each.
      expect(report.watchPages).toBe(2 * report.watched);
      const row = await h.store.getRow(batchId, rows[1]!.rowKey);
      expect(row).toMatchObject({ state: "returned", errorCode: "PAYMENT_RETURNED" });
      expect(row?.errorMessage).toContain("R02");
      // Still watched, next time a day later (here: the test's watch interval).
      expect(await h.pipeline.redis.zscore(h.store.keys.watched, batchId)).not.toBeNull();
    } finally {
      await h.api.webhook.update({ isActive: true });
    }
  });
});

describe("a return that lands between a batch's last look and its audit", () => {
  it("is followed by the audit: the kept outcome matches, the notices and the result file say returned", async () => {
    const kept = instruction({ amount: 21_000 });
    const back = instruction({ amount: 21_100 });
    try {
      const batchId = await h.submit([kept, back], {
        beforeEnqueue: async (id) => {
          // The bank returns the payment right as the batch finishes, and its delivery is lost: no
          // look sees it before the audit.
          beforeAudit.set(id, async () => {
            await h.api.webhook.update({ isActive: false });
            const paid = (await h.store.getRow(id, back.rowKey))!;
            const answer = await fetch(`${sandbox.url}/_sandbox/payments/${paid.paymentId}/return`, {
              method: "POST",
              headers: { "api-key": sandbox.apiKey, "content-type": "application/json" },
              body: JSON.stringify({ reason: { code: "R02", message: "account closed" } }),
            });
            expect(answer.status).toBe(200);
          });
        },
      });
      const [notice] = await until(
        async () =>
          notifications<BatchFinishedSummary>("batch.finished").filter((n) => n.batchId === batchId),
        (n) => n.length === 1,
        "the batch.finished notification",
      );
      expect(notice?.ledger).toBe("ledger: 2 rows match, 0 differences");
      expect(notice?.counts).toEqual({ completed: 1, returned: 1 });
      expect((await h.store.getBatch(batchId))?.ledger).toMatchObject({ differences: 0, matched: 2 });
      await until(
        async () =>
          notifications<PayoutReturnedEvent>("payout.returned").filter((n) => n.batchId === batchId),
        (n) => n.length === 1,
        "the payout.returned notification",
      );
      const batch = (await h.store.getBatch(batchId))!;
      const file = defaultResultPath(h.dataDir, batch, batch.sheet.format);
      await until(
        async () => {
          const text = await readFile(file, "utf8").catch(() => "");
          return Papa.parse<Record<string, string>>(text.replace(/^\uFEFF/, ""), { header: true }).data;
        },
        (rows) => rows.some((r) => r.reference === back.reference && r.status === "returned"),
        "the result file to show the return",
      );
    } finally {
      await h.api.webhook.update({ isActive: true });
    }
  });
});
