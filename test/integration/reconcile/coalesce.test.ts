/**
 * Reconcile work gathered under load (issue 9, point 3), on a real Redis: the enqueuer folds requests
 * for one payment that wait together into one job and loses none that arrive while a store is under
 * way; a batch whose rows turn final together is checked (and finished) once, after its last row.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Payment } from "../../../src/payouts-api/index.js";
import { connectRedis } from "../../../src/pipeline/index.js";
import {
  createReconcileProcessor,
  createReconcileQueue,
  reconcileEnqueuer,
} from "../../../src/reconcile/index.js";
import { startSandbox } from "../../../src/sandbox/index.js";
import { instruction, pipelineHarness, REDIS_URL } from "../pipeline/helpers.js";

let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function queueFor(label: string) {
  const connection = connectRedis(REDIS_URL);
  const queue = createReconcileQueue(connection, `coalesce-${label}-${Date.now()}`);
  cleanups.push(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  });
  return queue;
}

describe("the reconcile enqueuer", () => {
  it("folds a burst of deliveries for one payment into one job; every caller learns it was stored", async () => {
    const queue = await queueFor("burst");
    const addBulk = vi.spyOn(queue, "addBulk");
    const enqueuer = reconcileEnqueuer(queue, 500, 60_000);
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        enqueuer.enqueue({
          kind: "payment",
          paymentId: `pay_${i % 3}`,
          origin: "webhook",
          event: "api.payment.updated",
          messageId: `m${i}`,
        }),
      ),
    );
    expect(addBulk).toHaveBeenCalledTimes(1);
    expect(addBulk.mock.calls[0]![0]).toHaveLength(3);
    const jobs = await queue.getJobs(["delayed", "waiting"]);
    expect(jobs.map((j) => (j.data.kind === "payment" ? j.data.paymentId : "")).sort()).toEqual([
      "pay_0",
      "pay_1",
      "pay_2",
    ]);
  });

  it("keeps a delivery that arrives while a store is under way, and stores it right after", async () => {
    const queue = await queueFor("later");
    const realAddBulk = queue.addBulk.bind(queue);
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const addBulk = vi.spyOn(queue, "addBulk").mockImplementationOnce(async (jobs) => {
      await held;
      return realAddBulk(jobs);
    });
    // Debounce 0: each job is ready at once, so the second must be a job of its own, not lost.
    const enqueuer = reconcileEnqueuer(queue, 500, 0);
    const look = (paymentId: string, messageId: string) =>
      enqueuer.enqueue({ kind: "payment", paymentId, origin: "webhook", messageId });
    const first = look("pay_a", "1");
    await sleep(20);
    expect(addBulk).toHaveBeenCalledTimes(1);
    const second = look("pay_b", "2");
    const third = look("pay_a", "3");
    await sleep(20);
    // Gathered while the first store is under way.
    expect(addBulk).toHaveBeenCalledTimes(1);
    release();
    await Promise.all([first, second, third]);
    expect(addBulk).toHaveBeenCalledTimes(2);
    expect(addBulk.mock.calls[1]![0].map((j) => (j.data.kind === "payment" ? j.data.paymentId : ""))).toEqual(
      ["pay_b", "pay_a"],
    );
  });

  it("fails every caller of a store that Redis refused (the receiver then answers 503)", async () => {
    const queue = await queueFor("refused");
    vi.spyOn(queue, "addBulk").mockRejectedValueOnce(new Error("Redis is gone"));
    const enqueuer = reconcileEnqueuer(queue, 500, 0);
    const results = await Promise.allSettled([
      enqueuer.enqueue({ kind: "payment", paymentId: "pay_x", origin: "webhook" }),
      enqueuer.enqueue({ kind: "payment", paymentId: "pay_x", origin: "webhook" }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});

describe("the batch finish check", () => {
  it("runs once for rows that turn final together, after the last, and finishes the batch once", async () => {
    const sandbox = await startSandbox({ clock: { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 } });
    cleanups.push(() => sandbox.close());
    const h = await pipelineHarness(sandbox, "coalesce-finish");
    cleanups.push(() => h.close());
    const rows = Array.from({ length: 12 }, (_, i) => instruction({ amount: 20_000 + i * 100 }));
    const batchId = await h.submit(rows);
    const finished: string[] = [];
    const progress = vi.spyOn(h.store, "progress");
    const processor = createReconcileProcessor({
      store: h.store,
      client: h.api,
      finishCheckDelayMs: 50,
      onBatchFinished: (id) => void finished.push(id),
    });
    // The service's final answer for every row (as a GET would return it), applied all at once.
    const now = new Date().toISOString();
    const payments = rows.map(
      (row, i) =>
        ({
          id: `pay_fin_${i}`,
          status: "completed",
          updatedAt: now,
          metadata: { payouts_batch: batchId, payouts_row: row.rowKey, payouts_attempt: "1" },
        }) as unknown as Payment,
    );
    const results = await Promise.all(payments.map((p) => processor.applyPayment(p)));
    expect(results.every((r) => r.outcome === "updated")).toBe(true);
    expect((await h.store.getBatch(batchId))?.finishedAt).toBeUndefined();
    await sleep(300);
    expect((await h.store.getBatch(batchId))?.finishedAt).toBeDefined();
    expect(finished).toEqual([batchId]);
    // One progress read for twelve final rows (it was one per row).
    expect(progress).toHaveBeenCalledTimes(1);
  });

  it("runs a waiting check at once when the service stops, and starts none after (no check on a closed connection)", async () => {
    const sandbox = await startSandbox({ clock: { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 } });
    cleanups.push(() => sandbox.close());
    const h = await pipelineHarness(sandbox, "coalesce-flush");
    cleanups.push(() => h.close());
    const rows = [instruction({ amount: 31_000 }), instruction({ amount: 31_100 })];
    const batchId = await h.submit(rows);
    const finished: string[] = [];
    const errors: string[] = [];
    const logger = {
      info: () => {},
      warn: () => {},
      error: (_: object, msg?: string) => void errors.push(String(msg)),
    };
    const processor = createReconcileProcessor({
      store: h.store,
      client: h.api,
      // Far longer than the test: only the stop can run it.
      finishCheckDelayMs: 3_600_000,
      onBatchFinished: (id) => void finished.push(id),
      logger: logger as never,
    });
    const completed = (rowKey: string, id: string) =>
      ({
        id,
        status: "completed",
        updatedAt: new Date().toISOString(),
        metadata: { payouts_batch: batchId, payouts_row: rowKey, payouts_attempt: "1" },
      }) as unknown as Payment;
    expect((await processor.applyPayment(completed(rows[0]!.rowKey, "pay_flush_0"))).outcome).toBe("updated");
    expect((await processor.applyPayment(completed(rows[1]!.rowKey, "pay_flush_1"))).outcome).toBe("updated");
    expect((await h.store.getBatch(batchId))?.finishedAt).toBeUndefined();
    await processor.flushFinishChecks();
    expect((await h.store.getBatch(batchId))?.finishedAt).toBeDefined();
    expect(finished).toEqual([batchId]);
    // After the stop, a row turning final asks for no check: none can run later on a closed connection.
    const progress = vi.spyOn(h.store, "progress");
    await processor.finishIfDone(batchId);
    progress.mockClear();
    await processor.applyPayment({
      ...completed(rows[0]!.rowKey, "pay_flush_0"),
      updatedAt: new Date(Date.now() + 1000).toISOString(),
    } as Payment);
    await sleep(100);
    expect(progress).not.toHaveBeenCalled();
    expect(errors).toEqual([]);
  });
});
