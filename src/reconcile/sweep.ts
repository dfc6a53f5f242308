/**
 * The sweep: webhooks get lost, so rows that have been non-terminal for longer than `staleAfterMs`
 * get their payment looked at again, and batches whose rows are all terminal are marked finished.
 *
 * It costs what needs looking at (docs/design.md §3.9): each batch keeps an index of its open rows (a
 * payment, not final yet) by last touch, so a sweep reads only the rows gone quiet, a page at a time,
 * and whether a batch is done comes from its state counters, never from reading its rows.
 *
 * Rows without a payment are not in the index: they belong to the payment queue (a job exists for
 * each, retried under the same Idempotency-Key), and a webhook for them is adopted through the metadata.
 */
import type { BatchStore } from "../batches/index.js";
import type { ReconcileProcessor } from "./reconcile-processor.js";

export interface SweepOptions {
  store: BatchStore;
  processor: Pick<ReconcileProcessor, "finishIfDone">;
  /** Queues a look at these payments (deduplicated per payment by the queue). */
  enqueue: (paymentIds: readonly string[]) => Promise<void>;
  /** A non-terminal row untouched for this long is looked at again. */
  staleAfterMs: number;
  /** Stale rows read per page. Default 1000. */
  pageSize?: number;
}

export interface SweepReport {
  /** Unfinished batches looked at. */
  batches: number;
  /** Payments queued for a fresh look. */
  enqueued: number;
  /** Batches marked finished by this sweep. */
  finished: number;
  /** Rows read from the open index (what the sweep cost). */
  rowsRead: number;
}

export async function sweepOnce(options: SweepOptions): Promise<SweepReport> {
  const { store, staleAfterMs } = options;
  const pageSize = options.pageSize ?? 1000;
  // The index is scored in Redis's clock, so every worker's sweep agrees on what is stale.
  const now = await store.redisTimeMs();
  const report: SweepReport = { batches: 0, enqueued: 0, finished: 0, rowsRead: 0 };
  for (const batchId of await store.batchIdsAwaitingOutcomes()) {
    const progress = await store.progress(batchId);
    // Still being submitted: its rows are not all recorded or queued yet.
    if (!progress?.batch.rowsRecorded || !progress.batch.enqueueComplete) continue;
    const { batch } = progress;
    report.batches++;
    // A batch recorded before the open index existed gets its open rows indexed, once.
    if (await store.needsOpenIndexBackfill(batchId)) await store.backfillOpenIndex(batchId);
    if (progress.done >= batch.rowCount) {
      if (await options.processor.finishIfDone(batchId)) report.finished++;
      continue;
    }
    // Each page is touched once queued, so it leaves the stale range and the loop moves on.
    for (;;) {
      const stale = await store.staleOpenRows(batchId, now - staleAfterMs, pageSize);
      report.rowsRead += stale.length;
      if (stale.length === 0) break;
      const paymentIds = stale.flatMap((r) => (r.paymentId ? [r.paymentId] : []));
      if (paymentIds.length > 0) await options.enqueue(paymentIds);
      report.enqueued += paymentIds.length;
      // A row without a payment (cannot stay in the index, but be safe) is dropped from it.
      await store.forgetOpenRows(
        batchId,
        stale.filter((r) => !r.paymentId).map((r) => r.rowKey),
      );
      await store.touchOpenRows(
        batchId,
        stale.filter((r) => r.paymentId).map((r) => r.rowKey),
        now,
      );
      if (stale.length < pageSize) break;
    }
  }
  return report;
}
