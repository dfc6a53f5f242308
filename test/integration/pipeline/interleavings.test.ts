/**
 * The interleavings that paid a row twice, sent one key with two bodies, or marked a paid
 * row `error`, each forced on purpose: a logging proxy between our client and the sandbox holds the
 * request the race needs, and two runs of one job are two processors with two job-lock tokens (what
 * BullMQ gives a stalled job's old and new worker). Real Redis, real sandbox over HTTP.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { BatchStore, SubmittedInstruction } from "../../../src/batches/index.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import {
  bullPrefix,
  createPaymentProcessor,
  HandBackError,
  PAYMENT_QUEUE_NAME,
  type PaymentJobData,
} from "../../../src/pipeline/index.js";
import { createReconcileProcessor } from "../../../src/reconcile/index.js";
import { retryRows } from "../../../src/retries/index.js";
import { idempotencyKeyFor } from "../../../src/row-identity/index.js";
import { type HoldingProxy, startHoldingProxy } from "../storm/holding-proxy.js";
import { instruction, type PipelineHarness, paymentsOfBatch, pipelineHarness } from "./helpers.js";

let sandbox: RunningSandbox;
let h: PipelineHarness;
let proxy: HoldingProxy;
const clients: PayoutsClient[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 600_000, toFinalMs: 600_000 } });
  h = await pipelineHarness(sandbox, "interleave");
  proxy = await startHoldingProxy(sandbox.url);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await proxy.close();
  await h.close();
  await sandbox.close();
});

/** A client as the worker has it (no in-call retries here: each test decides what happens). */
function client(via: "proxy" | "direct", timeoutMs = 10_000): PayoutsClient {
  const c = createPayoutsClient({
    entityId: "me",
    baseUrl: via === "proxy" ? proxy.url : sandbox.url,
    apiKey: sandbox.apiKey,
    timeoutMs,
    retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 0 },
  });
  clients.push(c);
  return c;
}

/** The job lock key BullMQ uses for the row's job, holding `token` (the run that owns the job now). */
async function lockJob(store: BatchStore, batchId: string, row: SubmittedInstruction, token: string) {
  const jobId = idempotencyKeyFor({ entityId: "me", batchId, rowKey: row.rowKey, attempt: 1 });
  const key = `${bullPrefix(h.prefix)}:${PAYMENT_QUEUE_NAME}:${jobId}:lock`;
  await h.pipeline.redis.set(key, token);
  void store;
  return key;
}

/** Submits rows without handing them to the queue: the tests run the jobs by hand. */
async function recordOnly(rows: SubmittedInstruction[]): Promise<string> {
  return h.submit(rows, { beforeEnqueue: async () => undefined, attempts: 1 }).then(async (batchId) => {
    await h.pipeline.queue.obliterate({ force: true });
    return batchId;
  });
}

/** A row paid in EUR to a payee abroad: it needs an FX quote before its create. */
function eurRow(amount: number): SubmittedInstruction {
  return instruction({
    receivingAccountId: "acct_supplier_eur",
    deliveryPreference: "international-fx",
    currency: "EUR",
    amount,
  });
}

function job(batchId: string, row: SubmittedInstruction, attempt = 1): PaymentJobData {
  return { batchId, rowKey: row.rowKey, attempt };
}

async function waitForPayment(externalId: string) {
  for (let i = 0; i < 100; i++) {
    const found = (await h.api.payments.list({ externalId, limit: 1 })).data[0];
    if (found) return found;
    await sleep(20);
  }
  throw new Error(`no payment ${externalId}`);
}

const isPost = (path: string) => (method: string, p: string) => method === "POST" && p === path;

