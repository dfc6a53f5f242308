/**
 * The payments queue: one BullMQ job per row attempt. The job id is the row's Idempotency-Key (a UUID:
 * never digits only, never a `:`), so adding a row twice while its job exists is a no-op; the job data
 * is only the row's coordinates, and the worker reads everything else from the row in Redis.
 */
import { type JobsOptions, type KeepJobs, Queue } from "bullmq";
import type { RowEnqueuer, RowJobRequest } from "../batches/index.js";
import { DEFAULT_JOB_RETRY_SETTINGS, type JobRetrySettings, jobRetryOptions } from "../payouts-api/index.js";
import type { RedisClient } from "../redis/index.js";

export const PAYMENT_QUEUE_NAME = "payments";

export interface PaymentJobData {
  batchId: string;
  rowKey: string;
  attempt: number;
}

/** BullMQ's key prefix under the store's prefix, so one prefix isolates a whole installation or test. */
export function bullPrefix(prefix: string): string {
  return `${prefix}:bull`;
}

/** A payment job's options: the shared job retry policy (payouts-api/retry-policy.ts). */
export function paymentJobOptions(settings: JobRetrySettings): JobsOptions {
  return jobRetryOptions(settings);
}

/**
 * What becomes of a finished payment job: set on the payment worker, not on each job, because BullMQ
 * keeps every job's options in Redis with the job while it waits (tens of bytes a row for these two),
 * and a worker's setting applies to every job that names none.
 */
export const PAYMENT_JOBS_KEPT = {
  // A finished row lives on in its Redis record; the job is not needed any more. A re-add of the
  // id later is harmless: the row is past `queued`, so the worker does nothing. (A worker takes
  // BullMQ's KeepJobs form only: keeping none is `removeOnComplete: true`.)
  removeOnComplete: { count: 0 },
  // Failed jobs stay a week for inspection, the latest 10,000 at most so a batch that fails whole
  // does not keep a job per row. (A re-added id of a failed row is harmless: the row is past
  // `queued`, so the worker does nothing; only an operator retry, with a new key, sends it again.)
  removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
} satisfies { removeOnComplete: KeepJobs; removeOnFail: KeepJobs };

/**
 * How many events BullMQ keeps in a queue's event stream (its default: 10,000, about 1.5 MB). Nothing
 * here reads the stream (no QueueEvents); a short one keeps Redis's fixed cost small.
 */
export const QUEUE_EVENTS_KEPT = 1000;

export function createPaymentQueue(connection: RedisClient, prefix: string): Queue<PaymentJobData> {
  return quietQueue(
    new Queue<PaymentJobData>(PAYMENT_QUEUE_NAME, {
      connection,
      prefix: bullPrefix(prefix),
      streams: { events: { maxLen: QUEUE_EVENTS_KEPT } },
    }),
  );
}

/**
 * A queue re-emits its connection's errors, and BullMQ prints any that nobody listens to with a stack
 * trace, once per reconnection attempt while Redis is away. The failure reaches whoever needed the
 * queue through the rejected call (a one-shot command says so in one line), and the workers log
 * their own; so a queue listens and stays quiet.
 */
export function quietQueue<Q extends Queue>(queue: Q): Q {
  queue.on("error", () => undefined);
  return queue;
}

/**
 * Adds rows to the queue with `addBulk` (the caller chunks, ~1000 at a time); its backlog is what the
 * batches' feeds keep under `window` (src/batches/batch-feeder.ts): the jobs not started yet, waiting
 * (also paused or prioritized) or delayed (a retry's backoff, a job handed back), since those are what
 * holds Redis memory while the workers catch up (a paused queue keeps its jobs in `wait` in BullMQ 6). Active jobs are left out: they are bounded by the
 * workers' concurrency, and counting them would starve workers when the window is smaller.
 */
export function paymentQueueEnqueuer(
  queue: Queue<PaymentJobData>,
  settings: JobRetrySettings = DEFAULT_JOB_RETRY_SETTINGS,
  window: number,
): RowEnqueuer {
  const opts = paymentJobOptions(settings);
  return {
    window,
    backlog: () => queue.getJobCountByTypes("wait", "prioritized", "delayed"),
    async enqueue(jobs: readonly RowJobRequest[]): Promise<void> {
      if (jobs.length === 0) return;
      await queue.addBulk(
        jobs.map((j) => ({
          name: "payment",
          data: { batchId: j.batchId, rowKey: j.rowKey, attempt: j.attempt },
          opts: { ...opts, jobId: j.jobId },
        })),
      );
    },
  };
}
