/**
 * The sweep: webhooks get lost, so rows that have been non-terminal for longer than `staleAfterMs`
 * get their payment looked at again, and batches whose rows are all terminal are marked finished.
 *
 * Rows without a payment are left alone: they belong to the payment queue (a job exists for each,
 * retried under the same Idempotency-Key), and a webhook for them is adopted through the metadata.
 */
import { type BatchStore, isTerminalRowState } from "../batches/index.js";
import type { ReconcileProcessor } from "./reconcile-processor.js";

export interface SweepOptions {
  store: BatchStore;
  processor: Pick<ReconcileProcessor, "finishIfDone">;
  /** Queues a look at these payments (deduplicated per payment by the queue). */
  enqueue: (paymentIds: readonly string[]) => Promise<void>;
  /** A non-terminal row untouched for this long is looked at again. */
  staleAfterMs: number;
  now?: () => number;
}

export interface SweepReport {
  /** Unfinished batches looked at. */
  batches: number;
  /** Payments queued for a fresh look. */
  enqueued: number;
  /** Batches marked finished by this sweep. */
  finished: number;
}

export async function sweepOnce(options: SweepOptions): Promise<SweepReport> {
  const { store, staleAfterMs } = options;
  const now = (options.now ?? Date.now)();
  const report: SweepReport = { batches: 0, enqueued: 0, finished: 0 };
  for (const batchId of await store.unfinishedBatchIds()) {
    const batch = await store.getBatch(batchId);
    // Still being submitted: its rows are not all recorded or queued yet.
    if (!batch?.rowsRecorded || !batch.enqueueComplete) continue;
    report.batches++;
    const rows = await store.listRows(batchId);
    const stale: string[] = [];
    let open = 0;
    for (const row of rows) {
      if (isTerminalRowState(row.state)) continue;
      open++;
      const touched = Date.parse(row.updatedAt);
      if (row.paymentId && (Number.isNaN(touched) || now - touched >= staleAfterMs))
        stale.push(row.paymentId);
    }
    if (stale.length > 0) {
      await options.enqueue(stale);
      report.enqueued += stale.length;
    }
    if (open === 0 && (await options.processor.finishIfDone(batchId))) report.finished++;
  }
  return report;
}
