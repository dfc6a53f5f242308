/**
 * Nightly runs as a service (part of `payouts worker`): a BullMQ job scheduler fires one job per cron
 * tick (SCHEDULE_CRON in SCHEDULE_TZ); the job submits every sheet waiting in scheduled/. The schedule
 * lives in Redis and is shared: `upsertJobScheduler` keeps one schedule however many workers start,
 * and the job runs on one of them. Without a cron the scheduler is removed, so a schedule from an
 * earlier configuration does not keep firing (every worker must therefore share the same setting).
 */
import { type Job, Queue, Worker } from "bullmq";
import { DEFAULT_KEY_PREFIX } from "../batches/index.js";
import {
  bullPrefix,
  closeWorkerWithin,
  connectRedis,
  DEFAULT_SHUTDOWN_GRACE_MS,
  quietQueue,
} from "../pipeline/index.js";
import { type IntakeConnection, openSheetIntake } from "../watch/index.js";
import type { RunSummary } from "./run-summary.js";
import { runScheduledSheets } from "./scheduled-run.js";

export const SCHEDULED_RUN_QUEUE_NAME = "scheduled-runs";
/** One schedule per pipeline prefix; upserting it replaces an earlier pattern or time zone. */
export const SCHEDULED_RUN_SCHEDULER_ID = "nightly-run";

export interface ScheduleServiceOptions extends IntakeConnection {
  /** SCHEDULE_CRON (5 fields, or 6 with seconds first); undefined: nothing is scheduled. */
  cron: string | undefined;
  /** SCHEDULE_TZ, an IANA time zone. */
  tz: string;
  /** The quiet period: a file untouched this long is complete (src/watch/stability.ts). */
  stableMs?: number;
  /** Sheets taken at once (src/watch/folder-watcher.ts). */
  concurrency?: number;
  /** Called after each run (tests, metrics). */
  onRun?: (run: { summary: RunSummary; summaryPath: string }) => void;
}

export interface ScheduleService {
  /** Whether a schedule is active (SCHEDULE_CRON was set). */
  scheduled: boolean;
  /** Stops taking runs, lets a run in progress finish within `graceMs`, closes connections. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

export async function startScheduleService(options: ScheduleServiceOptions): Promise<ScheduleService> {
  const prefix = options.pipeline.prefix ?? DEFAULT_KEY_PREFIX;
  const queueConnection = connectRedis(options.pipeline);
  const queue = quietQueue(
    new Queue(SCHEDULED_RUN_QUEUE_NAME, {
      connection: queueConnection,
      prefix: bullPrefix(prefix),
    }),
  );
  const closeQueue = async () => {
    await queue.close();
    await queueConnection.quit().catch(() => queueConnection.disconnect());
  };

  if (options.cron === undefined) {
    try {
      if (await queue.removeJobScheduler(SCHEDULED_RUN_SCHEDULER_ID)) {
        options.logger?.info({}, "SCHEDULE_CRON is not set: removed the earlier nightly-run schedule");
      }
    } finally {
      await closeQueue();
    }
    return { scheduled: false, stop: async () => undefined };
  }

  const tz = options.tz;
  const { intake, close: closeIntake } = await openSheetIntake(options);
  const workerConnection = connectRedis(options.pipeline);
  const worker = new Worker<Record<string, never>, { summaryPath: string }>(
    SCHEDULED_RUN_QUEUE_NAME,
    async (_job: Job) => {
      const run = await runScheduledSheets({
        intake,
        ...(options.stableMs !== undefined ? { stableMs: options.stableMs } : {}),
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      });
      options.onRun?.(run);
      return { summaryPath: run.summaryPath };
    },
    // One run at a time per process: runs of several processes may overlap, and that is safe because
    // every sheet is claimed by a rename.
    { connection: workerConnection, prefix: bullPrefix(prefix), concurrency: 1 },
  );
  worker.on("failed", (_job, err) => options.logger?.error({ err }, "scheduled run failed"));
  worker.on("error", (err) => options.logger?.warn({ err }, "schedule worker error"));

  try {
    await queue.upsertJobScheduler(
      SCHEDULED_RUN_SCHEDULER_ID,
      { pattern: options.cron, tz },
      { name: "scheduled-run", data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
  } catch (err) {
    await worker.close();
    await workerConnection.quit().catch(() => workerConnection.disconnect());
    await closeQueue();
    await closeIntake();
    throw new Error(
      `SCHEDULE_CRON "${options.cron}" with SCHEDULE_TZ "${tz}" cannot be scheduled: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  options.logger?.info(
    { cron: options.cron, tz, folder: intake.folders.scheduled },
    "nightly runs scheduled",
  );

  let stopping: Promise<void> | undefined;
  return {
    scheduled: true,
    stop: (graceMs = DEFAULT_SHUTDOWN_GRACE_MS) => {
      stopping ??= (async () => {
        if (!(await closeWorkerWithin(worker, graceMs))) await worker.close(true).catch(() => undefined);
        await workerConnection.quit().catch(() => workerConnection.disconnect());
        await closeQueue();
        await closeIntake();
      })();
      return stopping;
    },
  };
}