describe("money safety under forced interleavings", () => {
  it("a stalled FX run that wakes after another run paid stores no quote and sends no second body", async () => {
    const row = eurRow(50_000);
    const batchId = await recordOnly([row]);
    const lockKey = await lockJob(h.store, batchId, row, "token-w1");
    const w1 = createPaymentProcessor({ store: h.store, client: client("proxy") });
    const w2 = createPaymentProcessor({ store: h.store, client: client("direct") });

    // W1 asks for a quote; the answer is held (W1 "stopped" while waiting for it).
    const quoteHeld = proxy.hold(isPost("/tools/fx-quote"));
    const w1Run = w1.process(job(batchId, row), {
      isLastTry: false,
      lock: { key: lockKey, token: "token-w1" },
    });
    const held = await quoteHeld.arrived;
    // W1's lock ran out; W2 took the job, quoted, stored the quote and paid.
    await h.pipeline.redis.set(lockKey, "token-w2");
    const paid = await w2.process(job(batchId, row), {
      isLastTry: false,
      lock: { key: lockKey, token: "token-w2" },
    });
    expect(paid.outcome).toBe("paid");
    const postsBefore = proxy.counts.get("POST /payments") ?? 0;

    held.release();
    expect(await w1Run).toMatchObject({ outcome: "skipped" });
    // W1 sent nothing: no second body under the row's key, and exactly one payment.
    expect(proxy.counts.get("POST /payments") ?? 0).toBe(postsBefore);
    expect(proxy.keysWithTwoBodies()).toEqual([]);
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(1);
    const stored = await h.store.getRow(batchId, row.rowKey);
    expect(stored).toMatchObject({
      state: "submitted",
      paymentId: (paid as { paymentId: string }).paymentId,
    });
  });

  it("stores an FX row's new quote with its body's hash in one write, before the create leaves", async () => {
    const row = eurRow(42_000);
    const batchId = await recordOnly([row]);
    const run = createPaymentProcessor({ store: h.store, client: client("proxy") });
    const writes = vi.spyOn(h.store, "changeRow");
    try {
      const createHeld = proxy.hold(isPost("/payments"));
      const paying = run.process(job(batchId, row), { isLastTry: false });
      const held = await createHeld.arrived;
      // The create is on its way: the quote it carries and the hash of its body are on the row, from
      // one conditional write (the first one of the run).
      const before = await h.store.getRow(batchId, row.rowKey);
      expect(before?.quote?.quoteToken).toBeTruthy();
      expect(before?.sentBodyHash).toMatch(/^[0-9a-f]+$/);
      expect(before?.history.filter((line) => line.note === "fx quote stored")).toHaveLength(1);
      expect(writes).toHaveBeenCalledTimes(1);
      expect(writes.mock.calls[0]?.[2].fields).toMatchObject({
        quote: before?.quote,
        sentBodyHash: before?.sentBodyHash,
      });
      held.release();
      expect(await paying).toMatchObject({ outcome: "paid" });
    } finally {
      writes.mockRestore();
    }
  });

  it("a run that lost its job lock sends nothing, even when it wakes right before sending", async () => {
    const row = instruction();
    const batchId = await recordOnly([row]);
    const lockKey = await lockJob(h.store, batchId, row, "token-a");
    let wake!: () => void;
    const stalled = new Promise<void>((r) => {
      wake = r;
    });
    let reached!: () => void;
    const atSend = new Promise<void>((r) => {
      reached = r;
    });
    const w1 = createPaymentProcessor({
      store: h.store,
      client: client("proxy"),
      beforeSend: async () => {
        reached();
        await stalled;
      },
    });
    const before = proxy.counts.get("POST /payments") ?? 0;
    const run = w1.process(job(batchId, row), { isLastTry: false, lock: { key: lockKey, token: "token-a" } });
    await atSend;
    await h.pipeline.redis.set(lockKey, "token-b"); // another worker took the stalled job
    wake();
    expect(await run).toEqual({ outcome: "skipped", reason: "fenced" });
    expect(proxy.counts.get("POST /payments") ?? 0).toBe(before);
    expect((await h.store.getRow(batchId, row.rowKey))?.state).toBe("queued");
  });

  it("a try held in the rate limiter's wait is fenced when it leaves, not before the wait", async () => {
    const row = instruction();
    const batchId = await recordOnly([row]);
    const lockKey = await lockJob(h.store, batchId, row, "token-a");
    // The shared rate limit holds the payment's slot (a long wait after 429s): any request that
    // waits for a slot stays here until released.
    let release!: () => void;
    const slot = new Promise<void>((r) => {
      release = r;
    });
    let waiting!: () => void;
    const inWait = new Promise<void>((r) => {
      waiting = r;
    });
    const limited = createPayoutsClient({
      entityId: "me",
      baseUrl: proxy.url,
      apiKey: sandbox.apiKey,
      timeoutMs: 10_000,
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 0 },
      limiter: {
        acquire: async () => {
          waiting();
          await slot;
        },
        rateLimited: () => undefined,
      },
    });
    clients.push(limited);
    const w1 = createPaymentProcessor({ store: h.store, client: limited });
    const before = proxy.counts.get("POST /payments") ?? 0;
    const run = w1.process(job(batchId, row), { isLastTry: false, lock: { key: lockKey, token: "token-a" } });
    await inWait;
    await h.pipeline.redis.set(lockKey, "token-b"); // meanwhile another worker took the job
    release();
    expect(await run).toEqual({ outcome: "skipped", reason: "fenced" });
    expect(proxy.counts.get("POST /payments") ?? 0).toBe(before);
    expect((await h.store.getRow(batchId, row.rowKey))?.state).toBe("queued");
  });

  it("the last try's `error` never overwrites the state reconciliation reached meanwhile", async () => {
    const row = instruction();
    const batchId = await recordOnly([row]);
    // The payment is created, but its answer is held past the client's time-out.
    const held = proxy.hold(isPost("/payments"), 1, "response");
    const w = createPaymentProcessor({ store: h.store, client: client("proxy", 2_000) });
    const run = w.process(job(batchId, row), { isLastTry: true }).catch((err: unknown) => err);
    const answer = await held.arrived;
    // The webhook's reconciliation moves the row to `submitted` before the timed-out try records its end.
    const payment = await waitForPayment(row.reference!);
    const reconcile = createReconcileProcessor({ store: h.store, client: h.api });
    expect((await reconcile.applyPayment(payment)).outcome).toBe("updated");
    expect(await run).toBeInstanceOf(Error); // the last try timed out: it would mark the row `error`
    answer.release();
    const after = await h.store.getRow(batchId, row.rowKey);
    expect(after).toMatchObject({ state: "submitted", paymentId: payment.id });
  });

  it("the store refuses `error` and `rejected` for a row that left `queued`", async () => {
    const row = instruction();
    const batchId = await recordOnly([row]);
    await h.store.changeRow(batchId, row.rowKey, { to: "submitted", fields: { paymentId: "pay_x" } });
    for (const to of ["error", "rejected"] as const) {
      const result = await h.store.changeRow(batchId, row.rowKey, { expectedAttempt: 1, to });
      expect(result.outcome).toBe("refused");
    }
    expect((await h.store.getRow(batchId, row.rowKey))?.state).toBe("submitted");
  });

  it("an operator retry while attempt 1's request is still on its way waits, then adopts what it paid", async () => {
    const row = instruction();
    const batchId = await recordOnly([row]);
    // W1's request leaves and is held on the way (a stopped worker, a slow network).
    const held = proxy.hold(isPost("/payments"));
    const w1 = createPaymentProcessor({ store: h.store, client: client("proxy", 1_500) });
    const w1Run = w1.process(job(batchId, row), { isLastTry: false }).catch((err: unknown) => err);
    const request = await held.arrived;
    // Meanwhile another run of the job gave up: the row is `error` (outcome unknown).
    await w1.markError({ batchId, rowKey: row.rowKey, attempt: 1 }, new Error("gave up"));
    expect((await h.store.getRow(batchId, row.rowKey))?.state).toBe("error");

    const retryNow = await retryRows({
      store: h.store,
      enqueuer: h.pipeline.enqueuer,
      batchId,
      ledger: h.api,
    });
    expect(retryNow).toMatchObject({ kind: "done", retried: [] });
    if (retryNow.kind !== "done") throw new Error("unreachable");
    expect(retryNow.leftAlone[0]?.reason).toMatch(/not retried yet.*may still reach/);

    // W1 gave up waiting (its answer is lost); the held request lands after all.
    expect(await w1Run).toBeInstanceOf(Error);
    request.release();
    await waitForPayment(row.reference!);
    // Later (past the request's window) the retry asks the ledger first and adopts attempt 1's payment.
    const later = () => Date.now() + 10 * 60_000;
    const retryLater = await retryRows({
      store: h.store,
      enqueuer: h.pipeline.enqueuer,
      batchId,
      ledger: h.api,
      now: later,
    });
    expect(retryLater).toMatchObject({ kind: "done", retried: [], adopted: [{ rowNumber: row.rowNumber }] });
    const payments = await paymentsOfBatch(h.api, batchId);
    expect(payments).toHaveLength(1);
    expect(payments[0]!.externalId).toBe(row.reference);
    expect(await h.store.getRow(batchId, row.rowKey)).toMatchObject({
      attempt: 1,
      paymentId: payments[0]!.id,
    });
  });

  it("a request cut by shutdown hands the job back: the row is never `rejected` and pays once later", async () => {
    const row = instruction();
    const batchId = await recordOnly([row]);
    const held = proxy.hold(isPost("/payments"));
    const shuttingDown = client("proxy");
    const w = createPaymentProcessor({ store: h.store, client: shuttingDown });
    const run = w.process(job(batchId, row), { isLastTry: true }).catch((err: unknown) => err);
    const request = await held.arrived;
    await shuttingDown.close(); // what the worker's stop does once the grace runs out
    expect(await run).toBeInstanceOf(HandBackError);
    expect(await h.store.getRow(batchId, row.rowKey)).toMatchObject({ state: "queued", attempt: 1 });
    // The cut request reached the service after all; the job runs again under the same key.
    request.release();
    const again = createPaymentProcessor({ store: h.store, client: client("direct") });
    await sleep(100);
    expect(await again.process(job(batchId, row), { isLastTry: false })).toMatchObject({ outcome: "paid" });
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(1);
  });
});
