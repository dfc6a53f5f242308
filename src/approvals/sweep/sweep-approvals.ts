/**
 * The approval sweep (run by `payouts worker` on a BullMQ job scheduler): expires held batches past
 * their expiry, settles decided batches whose follow-up was interrupted (rows queued or canceled), and
 * announces newly held batches to NOTIFY_URL. Each part works from an index (the expiry zset, the
 * unsettled and unannounced sets), never from a scan of every batch.
 */

import type { BatchProgress } from "../../batches/index.js";
import { type SettleContext, type SettleResult, settleBatch } from "../settle-batch.js";
import type { ApprovalRecord } from "../types.js";

export interface ApprovalSweepContext extends SettleContext {
  /** Sends `batch.awaiting_approval`; true when the receiver took it. Without it nothing is announced. */
  announce?: ((record: ApprovalRecord, progress: BatchProgress) => Promise<boolean>) | undefined;
  /** Told of every batch this sweep settled (the worker refreshes its result file). */
  onSettled?: ((batchId: string, result: SettleResult) => void) | undefined;
}

export interface ApprovalSweepReport {
  expired: number;
  settled: number;
  announced: number;
}

export async function sweepApprovals(ctx: ApprovalSweepContext): Promise<ApprovalSweepReport> {
  const report: ApprovalSweepReport = { expired: 0, settled: 0, announced: 0 };
  for (const batchId of await ctx.approvals.dueForExpiry()) {
    const { outcome } = await ctx.approvals.expireIfDue(batchId);
    if (outcome === "expired") report.expired++;
    // A hold whose batch never got recorded (its submitter died in between; the file was then taken
    // over under a new batch id) has nothing to expire: forget it.
    else if (outcome === "not-ready" && !(await ctx.store.getBatch(batchId))) {
      await ctx.approvals.dropFromIndexes(batchId);
    }
  }
  for (const batchId of await ctx.approvals.unsettledBatchIds()) {
    const result = await settleBatch(ctx, batchId);
    if (result.outcome === "queued" || result.outcome === "canceled") {
      report.settled++;
      ctx.onSettled?.(batchId, result);
    }
  }
  for (const batchId of await ctx.approvals.unannouncedBatchIds()) {
    if (!ctx.announce) {
      await ctx.approvals.takeAnnouncement(batchId);
      continue;
    }
    // Announced only once every row is recorded (the totals are whole); a hold whose batch record is
    // not there yet is left for the next sweep.
    const progress = await ctx.store.progress(batchId);
    if (!progress?.batch.rowsRecorded) continue;
    const record = await ctx.approvals.get(batchId);
    if (!record || !(await ctx.approvals.takeAnnouncement(batchId))) continue;
    if (record.status !== "awaiting-approval") continue;
    if (await ctx.announce(record, progress)) report.announced++;
    else await ctx.approvals.returnAnnouncement(batchId);
  }
  return report;
}
