/**
 * Reconciliation does the least work (issue 9, points 3 and 5), on a real Redis and a real sandbox:
 * deliveries for one payment that arrive close together cost one GET /payments/{id}; a delivery that
 * arrives while its payment's look is running is kept and looked at after it; and the sweep reads only
 * the rows of the open index that went quiet.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Payment } from "../../../src/payouts-api/index.js";
import { connectRedis, createWorkerClient } from "../../../src/pipeline/index.js";
import {
  createReconcileQueue,
  type ReconcileService,
  reconcileEnqueuer,
  startReconcileService,
} from "../../../src/reconcile/index.js";
import { retryRows } from "../../../src/retries/index.js";
import { type RunningSandbox, startSandbox } from "../../../src/sandbox/index.js";
import {
  instruction,
  type PipelineHarness,
  paymentMadeEarlier,
  pipelineHarness,
  REDIS_URL,
  waitForRows,
} from "../pipeline/helpers.js";

let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function stack(label: string, clock: { toInProgressMs: number; toFinalMs: number }) {
  const sandbox: RunningSandbox = await startSandbox({ clock });
  cleanups.push(() => sandbox.close());
  const h: PipelineHarness = await pipelineHarness(sandbox, label);
  cleanups.push(() => h.close());
  const client = createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" });
  const realGet = client.payments.get.bind(client.payments);
  const gets = vi.spyOn(client.payments, "get");
  const reconcile: ReconcileService = await startReconcileService({
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    client,
    sweepEveryMs: 0,
    staleAfterMs: 60_000,
  });
  cleanups.push(() => reconcile.stop(2000));
  const connection = connectRedis(REDIS_URL);
  const queue = createReconcileQueue(connection, h.prefix);
  cleanups.push(async () => {
    await queue.close();
    connection.disconnect();
  });
  return { sandbox, h, client, gets, realGet, reconcile, queue };
}

async function until(ok: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

type Stack = Awaited<ReturnType<typeof stack>>;

/** A one-row batch paid by the worker: the row holds its payment. */
async function paidRow(s: Stack, amount: number) {
  const row = instruction({ amount });
  const batchId = await s.h.submit([row]);
  await s.h.startWorker();
  const [paid] = await waitForRows(s.h.store, batchId, (r) => r.paymentId !== undefined);
  return { row, batchId, paymentId: paid!.paymentId! };
}

/** Waits for the row to be completed and for no look to be left waiting. */
async function completedAndDrained(s: Stack, batchId: string, rowKey: string): Promise<void> {
  await until(async () => (await s.h.store.getRow(batchId, rowKey))?.state === "completed", "completed");
  await until(
    async () => (await s.queue.getJobCounts("waiting", "delayed", "active")).delayed === 0,
    "the queue to drain",
  );
}

