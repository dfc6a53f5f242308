/**
 * The BullMQ side of the payment worker: a job pays its rows (payment-queue.ts) side by side, at most
 * `concurrency` rows of the process in flight; 429 handling (`worker.rateLimit` +
 * `Worker.RateLimitError()`), `UnrecoverableError` for rows that must not retry, a job handed back
 * (same keys, no try used) when shutdown cut a request, and a bounded graceful close. The work itself
 * is in payment-processor.ts, one row at a time; the run's job lock goes with each row to its send
 * fence.
 *
 * A job's rows share its tries: when a row's try fails and may be retried, the whole job runs again
 * after its backoff, and its rows already paid (or ended) are passed over by the processor, which
 * reads each row first. So every row gets as many tries as a job has, never more.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DelayedError, type Job, UnrecoverableError, Worker } from "bullmq";
import pLimit from "p-limit";
import { PayoutsError } from "../errors/index.js";
import type { LogSink } from "../logging/index.js";
import { isRateLimited, type PayoutsApiError } from "../payouts-api/index.js";
import type { RedisClient } from "../redis/index.js";
import { HandBackError, type PaymentProcessor, type ProcessResult } from "./payment-processor.js";
import {
  bullPrefix,
  PAYMENT_JOBS_KEPT,
  PAYMENT_QUEUE_NAME,
  type PaymentJobData,
  type PaymentRowRef,
  ROWS_PER_JOB,
  rowsOfJob,
} from "./payment-queue.js";

/** What became of one row's try: how it was paid, or why not; `retrying` when its job runs again. */
export type RowTryOutcome = "created" | "adopted" | "skipped" | "rejected" | "error" | "retrying";

/**
 * Some rows of a job failed a try that may be retried: the job runs again (using up one of its
 * tries). Carries each row with its own error, so a job given up marks exactly those rows, each with
 * its own cause (see `createPaymentWorker`).
 */
export class PaymentRowsError extends PayoutsError {
  override readonly name = "PaymentRowsError";
  constructor(
    readonly failures: readonly { row: PaymentRowRef; err: unknown }[],
    override readonly cause: unknown,
  ) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super("PAYMENT_ROWS_FAILED", failures.length === 1 ? why : `${failures.length} rows: ${why}`, {
      kind: cause instanceof PayoutsError ? cause.kind : "unavailable",
      cause,
    });
  }
}

