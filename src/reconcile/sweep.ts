/**
 * The sweep: webhooks get lost, so rows that have been non-terminal for longer than `staleAfterMs` are
 * marked for a look (due at once: the look reads their payments a page at a time, as for a delivery),
 * batches whose rows are all terminal are marked finished, and finished batches still in their watch
 * window are looked at for returns.
 *
 * It costs what needs looking at (docs/design.md §3.9): each batch keeps an index of its open rows (a
 * payment, not final yet) by last touch, so a sweep reads only the rows gone quiet, a page at a time,
 * and whether a batch is done comes from its state counters, never from reading its rows. A watched
 * batch costs pages, not rows: once per `watchEveryMs`, its payments the service now reports `failed`
 * or `canceled` (by metadata and status filters), whatever its size.
 *
 * Rows without a payment are not in the index: they belong to the payment queue (a job exists for
 * each, retried under the same Idempotency-Key), and a webhook for them is adopted through the metadata.
 */
import type { BatchStore } from "../batches/index.js";
import type { PaymentListParams } from "../payouts-api/index.js";
import type { LookIndex } from "./look-index.js";
import { PAGE_SIZE } from "./look-plan.js";
import type { ReconcileProcessor } from "./reconcile-processor.js";
import { DUE_AT_ONCE_MS } from "./reconcile-queue.js";

export interface SweepOptions {
  store: BatchStore;
  index: LookIndex;
  processor: Pick<ReconcileProcessor, "finishIfDone">;
  /** Reads and applies every page of payments matching the filters; returns the pages read. */
  readPages: (params: PaymentListParams) => Promise<number>;
  /** A non-terminal row untouched for this long is looked at again. */
  staleAfterMs: number;
  /** How often a watched finished batch is looked at for returns. */
  watchEveryMs: number;
  /** Stale rows read per page. Default 1000. */
  pageSize?: number;
  /** Clock of the watch index (ms). */
  now?: () => number;
}

export interface SweepReport {
  /** Unfinished batches looked at. */
  batches: number;
  /** Rows marked for a fresh look. */
  marked: number;
  /** Batches marked finished by this sweep. */
  finished: number;
  /** Rows read from the open index (what the sweep cost). */
  rowsRead: number;
  /** Finished batches looked at for returns. */
  watched: number;
  /** Pages those looks read. */
  watchPages: number;
}

export async function sweepOnce(options: SweepOptions): Promise<SweepReport> {
  const { store, staleAfterMs } = options;
  const pageSize = options.pageSize ?? 1000;
  // The index is scored in Redis's clock, so every worker's sweep agrees on what is stale.
  const now = await store.redisTimeMs();
  const report: SweepReport = { batches: 0, marked: 0, finished: 0, rowsRead: 0, watched: 0, watchPages: 0 };
  for (const batchId of await store.batchIdsAwaitingOutcomes()) {
    const progress = await store.progress(batchId);
    // Still being submitted: its rows are not all recorded or queued yet.
    if (!progress?.batch.rowsRecorded || !progress.batch.enqueueComplete) continue;
    const { batch } = progress;
    report.batches++;
    if (progress.done >= batch.rowCount) {
      if (await options.processor.finishIfDone(batchId)) report.finished++;
      continue;
    }
    // Each page is touched once marked, so it leaves the stale range and the loop moves on.
    for (;;) {
      const stale = await store.staleOpenRows(batchId, now - staleAfterMs, pageSize);
      report.rowsRead += stale.length;
      if (stale.length === 0) break;
      const open = stale.filter((r) => r.paymentId);
      // Marked by their row key (what a delivery's metadata names, unless the key was shortened).
      await options.index.mark(
        open.map((r) => ({ batchId, member: r.rowKey })),
        DUE_AT_ONCE_MS,
      );
      report.marked += open.length;
      // A row without a payment (cannot stay in the index, but be safe) is dropped from it.
      await store.forgetOpenRows(
        batchId,
        stale.filter((r) => !r.paymentId).map((r) => r.rowKey),
      );
      await store.touchOpenRows(
        batchId,
        open.map((r) => r.rowKey),
        now,
      );
      if (stale.length < pageSize) break;
    }
  }
  await watchFinishedBatches(options, report);
  return report;
}

/** Finished batches whose daily look for returns is due: their failed and canceled payments, paged. */
async function watchFinishedBatches(options: SweepOptions, report: SweepReport): Promise<void> {
  const { store } = options;
  const now = options.now?.() ?? Date.now();
  for (const { batchId, untilMs } of await store.watchedBatchesDue(now, 100)) {
    if (untilMs <= 0 || !(await store.getBatch(batchId))) {
      await store.unwatchBatch(batchId);
      continue;
    }
    for (const status of ["failed", "canceled"] as const) {
      report.watchPages += await options.readPages({
        metadata: { payouts_batch: batchId },
        status,
        limit: PAGE_SIZE,
      });
    }
    report.watched++;
    // The last look is at the window's end; then the batch is no longer watched.
    if (untilMs <= now) await store.unwatchBatch(batchId);
    else await store.rescheduleWatch(batchId, Math.min(now + options.watchEveryMs, untilMs));
  }
}