describe("webhook deliveries of one payment", () => {
  it("that arrive close together cost one GET, and the row still ends final", async () => {
    const s = await stack("least-get", { toInProgressMs: 200, toFinalMs: 200 });
    const { row, batchId, paymentId } = await paidRow(s, 41_000);
    // The service's created, in-progress and completed events, within the debounce window.
    const enqueuer = reconcileEnqueuer(s.queue, 500, 1_500);
    for (const [i, event] of [
      "api.payment.created",
      "api.payment.updated",
      "api.payment.updated",
    ].entries()) {
      await enqueuer.enqueue({ kind: "payment", paymentId, origin: "webhook", event, messageId: `m${i}` });
      await sleep(200);
    }
    await completedAndDrained(s, batchId, row.rowKey);
    expect(s.gets).toHaveBeenCalledTimes(1);
    // A final row leaves the sweep's index.
    expect(await s.h.pipeline.redis.zcard(s.h.store.keys.open(batchId))).toBe(0);
  });

  it("spread over more than the wait, each within it of the last, cost one GET after the final", async () => {
    // Settlement (2 s) longer than the wait (1.5 s), as when the service lags: a wait counted from the
    // first delivery looked while the payment was in progress, and the final delivery cost a second GET.
    const s = await stack("least-spread", { toInProgressMs: 1_000, toFinalMs: 1_000 });
    const { row, batchId, paymentId } = await paidRow(s, 43_000);
    const enqueuer = reconcileEnqueuer(s.queue, 500, 1_500);
    const deliver = (event: string, messageId: string) =>
      enqueuer.enqueue({ kind: "payment", paymentId, origin: "webhook", event, messageId });
    // Each delivery as the service sends it: when the payment changed.
    const reaches = (status: Payment["status"]) =>
      until(async () => (await s.h.api.payments.get(paymentId)).status === status, status);
    await deliver("api.payment.created", "s0");
    await reaches("in-progress");
    await deliver("api.payment.updated", "s1");
    await reaches("completed");
    await deliver("api.payment.updated", "s2");
    await completedAndDrained(s, batchId, row.rowKey);
    expect(s.gets).toHaveBeenCalledTimes(1);
  });

  it("a lone created delivery for a payment its row does not know yet still reconciles the row", async () => {
    // The worker made the payment and stopped before writing the answer on the row: only the
    // `api.payment.created` delivery tells about it.
    const s = await stack("least-unknown", { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 });
    const row = instruction({ amount: 44_000 });
    const batchId = `b-least-unknown-${Date.now().toString(36)}`;
    await s.h.submit([row], { batchId });
    const payment = await paymentMadeEarlier(s.h.api, row, batchId, `least-unknown-${batchId}`);
    expect((await s.h.store.getRow(batchId, row.rowKey))?.paymentId).toBeUndefined();
    const enqueuer = reconcileEnqueuer(s.queue, 500, 300);
    await enqueuer.enqueue({
      kind: "payment",
      paymentId: payment.id,
      origin: "webhook",
      event: "api.payment.created",
      messageId: "u0",
    });
    await until(
      async () => (await s.h.store.getRow(batchId, row.rowKey))?.paymentId === payment.id,
      "the row to adopt its payment",
    );
    expect((await s.h.store.getRow(batchId, row.rowKey))?.state).toBe("submitted");
    expect(s.gets).toHaveBeenCalledTimes(1);
  });

  it("that arrives while its payment's look is running is looked at after it (never lost)", async () => {
    const s = await stack("least-keep", { toInProgressMs: 300, toFinalMs: 300 });
    const row = instruction({ amount: 42_000 });
    const batchId = await s.h.submit([row]);
    await s.h.startWorker();
    const [paid] = await waitForRows(s.h.store, batchId, (r) => r.paymentId !== undefined);
    const paymentId = paid!.paymentId!;
    // The first look fetches the payment while it is still scheduled, then is held until released.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let fetched!: () => void;
    const firstFetched = new Promise<void>((r) => {
      fetched = r;
    });
    let calls = 0;
    s.gets.mockImplementation(async (id: string) => {
      const payment: Payment = await s.realGet(id);
      if (++calls === 1) {
        fetched();
        await held;
      }
      return payment;
    });
    const enqueuer = reconcileEnqueuer(s.queue, 500, 0);
    await enqueuer.enqueue({
      kind: "payment",
      paymentId,
      origin: "webhook",
      event: "api.payment.created",
      messageId: "a",
    });
    await firstFetched;
    // The payment completes meanwhile; its delivery comes while the first look still runs.
    await until(
      async () => (await s.h.api.payments.get(paymentId)).status === "completed",
      "payment completed",
    );
    await enqueuer.enqueue({
      kind: "payment",
      paymentId,
      origin: "webhook",
      event: "api.payment.updated",
      messageId: "b",
    });
    release();
    await until(
      async () => (await s.h.store.getRow(batchId, row.rowKey))?.state === "completed",
      "row completed",
    );
    expect(calls).toBe(2);
  });
});

