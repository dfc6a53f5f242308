/**
 * The batch-finished notification (NOTIFY_URL): when a batch's last row is final, a small JSON summary
 * is POSTed, signed the way the service signs its webhooks (hex HMAC-SHA256 of the raw body, keyed with
 * PAYOUTS_WEBHOOK_SECRET) in `X-Payouts-Signature`, so the receiver can verify it with the same code.
 * It carries counts and money per currency, never a secret or a bank identifier.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import type { ApprovalRecord } from "../approvals/index.js";
import type { BatchProgress, BatchStore } from "../batches/index.js";
import { formatMinor } from "../money/index.js";
import { backoffDelayMs, DEFAULT_NOTIFY_RETRY_OPTIONS, type RetryOptions } from "../payouts-api/index.js";
import { defaultResultPath, type ResultOutbox } from "../results/index.js";
import { signWebhookPayload } from "../webhooks/index.js";

export const NOTIFY_SIGNATURE_HEADER = "x-payouts-signature";
export const NOTIFY_ID_HEADER = "x-payouts-notification-id";

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
  notificationId: string = randomUUID(),
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

export interface NotifyOptions {
  url: string;
  secret: string;
  /** Retries of the POST; missing fields use DEFAULT_NOTIFY_RETRY_OPTIONS (payouts-api/retry-policy.ts). */
  retry?: Partial<RetryOptions>;
  /** Time-out of one try, ms. Default 10 000. */
  timeoutMs?: number;
}

/**
 * POSTs a signed notification (the batch-finished summary, or approvals' `batch.awaiting_approval`);
 * retries on connection errors and non-2xx answers. Resolves with the last status.
 */
export async function sendBatchFinished(
  summary: { notificationId: string },
  options: NotifyOptions,
): Promise<number> {
  const body = Buffer.from(JSON.stringify(summary));
  const signature = signWebhookPayload(options.secret, body);
  const retry: RetryOptions = { ...DEFAULT_NOTIFY_RETRY_OPTIONS, ...options.retry };
  let lastStatus = 0;
  for (let attempt = 1; attempt <= retry.maxAttempts; attempt++) {
    try {
      const res = await request(options.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          [NOTIFY_SIGNATURE_HEADER]: signature,
          [NOTIFY_ID_HEADER]: summary.notificationId,
        },
        body,
        headersTimeout: options.timeoutMs ?? 10_000,
        bodyTimeout: options.timeoutMs ?? 10_000,
      });
      await res.body.dump();
      lastStatus = res.statusCode;
      if (res.statusCode >= 200 && res.statusCode < 300) return lastStatus;
    } catch {
      lastStatus = 0;
    }
    // Any failure is retried (the receiver dedupes on the notification id), with the client's backoff.
    if (attempt < retry.maxAttempts) await sleep(backoffDelayMs(attempt, retry, Math.random));
  }
  return lastStatus;
}

export interface BatchFinishedHandlerOptions {
  store: BatchStore;
  outbox: Pick<ResultOutbox, "writeNow">;
  dataDir: string;
  /** NOTIFY_URL and the signing secret; without them only the final result file is written. */
  notify?: { url: string; secret: string } | undefined;
  logger?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
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
      options.logger?.warn(
        { batchId, err: err instanceof Error ? err.message : String(err) },
        "batch finished: follow-up failed",
      );
    }
  };
}
