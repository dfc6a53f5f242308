/**
 * The approval sweep as a service of `payouts worker`: its own BullMQ queue with one job scheduler
 * (`upsertJobScheduler`, shared by every worker process), so the sweep runs once per interval however
 * many workers there are. It also runs once at start: a worker restarted between an approval and the
 * queueing of its rows finishes that at once.
 */
import { Queue, Worker } from "bullmq";
import { AuditTrail } from "../../audit/index.js";
import type { LogSink } from "../../logging/index.js";
import { type NotifyOptions, sendBatchFinished } from "../../notify/index.js";
import {
  bullPrefix,
  connectRedis,
  openPipeline,
  type PipelineSettings,
  quietQueue,
} from "../../pipeline/index.js";
import { ApprovalStore } from "../approval-store.js";
import { type ApprovalAudit, approvalAuditTo } from "../audit.js";
import type { SettleResult } from "../settle-batch.js";
import { awaitingApprovalNotice } from "./announce.js";
import { type ApprovalSweepReport, sweepApprovals } from "./sweep-approvals.js";

export const APPROVAL_QUEUE_NAME = "approvals";
export const APPROVAL_SWEEP_SCHEDULER_ID = "approval-sweep";
/** How often held batches are checked for expiry and interrupted follow-ups finished. */
export const DEFAULT_APPROVAL_SWEEP_EVERY_MS = 15_000;

export interface ApprovalServiceOptions extends PipelineSettings {
  /** 0 disables the schedule (tests call `sweep()`). Default 15 s. */
  everyMs?: number;
  /** NOTIFY_URL and its signing secret: `batch.awaiting_approval` goes there. */
  notify?: Pick<NotifyOptions, "url" | "secret" | "retry"> | undefined;
  /** Where expiries are recorded; default the audit trail in Redis under the same prefix. */
  audit?: ApprovalAudit | undefined;
  onSettled?: ((batchId: string, result: SettleResult) => void) | undefined;
  logger?: LogSink | undefined;
  /** Clock (tests). */
  now?: (() => Date) | undefined;
}

export interface ApprovalService {
  sweep(): Promise<ApprovalSweepReport>;
  stop(): Promise<void>;
}

export async function startApprovalService(options: ApprovalServiceOptions): Promise<ApprovalService> {
  const pipeline = openPipeline(options);
  const audit = options.audit ?? approvalAuditTo(new AuditTrail(pipeline.redis, pipeline.prefix));
  const approvals = new ApprovalStore(pipeline.redis, {
    prefix: pipeline.prefix,
    audit,
    ...(options.now ? { now: options.now } : {}),
  });
  const logger = options.logger;
  const notify = options.notify;
  const sweep = async () => {
    const report = await sweepApprovals({
      approvals,
      store: pipeline.store,
      enqueuer: pipeline.enqueuer,
      onSettled: options.onSettled,
      announce: notify
        ? async (record, progress) => {
            const status = await sendBatchFinished(awaitingApprovalNotice(record, progress), notify);
            const ok = status >= 200 && status < 300;
            if (ok) logger?.info({ batchId: record.batchId, status }, "awaiting-approval notification sent");
            else
              logger?.warn(
                { batchId: record.batchId, status },
                "awaiting-approval notification not accepted",
              );
            return ok;
          }
        : undefined,
    });
    if (report.expired + report.settled + report.announced > 0) logger?.info({ ...report }, "approval sweep");
    return report;
  };
  const queueConnection = connectRedis(options);
  const workerConnection = connectRedis(options);
  const queue = quietQueue(
    new Queue(APPROVAL_QUEUE_NAME, {
      connection: queueConnection,
      prefix: bullPrefix(pipeline.prefix),
    }),
  );
  const worker = new Worker(APPROVAL_QUEUE_NAME, () => sweep(), {
    connection: workerConnection,
    prefix: bullPrefix(pipeline.prefix),
    concurrency: 1,
  });
  worker.on("error", (err) => logger?.warn({ err }, "approval sweep worker error"));
  worker.on("failed", (_job, err) => logger?.warn({ err }, "approval sweep failed; it runs again"));
  const everyMs = options.everyMs ?? DEFAULT_APPROVAL_SWEEP_EVERY_MS;
  const close = async () => {
    await worker.close();
    await queue.close();
    await pipeline.close();
    for (const c of [queueConnection, workerConnection]) await c.quit().catch(() => c.disconnect());
  };
  try {
    if (everyMs > 0) {
      await queue.upsertJobScheduler(
        APPROVAL_SWEEP_SCHEDULER_ID,
        { every: everyMs },
        { name: "sweep", data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
      );
    }
    await sweep();
  } catch (err) {
    await close();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    sweep,
    stop: () => {
      stopping ??= close();
      return stopping;
    },
  };
}
