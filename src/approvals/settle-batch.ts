/**
 * What follows a decision: an approved batch's rows go to the payment queue, a rejected or expired
 * batch's rows end `canceled` (no payment was ever created for them). Idempotent and resumable: the
 * decision script listed the batch in `unsettled`, and it leaves that list only once this is done, so
 * a crash in between (a worker restart between approval and enqueue) is finished by the next sweep.
 * Queueing twice is harmless anyway: job ids are the rows' Idempotency-Keys, and only rows still
 * `queued` are offered.
 */
import {
  APPROVAL_EXPIRED,
  APPROVAL_REJECTED,
  appendCorrection,
  type BatchRecord,
  type BatchStore,
  enqueueQueuedRows,
  ROW_CHUNK,
  type RowEnqueuer,
} from "../batches/index.js";
import type { ApprovalStore, HeldCorrection } from "./approval-store.js";
import type { ApprovalRecord } from "./types.js";

/** Error codes of rows canceled because their batch was not approved (never retried: src/batches). */
export { APPROVAL_EXPIRED, APPROVAL_REJECTED };

export interface SettleContext {
  approvals: ApprovalStore;
  store: BatchStore;
  enqueuer: RowEnqueuer;
}

export type SettleResult =
  | { outcome: "queued"; rows: number; record: ApprovalRecord }
  /** A correction round decided: its rows started (approved) or left as they were (not approved). */
  | { outcome: "corrections"; started: number; dropped: number; record: ApprovalRecord }
  | { outcome: "canceled"; rows: number; record: ApprovalRecord }
  /** Still awaiting approval, or no approval record: nothing to do. */
  | { outcome: "undecided" }
  /** Another process is settling it right now. */
  | { outcome: "busy" }
  /** The batch record is gone (Redis lost it): dropped from the approval indexes. */
  | { outcome: "missing" };

export async function settleBatch(ctx: SettleContext, batchId: string): Promise<SettleResult> {
  const record = await ctx.approvals.get(batchId);
  if (!record || record.status === "awaiting-approval") return { outcome: "undecided" };
  const batch = await ctx.store.getBatch(batchId);
  if (!batch) {
    await ctx.approvals.dropFromIndexes(batchId);
    return { outcome: "missing" };
  }
  const unlock = await ctx.approvals.lockForSettling(batchId);
  if (!unlock) return { outcome: "busy" };
  try {
    let result: SettleResult;
    if (record.heldFor === "correction") {
      result = await settleCorrections(ctx, batch, record);
    } else if (record.status === "approved") {
      result = { outcome: "queued", rows: await enqueueQueuedRows(ctx.store, ctx.enqueuer, batch), record };
    } else {
      result = { outcome: "canceled", rows: await cancelQueuedRows(ctx.store, record), record };
    }
    await ctx.store.markEnqueueComplete(batchId);
    await ctx.approvals.markSettled(batchId);
    return result;
  } finally {
    await unlock();
  }
}

/** Why the rows of a batch that was not approved end canceled (the row's error code and message). */
export function cancellationOf(record: ApprovalRecord): { code: string; message: string } {
  if (record.status === "rejected") {
    const reason = record.reason ? `: ${record.reason}` : "";
    return {
      code: APPROVAL_REJECTED,
      message: `batch rejected by ${record.decidedBy ?? "an approver"} at ${record.decidedAt ?? "?"}${reason}`,
    };
  }
  return {
    code: APPROVAL_EXPIRED,
    message: `batch not approved before ${record.expiresAt} (${record.approvals.length} of ${record.required} approvals)`,
  };
}

async function cancelQueuedRows(store: BatchStore, record: ApprovalRecord): Promise<number> {
  const { code, message } = cancellationOf(record);
  const rowKeys = await store.rowKeys(record.batchId);
  let canceled = 0;
  for (let i = 0; i < rowKeys.length; i += ROW_CHUNK) {
    const keys = rowKeys.slice(i, i + ROW_CHUNK);
    const states = await store.rowStates(record.batchId, keys);
    const results = await Promise.all(
      keys.map((rowKey, j) => {
        const s = states[j];
        if (s?.state !== "queued") return undefined;
        return store.changeRow(record.batchId, rowKey, {
          expectedAttempt: s.attempt,
          to: "canceled",
          fields: { errorCode: code, errorMessage: message },
          note: `batch ${record.status}: no payment was created`,
        });
      }),
    );
    canceled += results.filter((r) => r?.outcome === "ok").length;
  }
  return canceled;
}

/**
 * A decided correction round: approved, each held correction starts the row's next attempt with the
 * corrected instruction (only if the row is still on the attempt it was corrected on: a row that moved
 * meanwhile is left alone), then the batch is fed; not approved, the rows stay as they were.
 */
async function settleCorrections(
  ctx: SettleContext,
  batch: BatchRecord,
  record: ApprovalRecord,
): Promise<SettleResult> {
  const held = await ctx.approvals.heldCorrections(batch.id);
  let started = 0;
  for (const c of held) {
    if (record.status === "approved" && (await startCorrected(ctx.store, batch, c, record))) started++;
    await ctx.approvals.dropHeldCorrection(batch.id, c.rowKey);
  }
  if (started > 0) await enqueueQueuedRows(ctx.store, ctx.enqueuer, batch);
  return { outcome: "corrections", started, dropped: held.length - started, record };
}

async function startCorrected(
  store: BatchStore,
  batch: BatchRecord,
  c: HeldCorrection,
  record: ApprovalRecord,
): Promise<boolean> {
  const correction = { instruction: c.instruction, source: c.source };
  const result = await store.startNewAttemptWithCorrection(
    batch.id,
    c.rowKey,
    c.expectedAttempt,
    correction,
    `correction by ${c.by} (${c.via}) approved in round ${record.round}: ${c.changes
      .map((x) => `${x.field} ${x.old} -> ${x.new}`)
      .join(", ")}`,
  );
  if (result.outcome !== "ok") return false;
  await store.reopenBatch(batch.id);
  if (batch.archivePath) {
    await appendCorrection(batch.archivePath, {
      ...correction,
      attempt: result.attempt ?? c.expectedAttempt + 1,
    });
  }
  return true;
}