describe("the sweep", () => {
  it("reads only the open rows that went quiet, and each of them once per stale period", async () => {
    // Payments that never move on their own: only the sweep would look at them again.
    const s = await stack("least-sweep", { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 });
    const rows = Array.from({ length: 40 }, (_, i) => instruction({ amount: 10_000 + i * 100 }));
    const batchId = await s.h.submit(rows);
    await s.h.startWorker();
    await waitForRows(s.h.store, batchId, (r) => r.state === "submitted");
    const open = s.h.store.keys.open(batchId);
    expect(await s.h.pipeline.redis.zcard(open)).toBe(40);

    // Nothing is stale yet: the sweep reads no row at all.
    expect(await s.reconcile.sweep()).toMatchObject({ batches: 1, enqueued: 0, rowsRead: 0 });

    // Five rows untouched for an hour (their last touch moved back in the index).
    const quiet = rows.slice(0, 5).map((r) => r.rowKey);
    for (const rowKey of quiet) await s.h.pipeline.redis.zadd(open, Date.now() - 3_600_000, rowKey);
    expect(await s.reconcile.sweep()).toMatchObject({ enqueued: 5, rowsRead: 5 });
    await until(async () => s.gets.mock.calls.length >= 5, "five looks");
    expect(new Set(s.gets.mock.calls.map(([id]) => id)).size).toBe(5);
    // Looked at now: the next sweep passes them by until they are stale again.
    expect(await s.reconcile.sweep()).toMatchObject({ enqueued: 0, rowsRead: 0 });
  });

  it("looks again at a retried row of a finished batch, and finishes the batch anew", async () => {
    const s = await stack("least-retry", { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 });
    const row = instruction();
    const batchId = await s.h.submit([row]);
    await s.h.startWorker();
    await waitForRows(s.h.store, batchId, (r) => r.state === "submitted");
    // The payment failed (as the service would say it): the batch is finished.
    await s.h.store.changeRow(batchId, row.rowKey, { to: "failed", fields: { paymentStatus: "failed" } });
    expect(await s.reconcile.sweep()).toMatchObject({ finished: 1 });
    expect((await s.h.store.getBatch(batchId))?.finishedAt).toBeDefined();

    const retried = await retryRows({ store: s.h.store, enqueuer: s.h.pipeline.enqueuer, batchId });
    expect(retried).toMatchObject({ kind: "done", retried: [{ attempt: 2 }] });
    await waitForRows(s.h.store, batchId, (r) => r.state === "submitted" && r.attempt === 2);
    expect((await s.h.store.getBatch(batchId))?.finishedAt).toBeUndefined();

    // Its new payment goes quiet: the sweep looks at it (it ignored the batch before the fix).
    await s.h.pipeline.redis.zadd(s.h.store.keys.open(batchId), Date.now() - 3_600_000, row.rowKey);
    expect(await s.reconcile.sweep()).toMatchObject({ batches: 1, enqueued: 1, rowsRead: 1 });
    await s.h.store.changeRow(batchId, row.rowKey, {
      to: "completed",
      fields: { paymentStatus: "completed" },
    });
    expect(await s.reconcile.sweep()).toMatchObject({ finished: 1 });
    expect((await s.h.store.getBatch(batchId))?.finishedAt).toBeDefined();
  });

  it("fills the open index of a batch recorded before it existed, once", async () => {
    const s = await stack("least-backfill", { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 });
    const rows = Array.from({ length: 3 }, () => instruction());
    const batchId = await s.h.submit(rows);
    await s.h.startWorker();
    await waitForRows(s.h.store, batchId, (r) => r.state === "submitted");
    // As an older version left it: no index, no mark.
    const redis = s.h.pipeline.redis;
    await redis.del(s.h.store.keys.open(batchId));
    await redis.hdel(s.h.store.keys.batch(batchId), "openIndexed");
    expect(await s.reconcile.sweep()).toMatchObject({ batches: 1, enqueued: 3, rowsRead: 3 });
    expect(await redis.zcard(s.h.store.keys.open(batchId))).toBe(3);
    expect(await redis.hget(s.h.store.keys.batch(batchId), "openIndexed")).toBe("1");
    expect(await s.reconcile.sweep()).toMatchObject({ enqueued: 0, rowsRead: 0 });
  });
});
