import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RowRecord } from "../../../src/batches/index.js";
import { createPayoutsClient, type Payment, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { createWorkerClient, paymentBodyFor } from "../../../src/pipeline/index.js";
import { type ReconcileService, startReconcileService } from "../../../src/reconcile/index.js";
import { externalIdFor, idempotencyKeyFor, paymentMetadataFor } from "../../../src/row-identity/index.js";
import { type RunningServer, startServer, WEBHOOK_PATH } from "../../../src/server/index.js";
import { CONSUMED_EVENTS } from "../../../src/webhooks/index.js";
import { PIPELINE_DEFAULTS, SERVER_DEFAULTS } from "../../support/settings.js";
import { until } from "../../support/wait.js";
import {
  instruction,
  type PipelineHarness,
  paymentsOfBatch,
  pipelineHarness,
  REDIS_URL,
  waitForRows,
} from "../pipeline/helpers.js";

const FAST_CLOCK = { toInProgressMs: 40, toFinalMs: 40 };
const terminal = (r: RowRecord) => ["completed", "failed", "canceled", "rejected", "error"].includes(r.state);

interface Stack {
  sandbox: RunningSandbox;
  h: PipelineHarness;
  server: RunningServer;
  serverClient: PayoutsClient;
  reconcile: ReconcileService;
  changed: string[];
  finished: string[];
  close(): Promise<void>;
}

/** Sandbox → our server → reconcile worker, all on one unique Redis prefix. */
async function startStack(
  label: string,
  sweep: { sweepEveryMs: number; staleAfterMs: number },
): Promise<Stack> {
  const sandbox = await startSandbox({ clock: FAST_CLOCK, webhookRetry: { attempts: 5, baseDelayMs: 20 } });
  const h = await pipelineHarness(sandbox, label);
  const serverClient = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  const server = await startServer({
    ...PIPELINE_DEFAULTS,
    ...SERVER_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    webhookSecret: sandbox.apiKey, // the spec's default: deliveries are signed with the API key
    client: serverClient,
  });
  const changed: string[] = [];
  const finished: string[] = [];
  const reconcile = await startReconcileService({
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    client: createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" }),
    ...sweep,
    quietMs: 500,
    onRowsChanged: (batchId) => void changed.push(batchId),
    onBatchFinished: (batchId) => void finished.push(batchId),
  });
  await h.api.webhook.update({
    url: `${server.url}${WEBHOOK_PATH}`,
    events: [...CONSUMED_EVENTS],
    isActive: true,
  });
  return {
    sandbox,
    h,
    server,
    serverClient,
    reconcile,
    changed,
    finished,
    async close() {
      await reconcile.stop(2000);
      await server.close(1000);
      await serverClient.close();
      await h.close();
      await sandbox.close();
    },
  };
}

describe("a webhook that arrives before the worker recorded the create response", () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack("wh-early", { sweepEveryMs: 0, staleAfterMs: 60_000 });
  });
  afterAll(async () => s.close());

  it("finds the row by the payment's metadata, records the payment, and the worker never pays twice", async () => {
    const row = instruction({ amount: 31_500 });
    // The job is queued but no payment worker runs yet: the row has no payment.
    const batchId = await s.h.submit([row]);
    expect((await s.h.store.getRow(batchId, row.rowKey))?.paymentId).toBeUndefined();

    // What the worker's POST does, before the worker could record its answer.
    const identity = { entityId: "me", batchId, rowKey: row.rowKey, attempt: 1 };
    const payment = await s.h.api.payments.create(
      paymentBodyFor(row, {
        externalId: externalIdFor({
          batchId,
          rowNumber: row.rowNumber,
          reference: row.reference,
          attempt: 1,
        }),
        metadata: paymentMetadataFor(identity, row.metadata),
        attachmentId: undefined,
        fxQuoteToken: undefined,
      }),
      { idempotencyKey: idempotencyKeyFor(identity) },
    );

    const adopted = await until("the row to follow its payment", async () => {
      const r = await s.h.store.getRow(batchId, row.rowKey);
      return r?.state === "completed" ? r : undefined;
    });
    expect(adopted?.paymentId).toBe(payment.id);
    expect(adopted?.paymentStatus).toBe("completed");
    expect(s.changed).toContain(batchId);

    // Now the worker gets to the row's job: it sees the payment and sends nothing.
    await s.h.startWorker();
    await until("the payment job", async () => {
      const c = await s.h.pipeline.queue.getJobCounts("waiting", "active", "delayed");
      return (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) === 0 ? c : undefined;
    });
    const payments = await paymentsOfBatch(s.h.api, batchId);
    expect(payments.map((p) => p.id)).toEqual([payment.id]);
    expect((await s.h.store.getRow(batchId, row.rowKey))?.paymentId).toBe(payment.id);
  });
});

