/**
 * A payment job carries several rows (src/pipeline/payment-queue.ts); the worker pays them side by
 * side and each keeps its own outcome. What users depend on: no more rows in flight than the worker's
 * concurrency; a row whose try fails gets the job's tries (the job runs again, its paid rows passed
 * over), never a try more; on the last try only the rows that failed are marked `error`; a 429 or a
 * shutdown runs the job again without using a try; a row refused for good fails the job without
 * retries, unless a row of it waits for its paused batch (that row stays `queued`).
 *
 * Real BullMQ on a real Redis. The processor is scripted per row (the real one, against the sandbox,
 * is exercised by pipeline.test.ts and the feed tests): here what is under test is the job's handling
 * of its rows' outcomes.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Queue, Worker } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import type { RowJobRequest } from "../../../src/batches/index.js";
import { PayoutsApiError } from "../../../src/payouts-api/index.js";
import {
  connectRedis,
  createPaymentQueue,
  createPaymentWorker,
  HandBackError,
  type JobRun,
  type PaymentJobData,
  type PaymentProcessor,
  type PaymentRowRef,
  type ProcessResult,
  paymentQueueEnqueuer,
  type RowTryOutcome,
} from "../../../src/pipeline/index.js";
import type { RedisClient } from "../../../src/redis/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "./helpers.js";

/** What a scripted row does on its n-th call (1-based): a result, or an error thrown. */
type Script = (call: number, run: JobRun) => ProcessResult | Error;

const paid: Script = (call) =>
  call === 1
    ? { outcome: "paid", paymentId: "pay_x", how: "created" }
    : { outcome: "skipped", reason: "done" };

function failingOnce(err: () => Error): Script {
  return (call) => (call === 1 ? err() : { outcome: "paid", paymentId: "pay_y", how: "created" });
}

const serverError = () =>
  new PayoutsApiError({ status: 503, type: "api_error", code: "SERVICE_UNAVAILABLE", message: "try later" });

const tooMany = () =>
  new PayoutsApiError({
    status: 429,
    type: "rate_limit_error",
    code: "RATE_LIMITED",
    message: "slow down",
    retryAfterMs: 30,
  });

interface Rig {
  queue: Queue<PaymentJobData>;
  worker: Worker<PaymentJobData, void>;
  calls: Map<string, JobRun[]>;
  marked: (PaymentRowRef & { code: string })[];
  outcomes: RowTryOutcome[];
  enqueue(rows: [string, Script][], attempts?: number): Promise<void>;
  inFlight: { now: number; most: number };
}

const open: { redis: RedisClient; workerRedis: RedisClient; prefix: string; rig: Rig }[] = [];

afterEach(async () => {
  for (const { redis, workerRedis, prefix, rig } of open.splice(0)) {
    await rig.worker.close();
    await rig.queue.close();
    await deleteKeys(redis, prefix);
    redis.disconnect();
    workerRedis.disconnect();
  }
});

function rig(label: string, concurrency: number, workMs = 5): Rig {
  const prefix = uniquePrefix(label);
  const redis = connectRedis(REDIS_URL);
  const workerRedis = connectRedis(REDIS_URL);
  const scripts = new Map<string, Script>();
  const calls = new Map<string, JobRun[]>();
  const marked: (PaymentRowRef & { code: string })[] = [];
  const outcomes: RowTryOutcome[] = [];
  const inFlight = { now: 0, most: 0 };
  const processor: PaymentProcessor = {
    async process(row, run) {
      inFlight.most = Math.max(inFlight.most, ++inFlight.now);
      try {
        await sleep(workMs);
        const runs = calls.get(row.rowKey) ?? [];
        runs.push(run);
        calls.set(row.rowKey, runs);
        const done = scripts.get(row.rowKey)!(runs.length, run);
        if (done instanceof Error) throw done;
        return done;
      } finally {
        inFlight.now--;
      }
    },
    async markError(row, err) {
      const code = err instanceof PayoutsApiError ? err.code : String(err);
      marked.push({ batchId: row.batchId, rowKey: row.rowKey, attempt: row.attempt, code });
    },
  };
  const queue = createPaymentQueue(redis, prefix);
  const worker = createPaymentWorker({
    connection: workerRedis,
    prefix,
    processor,
    concurrency,
    defaultRateLimitWaitMs: 50,
    handBackDelayMs: 50,
    onRowOutcome: (o) => outcomes.push(o),
  });
  const batchId = `b-${label}`;
  const r: Rig = {
    queue,
    worker,
    calls,
    marked,
    outcomes,
    inFlight,
    async enqueue(rows, attempts = 3) {
      const requests: RowJobRequest[] = rows.map(([rowKey, script]) => {
        scripts.set(rowKey, script);
        return { batchId, rowKey, attempt: 1, jobId: randomUUID() };
      });
      await paymentQueueEnqueuer(queue, { attempts, backoffMs: 20 }, 10_000).enqueue(requests);
    },
  };
  open.push({ redis, workerRedis, prefix, rig: r });
  return r;
}

