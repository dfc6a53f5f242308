/**
 * The reconcile worker as a service: its Redis connections, the BullMQ worker over the reconcile
 * queue, and the sweep's job scheduler (`upsertJobScheduler`, so every worker process shares one
 * schedule instead of each adding its own). Used by `payouts worker`, the demo and tests.
 */
import type { Worker as BullWorker, Job, Queue } from "bullmq";
import { Worker } from "bullmq";
import { BatchStore, DEFAULT_KEY_PREFIX } from "../batches/index.js";
import type { PayoutsClient } from "../payouts-api/index.js";
import { bullPrefix, closeWorkerWithin, connectRedis, DEFAULT_SHUTDOWN_GRACE_MS } from "../pipeline/index.js";
import {
  createReconcileProcessor,
  type ReconcileHooks,
  type ReconcileLogger,
  type ReconcileProcessor,
  type ReconcileResult,
} from "./reconcile-processor.js";
import {
  createReconcileQueue,
  RECONCILE_QUEUE_NAME,
  type ReconcileEnqueuer,
  type ReconcileJobData,
  reconcileEnqueuer,
  SWEEP_SCHEDULER_ID,
} from "./reconcile-queue.js";
import { type SweepReport, sweepOnce } from "./sweep.js";

/** How often the sweep runs. */
export const DEFAULT_SWEEP_EVERY_MS = 60_000;
/** How long a row may sit non-terminal, untouched, before the sweep looks at its payment again. */
export const DEFAULT_STALE_AFTER_MS = 5 * 60_000;
export const DEFAULT_RECONCILE_CONCURRENCY = 8;

export interface ReconcileServiceOptions extends ReconcileHooks {
  redisUrl: string;
  /** Key prefix of the pipeline's data (default `payouts`); the queue lives under `<prefix>:bull`. */
  prefix?: string;
  /** The API client; owned by the service from now on (closed by `stop`). */
  client: PayoutsClient;
  /** Reconcile jobs processed at once. Default 8. */
  concurrency?: number;
  /** Sweep interval. Default 60 000 ms. 0 disables the schedule (tests call `sweep()` themselves). */
  sweepEveryMs?: number;
  /** Age after which a non-terminal row's payment is looked at again. Default 300 000 ms. */
  staleAfterMs?: number;
  logger?: ReconcileLogger;
}

export interface ReconcileService {
  queue: Queue<ReconcileJobData>;
  worker: BullWorker<ReconcileJobData, ReconcileResult | SweepReport>;
  processor: ReconcileProcessor;
  store: BatchStore;
  /** Runs one sweep now (what the scheduled job does). */
  sweep(): Promise<SweepReport>;
  /** Stops taking jobs, lets in-flight ones finish within `graceMs`, closes every connection. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

export async function startReconcileService(options: ReconcileServiceOptions): Promise<ReconcileService> {
  const prefix = options.prefix ?? DEFAULT_KEY_PREFIX;
  const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  const sweepEveryMs = options.sweepEveryMs ?? DEFAULT_SWEEP_EVERY_MS;
  const logger = options.logger;
  // Separate connections, as in the payment service: the store pipelines, the queue loads BullMQ's
  // scripts, and the worker blocks on its own.
  const redis = connectRedis(options.redisUrl, { autoPipelining: true });
  const queueConnection = connectRedis(options.redisUrl);
  const workerConnection = connectRedis(options.redisUrl);
  const store = new BatchStore(redis, { prefix });
  const queue = createReconcileQueue(queueConnection, prefix);
  const enqueuer: ReconcileEnqueuer = reconcileEnqueuer(queue);
  const processor = createReconcileProcessor({
    store,
    client: options.client,
    ...(logger ? { logger } : {}),
    ...(options.onRowsChanged ? { onRowsChanged: options.onRowsChanged } : {}),
    ...(options.onBatchFinished ? { onBatchFinished: options.onBatchFinished } : {}),
  });
  const sweep = () =>
    sweepOnce({
      store,
      processor,
      staleAfterMs,
      enqueue: async (paymentIds) => {
        await Promise.all(
          paymentIds.map((paymentId) => enqueuer.enqueue({ kind: "payment", paymentId, origin: "sweep" })),
        );
      },
    });

  const worker = new Worker<ReconcileJobData, ReconcileResult | SweepReport>(
    RECONCILE_QUEUE_NAME,
    async (job: Job<ReconcileJobData>) => {
      const data = job.data;
      if (data.kind === "sweep") {
        const report = await sweep();
        if (report.enqueued > 0 || report.finished > 0) logger?.info({ ...report }, "reconcile sweep");
        return report;
      }
      return processor.reconcilePayment(data.paymentId);
    },
    {
      connection: workerConnection,
      prefix: bullPrefix(prefix),
      concurrency: options.concurrency ?? DEFAULT_RECONCILE_CONCURRENCY,
      autorun: true,
    },
  );
  worker.on("failed", (job, err) => {
    if (job?.data.kind !== "payment") return;
    // A payment still not readable after every try is looked at again by the next sweep.
    logger?.warn(
      { paymentId: job.data.paymentId, attemptsMade: job.attemptsMade, err: err.message },
      "reconcile job failed",
    );
  });
  worker.on("error", (err) => logger?.warn({ err: err.message }, "reconcile worker error"));

  try {
    if (sweepEveryMs > 0) {
      await queue.upsertJobScheduler(
        SWEEP_SCHEDULER_ID,
        { every: sweepEveryMs },
        { name: "sweep", data: { kind: "sweep" }, opts: { removeOnComplete: true, removeOnFail: 100 } },
      );
    }
  } catch (err) {
    await worker.close();
    await queue.close();
    for (const c of [redis, queueConnection, workerConnection]) c.disconnect();
    throw err;
  }

  let stopping: Promise<void> | undefined;
  return {
    queue,
    worker,
    processor,
    store,
    sweep,
    stop: (graceMs = DEFAULT_SHUTDOWN_GRACE_MS) => {
      stopping ??= (async () => {
        if (!(await closeWorkerWithin(worker, graceMs))) {
          // Aborting the client's calls makes the in-flight jobs fail; BullMQ retries them later.
          await options.client.close();
          await worker.close(true).catch(() => undefined);
        }
        await options.client.close();
        await processor.flushFinishChecks();
        await queue.close();
        for (const c of [queueConnection, workerConnection, redis]) {
          await c.quit().catch(() => c.disconnect());
        }
      })();
      return stopping;
    },
  };
}
