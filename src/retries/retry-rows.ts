/**
 * An operator retry: a new attempt (the next attempt number, hence a new Idempotency-Key and the
 * `externalId` `<reference>-r<attempt>`, DESIGN rule 1) for each planned row, then one job per row
 * now queued. The state check is repeated atomically in Redis (startNewAttempt), so a row that moved
 * on since the plan was made (the reconcile worker adopted a payment) is left alone, not retried.
 */
import { type BatchStore, enqueueQueuedRows, type RowEnqueuer } from "../batches/index.js";
import { externalIdFor } from "../row-identity/index.js";
import { type LeftAlone, planRetry } from "./row-selection.js";

export interface RetryRowsOptions {
  store: BatchStore;
  enqueuer: RowEnqueuer;
  batchId: string;
  /** Row numbers as the sheet shows them; undefined: every retryable row. */
  rows?: readonly number[];
  /** Recorded in each row's history. */
  note?: string;
}

export interface RetriedRow {
  rowNumber: number;
  /** The new attempt number. */
  attempt: number;
  /** The payment externalId this attempt will use. */
  externalId: string;
}

export type RetryRowsResult =
  | { kind: "unknown-batch"; batchId: string }
  | { kind: "done"; batchId: string; retried: RetriedRow[]; leftAlone: LeftAlone[]; enqueued: number };

export async function retryRows(options: RetryRowsOptions): Promise<RetryRowsResult> {
  const { store, batchId } = options;
  const batch = await store.getBatch(batchId);
  if (!batch) return { kind: "unknown-batch", batchId };
  const rows = await store.listRows(batchId);
  const invalid = new Set((await store.invalidRows(batchId)).map((r) => r.rowNumber));
  const plan = planRetry(rows, invalid, options.rows);
  const byKey = new Map(rows.map((r) => [r.rowKey, r]));

  const retried: RetriedRow[] = [];
  const leftAlone = [...plan.leftAlone];
  for (const row of plan.retry) {
    const result = await store.startNewAttempt(
      batchId,
      row.rowKey,
      row.attempt,
      options.note ?? "operator retry",
    );
    if (result.outcome !== "ok") {
      leftAlone.push({
        rowNumber: row.rowNumber,
        reason: `it changed meanwhile (now ${result.previous ?? "unknown"}, attempt ${result.attempt ?? "?"}); look again`,
      });
      continue;
    }
    // On success the script answers with the new attempt number.
    const attempt = result.attempt ?? row.attempt + 1;
    const record = byKey.get(row.rowKey)!;
    retried.push({
      rowNumber: row.rowNumber,
      attempt,
      externalId: externalIdFor({
        batchId,
        rowNumber: row.rowNumber,
        reference: record.instruction.reference,
        attempt,
      }),
    });
  }
  leftAlone.sort((a, b) => a.rowNumber - b.rowNumber);
  // Every queued row of the batch is (re-)offered: job ids are the rows' keys, so rows already in
  // the queue are not added twice, and a retry interrupted before this point is completed by the next.
  const enqueued = await enqueueQueuedRows(store, options.enqueuer, batch);
  return { kind: "done", batchId, retried, leftAlone, enqueued };
}