/** Waits until BullMQ has no job of the queue left waiting, delayed or active. */
async function settled(r: Rig): Promise<void> {
  await expect
    .poll(() => r.queue.getJobCountByTypes("wait", "delayed", "active", "prioritized"), { timeout: 20_000 })
    .toBe(0);
  // The failed handler's marks are made just after the job moves.
  await sleep(100);
}

const count = (list: string[], what: string) => list.filter((x) => x === what).length;

describe("a payment job carrying several rows", () => {
  it("pays every row once, each with its outcome, never more rows in flight than the concurrency", async () => {
    const r = rig("job-rows-all", 5);
    const keys = Array.from({ length: 40 }, (_, i) => `R${i}`);
    await r.enqueue(keys.map((k) => [k, paid]));
    await settled(r);
    expect(keys.map((k) => r.calls.get(k)?.length)).toEqual(keys.map(() => 1));
    expect(count(r.outcomes, "created")).toBe(40);
    expect(r.inFlight.most).toBeLessThanOrEqual(5);
    expect(r.inFlight.most).toBeGreaterThan(1);
    expect(r.marked).toEqual([]);
  });

  it("runs the job again when a row's try fails; its paid rows are passed over, nothing is marked", async () => {
    const r = rig("job-rows-retry", 8);
    await r.enqueue([
      ["A", paid],
      ["B", failingOnce(serverError)],
      ["C", paid],
    ]);
    await settled(r);
    expect(["A", "B", "C"].map((k) => r.calls.get(k)?.map((run) => run.isLastTry))).toEqual([
      [false, false],
      [false, false],
      [false, false],
    ]);
    expect(count(r.outcomes, "created")).toBe(3);
    expect(count(r.outcomes, "retrying")).toBe(1);
    expect(count(r.outcomes, "skipped")).toBe(2);
    expect(r.marked).toEqual([]);
    // Every run of the job carried its lock to each row's send fence.
    expect(r.calls.get("B")!.every((run) => run.lock?.token)).toBe(true);
  });

  it("on the last try marks only the rows whose try failed, each with its own cause", async () => {
    const r = rig("job-rows-last", 8);
    await r.enqueue(
      [
        ["A", paid],
        ["B", () => serverError()],
        ["C", paid],
        // A 429 on the last try: its job given up, nothing would send the row again.
        ["D", (call) => (call === 1 ? serverError() : tooMany())],
      ],
      2,
    );
    await settled(r);
    expect(r.calls.get("B")?.map((run) => run.isLastTry)).toEqual([false, true]);
    expect(r.marked.map((m) => [m.rowKey, m.code]).sort()).toEqual([
      ["B", "SERVICE_UNAVAILABLE"],
      ["D", "RATE_LIMITED"],
    ]);
    // Both rows marked `error` count as such, the 429 row's too: its job runs no more.
    expect(count(r.outcomes, "error")).toBe(2);
    const [failed] = await r.queue.getFailed();
    expect(failed?.attemptsMade).toBe(2);
    expect(failed?.failedReason).toMatch(/try later/);
  });

  it("a 429 or a shutdown runs the job again without using a try", async () => {
    const r = rig("job-rows-again", 8);
    // One try only: a try used up would fail the job and mark the rows.
    await r.enqueue(
      [
        ["A", paid],
        ["B", failingOnce(tooMany)],
        ["C", failingOnce(() => new HandBackError(new Error("closing")))],
      ],
      1,
    );
    await settled(r);
    expect(r.marked).toEqual([]);
    expect(await r.queue.getFailedCount()).toBe(0);
    expect(count(r.outcomes, "created")).toBe(3);
    expect(r.calls.get("B")!.length).toBeGreaterThanOrEqual(2);
    expect(r.calls.get("C")!.length).toBeGreaterThanOrEqual(2);
  });

  it("a row refused for good fails its job without retries, unless a row of it waits for its paused batch", async () => {
    const r = rig("job-rows-refused", 8);
    const refused: Script = () => ({ outcome: "rejected", code: "ACCOUNT_NOT_VERIFIED" });
    await r.enqueue([
      ["A", paid],
      ["B", refused],
    ]);
    await r.enqueue([
      ["C", refused],
      ["D", () => ({ outcome: "skipped", reason: "paused" })],
    ]);
    await settled(r);
    const failed = await r.queue.getFailed();
    expect(failed.map((j) => [j.data.rowKey, j.attemptsMade, j.failedReason])).toEqual([
      ["A", 1, "rejected: ACCOUNT_NOT_VERIFIED"],
    ]);
    expect(await r.queue.getCompletedCount()).toBe(0);
    // Neither the refused rows (their outcome is recorded) nor the paused one (still `queued`).
    expect(r.marked).toEqual([]);
    expect(["A", "B", "C", "D"].map((k) => r.calls.get(k)?.length)).toEqual([1, 1, 1, 1]);
  });
});
