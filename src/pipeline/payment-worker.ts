/**
 * The BullMQ side of the payment worker: concurrency, 429 handling (`worker.rateLimit` +
 * `Worker.RateLimitError()`), `UnrecoverableError` for rows that must not
 * retry, a job handed back (same key, no try used) when shutdown cut its request, and a bounded
 * graceful close. The work itself is in payment-processor.ts; the run's job lock goes with it to the
 * send fence.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DelayedError, type Job, UnrecoverableError, Worker } from "bullmq";
import type { LogSink } from "../logging/index.js";
import { isRateLimited } from "../payouts-api/index.js";
import type { RedisClient } from "../redis/index.js";
import { HandBackError, type PaymentProcessor, type ProcessResult } from "./payment-processor.js";
import { bullPrefix, PAYMENT_JOBS_KEPT, PAYMENT_QUEUE_NAME, type PaymentJobData } from "./payment-queue.js";

export interface PaymentWorkerOptions {
  /** A connection with `maxRetriesPerRequest: null` (BullMQ requires it). Not closed by the worker. */
  connection: RedisClient;
  /** The store's key prefix; the queue lives under `<prefix>:bull`. */
  prefix: string;
  processor: PaymentProcessor;
  /** Jobs processed at the same time in this process. */
  concurrency: number;
  /** Job lock; a crashed worker's jobs run again this long after it died. Default 30 000 ms. */
  lockDurationMs?: number;
  /** How often stalled jobs are looked for. Default: BullMQ's (30 000 ms) or the lock duration if shorter. */
  stalledIntervalMs?: number;
  /** Times a job may stall (its worker died) before it fails. Default 10: crashes must not fail rows. */
  maxStalledCount?: number;
  /** Wait used after a 429 without Retry-After. Default 1000 ms. */
  defaultRateLimitWaitMs?: number;
  /** How long a job handed back at shutdown waits before it may run again. Default 1000 ms. */
  handBackDelayMs?: number;
  logger?: LogSink;
}

/**
 * The job layer's give-up rule: BullMQ will not run this failed job again. Either its tries are used
 * up, or it was failed for good: by us (an `UnrecoverableError` after the row was recorded `rejected`
 * or `error`), or by BullMQ for a job that stalled more often than allowed, which BullMQ signals by
 * setting the job's `deferredFailure` (it then fails it without running our processor). Known by
 * those signals, never by matching error text.
 */
export function isJobGivenUp(
  job: Pick<Job, "attemptsMade" | "opts" | "deferredFailure">,
  err: unknown,
): boolean {
  const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1);
  return exhausted || err instanceof UnrecoverableError || job.deferredFailure !== undefined;
}

export function createPaymentWorker(options: PaymentWorkerOptions): Worker<PaymentJobData, ProcessResult> {
  const { processor, logger } = options;
  const lockDuration = options.lockDurationMs ?? 30_000;
  const worker: Worker<PaymentJobData, ProcessResult> = new Worker<PaymentJobData, ProcessResult>(
    PAYMENT_QUEUE_NAME,
    async (job: Job<PaymentJobData, ProcessResult>, token?: string) => {
      const isLastTry = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const lock = token ? { key: `${job.queueQualifiedName}:${job.id}:lock`, token } : undefined;
      let result: ProcessResult;
      try {
        result = await processor.process(job.data, { isLastTry, lock });
      } catch (err) {
        if (isRateLimited(err)) {
          // Pause the whole queue for as long as the service asked, without using up a try.
          await worker.rateLimit(err.retryAfterMs ?? options.defaultRateLimitWaitMs ?? 1000);
          throw Worker.RateLimitError();
        }
        if (err instanceof HandBackError) {
          // Shutdown cut the request: the job runs again later under the same key, its try not used up.
          // Should this move fail too (Redis going away), the lock expires and the job runs again as
          // a stalled one: either way nothing about the row changes.
          await job.moveToDelayed(Date.now() + (options.handBackDelayMs ?? 1000), token);
          throw new DelayedError();
        }
        throw err;
      }
      if (result.outcome === "rejected" || result.outcome === "error") {
        // Recorded on the row already; the job fails without retries so queue tools show it.
        throw new UnrecoverableError(`${result.outcome}: ${result.code}`);
      }
      return result;
    },
    {
      connection: options.connection,
      prefix: bullPrefix(options.prefix),
      concurrency: options.concurrency,
      // The request rate is the shared limiter's (src/payouts-api/shared-rate-limit.ts), the one
      // mechanism of PAYOUTS_RATE_LIMIT_PER_SECOND. BullMQ honours `worker.rateLimit` (the 429 pause
      // above) only with a limiter set, so this one is there for the pause and caps nothing.
      limiter: { max: Number.MAX_SAFE_INTEGER, duration: 1000 },
      lockDuration,
      stalledInterval: options.stalledIntervalMs ?? Math.min(30_000, lockDuration),
      maxStalledCount: options.maxStalledCount ?? 10,
      ...PAYMENT_JOBS_KEPT,
      autorun: true,
    },
  );

  worker.on("failed", (job, err) => {
    if (!job || !isJobGivenUp(job, err)) return;
    // Usually recorded by the processor already (then this is refused: the row is no longer
    // `queued`); this catches jobs BullMQ failed on its own, e.g. one that stalled too often.
    processor.markError(job.data, err).catch((e: unknown) => {
      logger?.error({ err: e, jobId: job.id }, "could not record a failed job on its row");
    });
  });
  worker.on("error", (err) => {
    logger?.warn({ err }, "payment worker error");
  });
  return worker;
}

/**
 * Stops taking jobs and lets in-flight ones finish, for at most `timeoutMs`. Returns false when the
 * bound was hit: the caller should then abort in-flight HTTP calls (closing the API client), after
 * which BullMQ gives the jobs back for a retry under the same keys.
 */
export async function closeWorkerWithin(worker: Worker, timeoutMs: number): Promise<boolean> {
  const closing = worker.close().then(() => true);
  const timer = sleep(timeoutMs, false, { ref: false });
  return Promise.race([closing, timer]);
}