describe("deliveries duplicated and out of order", () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack("wh-order", { sweepEveryMs: 0, staleAfterMs: 60_000 });
    s.sandbox.setFaults({ shuffleWebhooks: true, duplicateWebhookRate: 1 });
    await s.h.startWorker();
  });
  afterAll(async () => s.close());

  it("every row ends in its payment's final state, with fees and FX figures, and the batch is finished", async () => {
    const rows = [
      instruction({ amount: 20_001 }),
      instruction({
        amount: 20_002,
        receivingAccountId: "acct_vendor_wire",
        deliveryPreference: "domestic-wire",
      }),
      instruction({ amount: 20_013 }), // the sandbox fails amounts ending in 13
      instruction({
        amount: 50_000,
        currency: "EUR",
        receivingAccountId: "acct_supplier_eur",
        deliveryPreference: "international-fx",
      }),
    ];
    const before = s.sandbox.stats().requests;
    const batchId = await s.h.submit(rows);
    const done = await waitForRows(s.h.store, batchId, terminal);
    // Read by pages of the batch's payments: every delivery came twice and out of order, yet no
    // payment was read alone (each row knew its payment by the time its marks went quiet).
    expect(s.sandbox.stats().requests.get - before.get).toBe(0);
    expect(s.sandbox.stats().requests.list - before.list).toBeGreaterThan(0);
    const byKey = new Map(done.map((r) => [r.rowKey, r]));
    const [ach, wire, failing, eur] = rows.map((r) => byKey.get(r.rowKey));
    for (const r of [ach, wire, eur]) {
      expect(r?.state).toBe("completed");
      expect(r?.paymentStatus).toBe("completed");
      expect(r?.fees?.length).toBeGreaterThan(0);
    }
    expect(failing?.state).toBe("failed");
    expect(failing?.errorCode).toBe("PAYMENT_FAILED");
    const eurPayment = await s.h.api.payments.get(eur?.paymentId ?? "");
    expect(eur?.debitUsd).toBe(eurPayment.fx?.debitAmount);
    expect(eur?.fxRate).toBe(eurPayment.fx?.usdToForeignRate);
    expect(ach?.debitUsd).toBeUndefined();

    const batch = await until("finishedAt", async () => {
      const b = await s.h.store.getBatch(batchId);
      return b?.finishedAt !== undefined ? b : undefined;
    });
    expect(batch?.finishedAt).toBeDefined();
    // The hook runs once the finished batch's watch is recorded, a Redis call after finishedAt.
    await expect.poll(() => s.finished).toEqual([batchId]);
    // Every delivery came twice; each payment was still paid once.
    expect((await paymentsOfBatch(s.h.api, batchId)).length).toBe(rows.length);
    expect(s.server.metrics.deliveryCount("duplicate")).toBeGreaterThan(0);
  });

  it("an older snapshot of a payment never overwrites a newer one, whatever the order", async () => {
    const row = instruction({ amount: 20_077 }); // held in `scheduled` by the sandbox
    const batchId = await s.h.submit([row]);
    const [recorded] = await waitForRows(s.h.store, batchId, (r) => r.paymentId !== undefined);
    const current = await s.h.api.payments.get(recorded?.paymentId ?? "");
    const at = (ms: number) => new Date(Date.parse(current.updatedAt) + ms).toISOString();
    const completed: Payment = { ...current, status: "completed", updatedAt: at(2000), fees: [] };
    const inProgress: Payment = {
      ...current,
      status: "in-progress",
      updatedAt: at(1000),
      fees: [{ type: "rail", amount: 25, currency: "USD", chargeTo: "originator" }],
    };
    // `completed` is delivered first, then the older `in-progress` and `scheduled` snapshots.
    expect((await s.reconcile.processor.applyPayment(completed)).outcome).toBe("updated");
    expect(await s.reconcile.processor.applyPayment(inProgress)).toMatchObject({ outcome: "unchanged" });
    expect(await s.reconcile.processor.applyPayment(current)).toMatchObject({ outcome: "unchanged" });
    const after = await s.h.store.getRow(batchId, row.rowKey);
    expect(after).toMatchObject({ state: "completed", paymentStatus: "completed", fees: [] });
  });

  it("within one state, an older snapshot does not replace the fields of a newer one", async () => {
    const row = instruction({ amount: 30_077 });
    const batchId = await s.h.submit([row]);
    const [recorded] = await waitForRows(s.h.store, batchId, (r) => r.paymentId !== undefined);
    const current = await s.h.api.payments.get(recorded?.paymentId ?? "");
    const at = (ms: number) => new Date(Date.parse(current.updatedAt) + ms).toISOString();
    const fee = (amount: number) => [
      { type: "rail", amount, currency: "USD", chargeTo: "originator" as const },
    ];
    const newer: Payment = { ...current, status: "in-progress", updatedAt: at(2000), fees: fee(150) };
    const older: Payment = { ...current, status: "in-progress", updatedAt: at(1000), fees: fee(25) };
    await s.reconcile.processor.applyPayment(newer);
    expect(await s.reconcile.processor.applyPayment(older)).toMatchObject({
      outcome: "unchanged",
      reason: "outdated",
    });
    expect((await s.h.store.getRow(batchId, row.rowKey))?.fees).toEqual(fee(150));
  });
});

describe("a lost webhook", () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack("wh-lost", { sweepEveryMs: 150, staleAfterMs: 100 });
    await s.h.startWorker();
  });
  afterAll(async () => s.close());

  it("is made up for by the sweep: the rows finish and the batch is marked finished", async () => {
    // Deliveries paused: the service sends nothing at all.
    await s.h.api.webhook.update({ isActive: false });
    const rows = [instruction({ amount: 40_001 }), instruction({ amount: 40_013 })];
    const batchId = await s.h.submit(rows);
    const done = await waitForRows(s.h.store, batchId, terminal);
    expect(done.map((r) => r.state).sort()).toEqual(["completed", "failed"]);
    expect(s.server.metrics.deliveryCount("queued")).toBe(0);
    const batch = await until("finishedAt", async () => {
      const b = await s.h.store.getBatch(batchId);
      return b?.finishedAt !== undefined ? b : undefined;
    });
    expect(batch?.finishedAt).toBeDefined();
    expect(await s.h.store.batchIdsAwaitingOutcomes()).not.toContain(batchId);
  });
});
