/**
 * `batch.awaiting_approval`: sent to NOTIFY_URL once per held batch, as a Standard Webhook like the
 * batch-finished summary (src/notify), so approvers learn a batch waits.
 * Money per currency only; never a bank identifier or a secret.
 */
import { randomUUID } from "node:crypto";
import type { BatchProgress } from "../../batches/index.js";
import { formatMinor } from "../../money/index.js";
import type { ApprovalRecord } from "../types.js";

export interface AwaitingApprovalNotice {
  event: "batch.awaiting_approval";
  /** Unique per notification and stable across its retries: receivers dedupe on it. */
  notificationId: string;
  batchId: string;
  sourceName: string;
  createdAt: string;
  submittedBy: string;
  required: number;
  expiresAt: string;
  rows: number;
  invalidRows: number;
  /** Per currency: the batch's total, in minor units and as text in major units. */
  totals: Record<string, { minor: number; amount: string; rows?: number }>;
  /** The thresholds it reached. */
  reasons: { currency: string; total: string; threshold: string; rule: string }[];
}

function money(minor: number, currency: string): string {
  try {
    return formatMinor(minor, currency);
  } catch {
    return String(minor);
  }
}

export function awaitingApprovalNotice(
  record: ApprovalRecord,
  progress: BatchProgress,
  notificationId: string = randomUUID(),
): AwaitingApprovalNotice {
  const totals: AwaitingApprovalNotice["totals"] = {};
  for (const [currency, byState] of Object.entries(progress.totals)) {
    const minor = Object.values(byState).reduce((sum: number, v) => sum + (v ?? 0), 0);
    totals[currency] = { minor, amount: money(minor, currency) };
  }
  return {
    event: "batch.awaiting_approval",
    notificationId,
    batchId: record.batchId,
    sourceName: progress.batch.sourceName,
    createdAt: progress.batch.createdAt,
    submittedBy: record.submittedBy,
    required: record.required,
    expiresAt: record.expiresAt,
    rows: progress.batch.rowCount,
    invalidRows: progress.batch.invalidCount,
    totals,
    reasons: record.reasons.map((r) => ({
      currency: r.currency,
      total: money(r.total, r.currency),
      threshold: money(r.threshold, r.currency),
      rule: r.rule,
    })),
  };
}