export interface PaymentWorkerOptions {
  /** A connection with `maxRetriesPerRequest: null` (BullMQ requires it). Not closed by the worker. */
  connection: RedisClient;
  /** The store's key prefix; the queue lives under `<prefix>:bull`. */
  prefix: string;
  processor: PaymentProcessor;
  /** Rows paid at the same time in this process (a job carries several). */
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
  /** Told every row's outcome as its try ends (metrics count them). */
  onRowOutcome?: (outcome: RowTryOutcome) => void;
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

/** A row's try as it ended: its result, or what it threw. */
type RowTry = { row: PaymentRowRef; result: ProcessResult } | { row: PaymentRowRef; err: unknown };

/** `jobRunsAgain`: the job is retried, handed back or paused for a 429, so a failed row tries again. */
function outcomeOf(t: RowTry, jobRunsAgain: boolean): RowTryOutcome {
  if ("err" in t) return jobRunsAgain ? "retrying" : "error";
  const r = t.result;
  return r.outcome === "paid" ? r.how : r.outcome;
}

export function createPaymentWorker(options: PaymentWorkerOptions): Worker<PaymentJobData, void> {
  const { processor, logger } = options;
  const lockDuration = options.lockDurationMs ?? 30_000;
  // Rows in flight in this process, whatever job they belong to; one job more than the rows need
  // keeps them busy while a job waits on its slowest row.
  const inFlight = pLimit(Math.max(1, options.concurrency));
  const jobsAtOnce = Math.ceil(Math.max(1, options.concurrency) / ROWS_PER_JOB) + 1;

  async function runJob(job: Job<PaymentJobData, void>, token?: string): Promise<void> {
    const isLastTry = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const lock = token ? { key: `${job.queueQualifiedName}:${job.id}:lock`, token } : undefined;
    const tries = await Promise.all(
      rowsOfJob(job.data).map((row) =>
        inFlight(async (): Promise<RowTry> => {
          try {
            return { row, result: await processor.process(row, { isLastTry, lock }) };
          } catch (err) {
            return { row, err };
          }
        }),
      ),
    );
    const failed = tries.filter((t): t is Extract<RowTry, { err: unknown }> => "err" in t);
    const handedBack = failed.some((t) => t.err instanceof HandBackError);
    const limited = failed.filter((t) => isRateLimited(t.err));
    const retried = failed.filter((t) => !isRateLimited(t.err));
    // Given up only on its last try with a failure other than a 429 and no row handed back: then
    // every failed row is marked `error` (the `failed` handler below), a 429 row's too.
    const runsAgain = handedBack || retried.length === 0 || !isLastTry;
    for (const t of tries) options.onRowOutcome?.(outcomeOf(t, runsAgain));
    if (handedBack) {
      // Shutdown cut a request: the job runs again later under the same keys, its try not used up.
      // Should this move fail too (Redis going away), the lock expires and the job runs again as a
      // stalled one: either way nothing about the rows changes.
      await job.moveToDelayed(Date.now() + (options.handBackDelayMs ?? 1000), token);
      throw new DelayedError();
    }
    if (limited.length > 0) {
      // Pause the whole queue for as long as the service asked.
      const waits = limited.map(
        (t) => (t.err as PayoutsApiError).retryAfterMs ?? options.defaultRateLimitWaitMs ?? 1000,
      );
      await worker.rateLimit(Math.max(...waits));
    }
    if (retried.length > 0) throw new PaymentRowsError(failed, retried[0]!.err);
    // Only 429s: the job runs again without using up a try.
    if (limited.length > 0) throw Worker.RateLimitError();
    const ended = tries.flatMap((t) =>
      "result" in t && (t.result.outcome === "rejected" || t.result.outcome === "error") ? [t.result] : [],
    );
    const waiting = tries.some(
      (t) => "result" in t && t.result.outcome === "skipped" && t.result.reason === "paused",
    );
    if (ended.length > 0 && !waiting) {
      // Recorded on the rows already; the job fails without retries so queue tools show it. (Not
      // while a row of it waits for its paused batch: it is still `queued` and must stay so.)
      const first = ended[0] as Extract<ProcessResult, { code: string }>;
      const more = ended.length > 1 ? ` (and ${ended.length - 1} more rows)` : "";
      throw new UnrecoverableError(`${first.outcome}: ${first.code}${more}`);
    }
  }

  const worker: Worker<PaymentJobData, void> = new Worker<PaymentJobData, void>(PAYMENT_QUEUE_NAME, runJob, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix),
    concurrency: jobsAtOnce,
    // The request rate is the shared limiter's (src/payouts-api/shared-rate-limit.ts), the one
    // mechanism of PAYOUTS_RATE_LIMIT_PER_SECOND. BullMQ honours `worker.rateLimit` (the 429 pause
    // above) only with a limiter set, so this one is there for the pause and caps nothing.
    limiter: { max: Number.MAX_SAFE_INTEGER, duration: 1000 },
    lockDuration,
    stalledInterval: options.stalledIntervalMs ?? Math.min(30_000, lockDuration),
    maxStalledCount: options.maxStalledCount ?? 10,
    ...PAYMENT_JOBS_KEPT,
    autorun: true,
  });

  worker.on("failed", (job, err) => {
    if (!job || !isJobGivenUp(job, err)) return;
    // The rows whose last try failed (each with its own error), or every row of a job BullMQ failed
    // on its own (one that stalled too often, say). Usually recorded by the processor already (then
    // this is refused: the row is no longer `queued`); a row whose last try met a 429 is not, and
    // with its job given up nothing would send it again. An `UnrecoverableError` of ours follows
    // outcomes the rows hold already.
    const failures =
      err instanceof PaymentRowsError
        ? err.failures
        : err instanceof UnrecoverableError
          ? []
          : rowsOfJob(job.data).map((row) => ({ row, err }));
    for (const { row, err: cause } of failures) {
      processor.markError(row, cause).catch((e: unknown) => {
        logger?.error(
          { err: e, jobId: job.id, rowKey: row.rowKey },
          "could not record a failed job on its row",
        );
      });
    }
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
