/**
 * The batch-finished notification (NOTIFY_URL): when a batch's last row is final, a small summary is
 * sent as a Standard Webhook of type `batch.finished` (./send-notification.ts). It carries counts and
 * money per currency, never a secret or a bank identifier.
 */
import type { ApprovalRecord } from "../approvals/index.js";
import type { BatchProgress, BatchStore } from "../batches/index.js";
import type { LogSink } from "../logging/index.js";
import { formatMinor } from "../money/index.js";
import { defaultResultPath, type ResultOutbox } from "../results/index.js";
import {
  type NotifyOptions,
  notificationId as newNotificationId,
  sendNotification,
} from "./send-notification.js";

export interface BatchFinishedSummary {
  event: "batch.finished";
  /** Unique per notification and stable across its retries: receivers dedupe on it. */
  notificationId: string;
  batchId: string;
  sourceName: string;
  createdAt: string;
  finishedAt: string;
  rows: number;
  invalidRows: number;
  counts: Record<string, number>;
  /** Per currency and state: minor units and the same amount in major units, as text. */
  totals: Record<string, Record<string, { minor: number; amount: string }>>;
  resultFile: string | undefined;
  /** Who submitted the batch (a user, token or system identity), when recorded. */
  submittedBy?: string | undefined;
  /** For a batch that needed approval: who approved it and when, or who rejected it and why. */
  approval?: ApprovalSummary | undefined;
  /** The batch held against the service's ledger (`payouts audit`), when it was: its one-line outcome. */
  ledger?: string | undefined;
}

/** The approval part of notifications: who decided, when. */
export interface ApprovalSummary {
  status: ApprovalRecord["status"];
  required: number;
  approvals: ApprovalRecord["approvals"];
  decidedAt?: string | undefined;
  decidedBy?: string | undefined;
  reason?: string | undefined;
}

export function approvalSummary(record: ApprovalRecord): ApprovalSummary {
  return {
    status: record.status,
    required: record.required,
    approvals: record.approvals,
    ...(record.decidedAt ? { decidedAt: record.decidedAt } : {}),
    ...(record.decidedBy ? { decidedBy: record.decidedBy } : {}),
    ...(record.reason ? { reason: record.reason } : {}),
  };
}

export function batchFinishedSummary(
  progress: BatchProgress,
  resultFile: string | undefined,
  notificationId: string = newNotificationId(),
  approval?: ApprovalRecord,
): BatchFinishedSummary {
  const totals: BatchFinishedSummary["totals"] = {};
  for (const [currency, byState] of Object.entries(progress.totals)) {
    const entry: Record<string, { minor: number; amount: string }> = {};
    for (const [state, minor] of Object.entries(byState)) {
      if (minor !== undefined) entry[state] = { minor, amount: formatMinor(minor, currency) };
    }
    totals[currency] = entry;
  }
  return {
    event: "batch.finished",
    notificationId,
    batchId: progress.batch.id,
    sourceName: progress.batch.sourceName,
    createdAt: progress.batch.createdAt,
    finishedAt: progress.batch.finishedAt ?? new Date().toISOString(),
    rows: progress.batch.rowCount,
    invalidRows: progress.batch.invalidCount,
    counts: Object.fromEntries(Object.entries(progress.counts).filter(([, n]) => n > 0)),
    totals,
    resultFile,
    ...(progress.batch.submittedBy ? { submittedBy: progress.batch.submittedBy } : {}),
    ...(approval ? { approval: approvalSummary(approval) } : {}),
    ...(progress.batch.ledger ? { ledger: progress.batch.ledger.summary } : {}),
  };
}

/**
 * Sends a summary (the batch-finished one, or approvals' `batch.awaiting_approval`) as a notification
 * of its `event` type, its `notificationId` the webhook id. Resolves with the last status.
 */
export function sendBatchFinished(
  summary: { event: string; notificationId: string },
  options: NotifyOptions,
): Promise<number> {
  return sendNotification({ type: summary.event, data: summary, id: summary.notificationId }, options);
}

export interface BatchFinishedHandlerOptions {
  store: BatchStore;
  outbox: Pick<ResultOutbox, "writeNow">;
  dataDir: string;
  /** NOTIFY_URL and the signing secret; without them only the final result file is written. */
  notify?: { url: string; secret: string } | undefined;
  logger?: LogSink;
  /** The batch's approval record, if it needed one (src/approvals), for the summary. */
  approvalOf?: ((batchId: string) => Promise<ApprovalRecord | undefined>) | undefined;
  /**
   * Runs once the final result file is written, before the summary is read and sent: the ledger
   * check of the batch (src/ledger-audit), whose outcome the summary then carries.
   */
  beforeNotify?: ((batchId: string) => Promise<void>) | undefined;
}

/**
 * What happens when a batch's last row is final: the final result file is written to the outbox,
 * then (with NOTIFY_URL) the signed summary is sent. Never throws: a failed notification is logged.
 */
export function batchFinishedHandler(
  options: BatchFinishedHandlerOptions,
): (batchId: string) => Promise<void> {
  return async (batchId) => {
    try {
      await options.outbox.writeNow(batchId);
      let progress = await options.store.progress(batchId);
      if (!progress) return;
      const resultFile = defaultResultPath(options.dataDir, progress.batch, progress.batch.sheet.format);
      options.logger?.info({ batchId, resultFile, counts: progress.counts }, "batch finished");
      if (options.beforeNotify) {
        await options.beforeNotify(batchId);
        progress = (await options.store.progress(batchId)) ?? progress;
      }
      if (!options.notify) return;
      const approval = await options.approvalOf?.(batchId);
      const status = await sendBatchFinished(
        batchFinishedSummary(progress, resultFile, undefined, approval),
        options.notify,
      );
      if (status >= 200 && status < 300)
        options.logger?.info({ batchId, status }, "batch-finished notification sent");
      else options.logger?.warn({ batchId, status }, "batch-finished notification was not accepted");
    } catch (err) {
      options.logger?.warn({ batchId, err }, "batch finished: follow-up failed");
    }
  };
}
