/**
 * The reconciler as a service: its Redis connections, the look loop (look-runner.ts: batches whose
 * marked rows went quiet, read a page at a time), and the sweep's job scheduler on the reconcile queue
 * (`upsertJobScheduler`, so every worker process shares one schedule instead of each adding its own).
 * Used by `payouts worker`, the demo and tests.
 */
import type { Worker as BullWorker, Job, Queue } from "bullmq";
import { Worker } from "bullmq";
import { BatchStore, DEFAULT_KEY_PREFIX } from "../batches/index.js";
import type { LogSink } from "../logging/index.js";
import type { PayoutsClient } from "../payouts-api/index.js";
import { bullPrefix, closeWorkerWithin, connectRedis, DEFAULT_SHUTDOWN_GRACE_MS } from "../pipeline/index.js";
import type { RedisTarget } from "../redis/index.js";
import { LookIndex } from "./look-index.js";
import { createLookRunner, DEFAULT_RECONCILE_DEBOUNCE_MS, type LookRunner } from "./look-runner.js";
import {
  createReconcileProcessor,
  type ReconcileHooks,
  type ReconcileProcessor,
} from "./reconcile-processor.js";
import {
  createReconcileQueue,
  RECONCILE_JOB_OPTIONS,
  RECONCILE_QUEUE_NAME,
  type ReconcileJobData,
  SWEEP_SCHEDULER_ID,
} from "./reconcile-queue.js";
import { type SweepReport, sweepOnce } from "./sweep.js";

/** How often the sweep runs. */
export const DEFAULT_SWEEP_EVERY_MS = 60_000;
/** How long a row may sit non-terminal, untouched, before the sweep looks at its payment again. */
export const DEFAULT_STALE_AFTER_MS = 5 * 60_000;
/** Batches one worker process looks at at once. */
export const DEFAULT_RECONCILE_CONCURRENCY = 4;
/** How often a finished batch still watched for returns is looked at. */
export const DEFAULT_WATCH_EVERY_MS = 24 * 3_600_000;

export interface ReconcileServiceOptions extends ReconcileHooks, RedisTarget {
  /** Key prefix of the pipeline's data (default `payouts`); the queue lives under `<prefix>:bull`. */
  prefix?: string;
  /** The API client; owned by the service from now on (closed by `stop`). */
  client: PayoutsClient;
  /** Batches looked at at once by this process. Default {@link DEFAULT_RECONCILE_CONCURRENCY}. */
  concurrency?: number;
  /** Sweep interval. Default 60 000 ms. 0 disables the schedule (tests call `sweep()` themselves). */
  sweepEveryMs?: number;
  /** Age after which a non-terminal row's payment is looked at again. Default 300 000 ms. */
  staleAfterMs?: number;
  /** Quiet time before a marked row is looked at. Default {@link DEFAULT_RECONCILE_DEBOUNCE_MS}. */
  quietMs?: number;
  /** How often this process asks for batches to look at. Default 250 ms. 0: only `lookNow()`. */
  lookEveryMs?: number;
  /** How long finished batches stay watched for returns (ms; 0: not watched). Default 0. */
  watchForMs?: number;
  /** How often a watched batch is looked at. Default {@link DEFAULT_WATCH_EVERY_MS}. */
  watchEveryMs?: number;
  logger?: LogSink;
}

export interface ReconcileService {
  /** The reconcile queue (the sweep's schedule). */
  queue: Queue<ReconcileJobData>;
  worker: BullWorker<ReconcileJobData, SweepReport>;
  processor: ReconcileProcessor;
  store: BatchStore;
  index: LookIndex;
  looks: LookRunner;
  /** Runs one sweep now (what the scheduled job does). */
  sweep(): Promise<SweepReport>;
  /** Looks now at every batch whose marks are due (what the loop does on its own). */
  lookNow(): ReturnType<LookRunner["runOnce"]>;
  /** Stops taking work, lets looks under way finish within `graceMs`, closes every connection. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

export async function startReconcileService(options: ReconcileServiceOptions): Promise<ReconcileService> {
  const prefix = options.prefix ?? DEFAULT_KEY_PREFIX;
  const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  const sweepEveryMs = options.sweepEveryMs ?? DEFAULT_SWEEP_EVERY_MS;
  const watchEveryMs = options.watchEveryMs ?? DEFAULT_WATCH_EVERY_MS;
  const logger = options.logger;
  // Separate connections: the store pipelines, the queue loads BullMQ's scripts, the worker blocks.
  const redis = connectRedis(options, { autoPipelining: true });
  const queueConnection = connectRedis(options);
  const workerConnection = connectRedis(options);
  const store = new BatchStore(redis, { prefix });
  const index = new LookIndex(redis, prefix);
  const queue = createReconcileQueue(queueConnection, prefix);
  const processor = createReconcileProcessor({
    store,
    client: options.client,
    ...(logger ? { logger } : {}),
    ...(options.onRowsChanged ? { onRowsChanged: options.onRowsChanged } : {}),
    ...(options.onBatchFinished ? { onBatchFinished: options.onBatchFinished } : {}),
    ...(options.onRowReturned ? { onRowReturned: options.onRowReturned } : {}),
    watch: { forMs: options.watchForMs ?? 0, everyMs: watchEveryMs },
  });
  const looks = createLookRunner({
    store,
    index,
    client: options.client,
    processor,
    logger,
    quietMs: options.quietMs ?? DEFAULT_RECONCILE_DEBOUNCE_MS,
    ...(options.lookEveryMs ? { tickMs: options.lookEveryMs } : {}),
    batchesAtOnce: options.concurrency ?? DEFAULT_RECONCILE_CONCURRENCY,
  });
  const sweep = () =>
    sweepOnce({ store, index, processor, readPages: looks.readPages, staleAfterMs, watchEveryMs });

  const worker = new Worker<ReconcileJobData, SweepReport>(
    RECONCILE_QUEUE_NAME,
    async (_job: Job<ReconcileJobData>) => {
      const report = await sweep();
      if (report.marked > 0 || report.finished > 0 || report.watched > 0)
        logger?.info({ ...report }, "reconcile sweep");
      return report;
    },
    { connection: workerConnection, prefix: bullPrefix(prefix), concurrency: 1, autorun: true },
  );
  worker.on("failed", (_job, err) => logger?.warn({ err }, "reconcile sweep failed"));
  worker.on("error", (err) => logger?.warn({ err }, "reconcile worker error"));

  try {
    if (sweepEveryMs > 0) {
      await queue.upsertJobScheduler(
        SWEEP_SCHEDULER_ID,
        { every: sweepEveryMs },
        { name: "sweep", data: { kind: "sweep" }, opts: RECONCILE_JOB_OPTIONS },
      );
    }
  } catch (err) {
    await worker.close();
    await queue.close();
    for (const c of [redis, queueConnection, workerConnection]) c.disconnect();
    throw err;
  }
  if (options.lookEveryMs !== 0) looks.start();

  let stopping: Promise<void> | undefined;
  return {
    queue,
    worker,
    processor,
    store,
    index,
    looks,
    sweep,
    lookNow: () => looks.runOnce(),
    stop: (graceMs = DEFAULT_SHUTDOWN_GRACE_MS) => {
      stopping ??= (async () => {
        const looksDone = looks.stop();
        const inTime = await Promise.race([
          looksDone.then(() => true),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref()),
        ]);
        // Aborting the client's calls ends the looks under way; their marks stay, for the next look.
        if (!inTime) await options.client.close();
        await looksDone.catch(() => undefined);
        if (!(await closeWorkerWithin(worker, graceMs))) await worker.close(true).catch(() => undefined);
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
