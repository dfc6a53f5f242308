/** What the API says about a batch: its summary (state, counts, money) from the store's progress. */
import { type ApprovalRecord, ApprovalStore } from "../approvals/index.js";
import { type BatchStop, readStop } from "../batch-control/index.js";
import type { BatchProgress, BatchStore } from "../batches/index.js";
import { formatMinorOrRaw } from "../money/index.js";

/**
 * A batch's state in the API and the console. A batch held for approval (docs/operating.md "Approvals") is
 * `awaiting-approval` until decided, and a rejected or expired one ends `rejected` or `expired` (its
 * rows canceled); an approved one runs like any other.
 */
export type BatchState = "submitting" | "awaiting-approval" | "rejected" | "expired" | "running" | "finished";

function batchState(p: BatchProgress, approval?: Pick<ApprovalRecord, "status" | "heldFor">): BatchState {
  // A correction round rejected or expired left the batch's rows as they were: it is not the batch's state.
  const decidesBatch = approval?.heldFor !== "correction" || approval.status === "awaiting-approval";
  if (approval && approval.status !== "approved" && decidesBatch) return approval.status;
  if (!p.batch.enqueueComplete) return "submitting";
  // Not finishedAt: a retry after the batch finished makes it run again.
  if (p.done >= p.batch.rowCount) return "finished";
  return "running";
}

const money = formatMinorOrRaw;

/** Who submitted a batch through the API, and the file name they uploaded. */
interface BatchOrigin {
  createdBy: string;
  fileName: string;
  uploadId: string;
}

export function originKey(prefix: string, batchId: string): string {
  return `${prefix}:batch:${batchId}:api:origin`;
}

async function batchOrigin(
  store: BatchStore,
  prefix: string,
  batchId: string,
): Promise<Partial<BatchOrigin>> {
  return (await store.redis.hgetall(originKey(prefix, batchId))) as Partial<BatchOrigin>;
}

function batchView(
  p: BatchProgress,
  origin: Partial<BatchOrigin>,
  approval: ApprovalRecord | undefined,
  stop: BatchStop,
) {
  const totals = Object.entries(p.totals)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, byState]) => {
      const sum = Object.values(byState).reduce((s, n) => s + (n ?? 0), 0);
      return {
        currency,
        amount: money(sum, currency),
        byState: Object.fromEntries(Object.entries(byState).map(([s, n]) => [s, money(n ?? 0, currency)])),
      };
    });
  return {
    id: p.batch.id,
    sourceName: p.batch.sourceName,
    state: batchState(p, approval),
    createdAt: p.batch.createdAt,
    // Who submitted it: the API user, else the batch's own record (`system:inbox`, `cli:<user>`, ...).
    createdBy: origin.createdBy ?? p.batch.submittedBy ?? null,
    uploadId: origin.uploadId ?? null,
    finishedAt: p.batch.finishedAt ?? null,
    rows: p.batch.rowCount,
    invalidRows: p.batch.invalidCount,
    done: p.done,
    counts: p.counts,
    totals,
    /** The batch held against the service's ledger (`payouts audit`), when it was. */
    ledger: p.batch.ledger ?? null,
    /** For a batch that needed approval: its status, approvals needed, and who approved when. */
    approval: approval
      ? { status: approval.status, required: approval.required, approvals: approval.approvals }
      : null,
    /** Paused (by an operator or the circuit breaker): who, when, why; null while it runs. */
    pause: stop.paused,
    /** Canceled: who, when; null otherwise. */
    canceled: stop.canceled,
  };
}

/** The view of a batch with what it is read with: who submitted it through the API, and its approval. */
export async function batchViewOf(store: BatchStore, prefix: string, p: BatchProgress): Promise<BatchView> {
  const [origin, approval, stop] = await Promise.all([
    batchOrigin(store, prefix, p.batch.id),
    new ApprovalStore(store.redis, { prefix }).get(p.batch.id),
    readStop(store, p.batch.id),
  ]);
  return batchView(p, origin, approval, stop);
}

export type BatchView = ReturnType<typeof batchView>;
