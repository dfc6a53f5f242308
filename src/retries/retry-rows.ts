/**
 * An operator retry: a new attempt (the next attempt number, hence a new Idempotency-Key and the
 * `externalId` `<reference>-r<attempt>`, docs/design.md §3.1) for each planned row, then one job per row
 * now queued. Each row goes through startAttempt: a row in `error` is resolved against the ledger
 * first (adopted when it did pay, not retried while its last request may still land), and the state
 * check is repeated atomically in Redis, so a row that moved on since the plan was made is left alone.
 */
import { type BatchStore, enqueueQueuedRows, type RowEnqueuer } from "../batches/index.js";
import { type LeftAlone, planRetry } from "./row-selection.js";
import { type LedgerApi, startAttempt } from "./start-attempt.js";

export interface RetryRowsOptions {
  store: BatchStore;
  enqueuer: RowEnqueuer;
  batchId: string;
  /** Row numbers as the sheet shows them; undefined: every retryable row. */
  rows?: readonly number[];
  /** Recorded in each row's history. */
  note?: string;
  /** The ledger, to resolve rows in `error` before they are retried (without it they are not). */
  ledger?: LedgerApi | undefined;
  now?: () => number;
}

export interface RetriedRow {
  rowNumber: number;
  /** The new attempt number. */
  attempt: number;
  /** The payment externalId this attempt will use. */
  externalId: string;
}

/** A row in `error` whose earlier attempt turned out to have paid: its payment was adopted. */
export interface AdoptedRow {
  rowNumber: number;
  paymentId: string;
  state: string;
}

/** Why an adopted row was not retried, in words: the API's `leftAlone` reason and `payouts retry`'s line. */
export function adoptedReason(row: Pick<AdoptedRow, "paymentId" | "state">): string {
  return `its earlier attempt did pay (payment ${row.paymentId}, now ${row.state})`;
}

export type RetryRowsResult =
  | { kind: "unknown-batch"; batchId: string }
  | {
      kind: "done";
      batchId: string;
      retried: RetriedRow[];
      adopted: AdoptedRow[];
      leftAlone: LeftAlone[];
      enqueued: number;
    };

export async function retryRows(options: RetryRowsOptions): Promise<RetryRowsResult> {
  const { store, batchId } = options;
  const batch = await store.getBatch(batchId);
  if (!batch) return { kind: "unknown-batch", batchId };
  const rows = await store.listRows(batchId);
  const invalid = new Set((await store.invalidRows(batchId)).map((r) => r.rowNumber));
  const plan = planRetry(rows, invalid, options.rows);
  const byKey = new Map(rows.map((r) => [r.rowKey, r]));

  const retried: RetriedRow[] = [];
  const adopted: AdoptedRow[] = [];
  const leftAlone = [...plan.leftAlone];
  for (const planned of plan.retry) {
    const row = byKey.get(planned.rowKey)!;
    const started = await startAttempt({
      store,
      ledger: options.ledger,
      batch,
      row,
      note: options.note ?? "operator retry",
      ...(options.now ? { now: options.now } : {}),
    });
    switch (started.kind) {
      case "started":
        retried.push({ rowNumber: row.rowNumber, attempt: started.attempt, externalId: started.externalId });
        break;
      case "adopted":
        adopted.push({ rowNumber: row.rowNumber, paymentId: started.paymentId, state: started.state });
        break;
      default:
        leftAlone.push({ rowNumber: row.rowNumber, reason: started.reason });
    }
  }
  leftAlone.sort((a, b) => a.rowNumber - b.rowNumber);
  // Every queued row of the batch is (re-)offered through its feed, restarted: job ids are the rows'
  // keys, so rows already in the queue are not added twice, and a retry interrupted before this point
  // is completed by the next. Not for a batch whose submission is not complete: one awaiting approval
  // must not be fed by a retry (its queued rows would be paid unapproved), and an interrupted one is
  // fed by its resume.
  const enqueued = batch.enqueueComplete ? await enqueueQueuedRows(store, options.enqueuer, batch) : 0;
  return { kind: "done", batchId, retried, adopted, leftAlone, enqueued };
}
