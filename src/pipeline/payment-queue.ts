/**
 * The payments queue: a BullMQ job pays a few rows of one batch ({@link ROWS_PER_JOB}), each row
 * still on its own: its own send fence, Idempotency-Key and outcome. A job of one row has the row's
 * Idempotency-Key as its id (a UUID: never digits only, never a `:`); a job of several rows has an id
 * made from all their keys. Either way adding the same rows twice while their job exists is a no-op;
 * rows whose places in the batch's order list the feed gives are put in jobs by those places (rows
 * 0–15, 16–31, ...), so rows handed over again make the same jobs whatever page they came in.
 * The job data is only the rows' coordinates; the worker reads everything else from the rows in Redis.
 *
 * Why several rows a job: a BullMQ job costs about as much CPU (in the worker and in Redis) as the
 * rest of a row's bookkeeping together; a job carrying a handful of rows pays that once for all.
 */
import { createHash } from "node:crypto";
import { type JobsOptions, type KeepJobs, Queue } from "bullmq";
import type { RowEnqueuer, RowJobRequest, RowRecord } from "../batches/index.js";
import { DEFAULT_JOB_RETRY_SETTINGS, type JobRetrySettings, jobRetryOptions } from "../payouts-api/index.js";
import type { RedisClient } from "../redis/index.js";

export const PAYMENT_QUEUE_NAME = "payments";

/**
 * A payment job: the first row's coordinates, and the further rows of the same batch it pays. (The
 * first row in the fields of a job of one row, which is all a job was before jobs carried rows.)
 */
export interface PaymentJobData {
  batchId: string;
  rowKey: string;
  attempt: number;
  /** Further rows of the batch: `[rowKey, attempt]` each. */
  more?: [string, number][];
}

/** One row a payment job pays: the row's coordinates, as the row store names them. */
export type PaymentRowRef = Pick<RowRecord, "batchId" | "rowKey" | "attempt">;

/**
 * Rows a job carries at most. Enough to spread a job's cost thin (beyond it the saving is small);
 * few enough that a job's retry (which re-reads its paid rows and passes them over) stays cheap.
 */
export const ROWS_PER_JOB = 16;

/** The rows a job pays, in its order. */
export function rowsOfJob(data: PaymentJobData): PaymentRowRef[] {
  const rows: PaymentRowRef[] = [{ batchId: data.batchId, rowKey: data.rowKey, attempt: data.attempt }];
  for (const [rowKey, attempt] of data.more ?? []) rows.push({ batchId: data.batchId, rowKey, attempt });
  return rows;
}

/**
 * The rows as jobs: consecutive rows of one batch share a job, up to {@link ROWS_PER_JOB}, and rows
 * with places in the order list share one only within the same run of ROWS_PER_JOB places. A job of
 * one row is that row's Idempotency-Key; a job of more is named by all of theirs, so the same rows
 * make the same job and other rows (some of the same ones, say) another.
 */
export function paymentJobsFor(
  rows: readonly RowJobRequest[],
  rowsPerJob = ROWS_PER_JOB,
): { data: PaymentJobData; jobId: string }[] {
  const jobs: { data: PaymentJobData; jobId: string }[] = [];
  for (let i = 0; i < rows.length; ) {
    const first = rows[i]!;
    let end = i + 1;
    const block = first.position === undefined ? undefined : Math.floor(first.position / rowsPerJob);
    const sameJob = (r: RowJobRequest) =>
      r.batchId === first.batchId &&
      (block === undefined || (r.position !== undefined && Math.floor(r.position / rowsPerJob) === block));
    while (end < rows.length && end - i < rowsPerJob && sameJob(rows[end]!)) end++;
    const data: PaymentJobData = { batchId: first.batchId, rowKey: first.rowKey, attempt: first.attempt };
    let jobId = first.jobId;
    if (end - i > 1) {
      const group = rows.slice(i, end);
      data.more = group.slice(1).map((r): [string, number] => [r.rowKey, r.attempt]);
      const digest = createHash("sha256")
        .update(group.map((r) => r.jobId).join(","))
        .digest("base64url");
      jobId = `rows-${digest.slice(0, 32)}`;
    }
    jobs.push({ data, jobId });
    i = end;
  }
  return jobs;
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
 * batches' feeds keep under `window` rows (src/batches/batch-feeder.ts): the jobs not started yet,
 * waiting (also paused or prioritized) or delayed (a retry's backoff, a job handed back), since those
 * are what holds Redis memory while the workers catch up (a paused queue keeps its jobs in `wait` in
 * BullMQ 6), each counted as a full job of rows. Active jobs are left out: they are bounded by the
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
    backlog: async () => ROWS_PER_JOB * (await queue.getJobCountByTypes("wait", "prioritized", "delayed")),
    async enqueue(rows: readonly RowJobRequest[]): Promise<void> {
      if (rows.length === 0) return;
      await queue.addBulk(
        paymentJobsFor(rows).map(({ data, jobId }) => ({ name: "payment", data, opts: { ...opts, jobId } })),
      );
    },
  };
}
