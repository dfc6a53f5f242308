/**
 * Rebuilding a batch after Redis lost it (docs/design.md §3.3: the service is the ledger). From the
 * archived instructions the batch and its rows are recorded again (rows that still exist are left as
 * they are); then every payment whose metadata names the batch is adopted onto its row, rows still
 * without one are looked up by their `externalId`, and whatever has no payment is enqueued again with
 * the same keys. Nothing is paid twice: a row that did pay is adopted, and a row whose earlier request
 * did land but was not found would be stopped by its externalId (409) and adopted then.
 */
import pLimit from "p-limit";
import type { PayoutsClient } from "../payouts-api/index.js";
import type { Payment } from "../payouts-api/wire-types.js";
import { externalIdFor, metadataNamesRow, rowMetadataValue } from "../row-identity/index.js";
import { adoptPayment, REFERENCE_REUSED, referenceReusedMessage } from "./adopt-payment.js";
import type { BatchStore } from "./batch-store.js";
import type { ArchivedBatch } from "./instruction-archive.js";
import { enqueueQueuedRows, type RowEnqueuer, type SubmissionGate } from "./submit-batch.js";

export interface RecoverBatchOptions {
  store: BatchStore;
  enqueuer: RowEnqueuer;
  client: PayoutsClient;
  /** The batch's archived instructions (see readInstructionArchive). */
  archive: ArchivedBatch;
  /** Where the archive was read from (recorded on the batch for later resumes). */
  archivePath?: string;
  /** Parallel `externalId` look-ups. Default 8. */
  lookupConcurrency?: number;
  /**
   * The approval gate. A batch rebuilt from its archive (its approval was lost with Redis) is held
   * again when the rules say so; rows of a held batch are not queued (docs/design.md §3.10).
   */
  gate?: SubmissionGate;
}

export interface RecoverBatchResult {
  batchId: string;
  rows: number;
  /** Rows whose payment was found and recorded. */
  adopted: number;
  /** Rows whose reference had paid something else (rejected as REFERENCE_REUSED). */
  rejected: number;
  /** Rows handed to the queue again. */
  enqueued: number;
}

export async function recoverBatch(options: RecoverBatchOptions): Promise<RecoverBatchResult> {
  const { store, client, archive } = options;
  const meta = archive.batch;
  const batchId = meta.id;

  if (!(await store.getBatch(batchId))) {
    const totals: Record<string, number> = {};
    for (const i of archive.instructions) totals[i.currency] = (totals[i.currency] ?? 0) + i.amount;
    // Before the batch record, as in submitBatch: a resume can never find the batch without its hold.
    await options.gate?.hold({
      batchId,
      submittedBy: meta.submittedBy ?? "",
      requestedAt: new Date(),
      totals,
    });
    await store.createBatch({
      ...meta,
      rowCount: archive.instructions.length,
      invalidCount: archive.invalidRows.length,
      rowsRecorded: false,
      enqueueComplete: false,
      archivePath: options.archivePath,
      sheet: meta.sheet ?? { columns: [], keys: [], format: "csv" },
    });
    await store.claimFile(meta.fileSha256, batchId, false);
  }
  await store.recordInvalidRows(batchId, archive.invalidRows);
  await store.recordRows(batchId, archive.instructions);
  await store.markRowsRecorded(batchId);

  // 1. Everything the ledger holds for this batch, by row.
  const byRow = new Map<string, Payment[]>();
  for await (const payment of client.payments.listAll({ metadata: { payouts_batch: batchId } })) {
    const row = payment.metadata?.payouts_row;
    if (row === undefined) continue;
    const list = byRow.get(row) ?? [];
    list.push(payment);
    byRow.set(row, list);
  }

  const rows = await store.listRows(batchId);
  let adopted = 0;
  let rejected = 0;
  const unresolved: typeof rows = [];
  for (const row of rows) {
    if (row.state !== "queued" || row.paymentId) continue;
    const externalId = externalIdFor({
      batchId,
      rowNumber: row.rowNumber,
      reference: row.instruction.reference,
      attempt: row.attempt,
      fileKey: meta.fileKey,
      contentKey: row.instruction.contentKey,
    });
    const payment = paymentOfRow(byRow.get(rowMetadataValue(row.rowKey)) ?? [], externalId);
    if (payment) {
      if ((await adoptPayment(store, row, payment, "recovered from the ledger")).outcome === "ok") adopted++;
    } else {
      unresolved.push(row);
    }
  }

  // 2. Rows the metadata search did not find: ask by externalId (the identity that outlives everything).
  const limit = pLimit(options.lookupConcurrency ?? 8);
  await Promise.all(
    unresolved.map((row) =>
      limit(async () => {
        const externalId = externalIdFor({
          batchId,
          rowNumber: row.rowNumber,
          reference: row.instruction.reference,
          attempt: row.attempt,
          fileKey: meta.fileKey,
          contentKey: row.instruction.contentKey,
        });
        const page = await client.payments.list({ externalId, limit: 1 });
        const payment = page.data[0];
        if (!payment) return;
        if (metadataNamesRow(payment.metadata, batchId, row.rowKey)) {
          if ((await adoptPayment(store, row, payment, "recovered by externalId")).outcome === "ok")
            adopted++;
          return;
        }
        const result = await store.changeRow(batchId, row.rowKey, {
          expectedAttempt: row.attempt,
          to: "rejected",
          fields: {
            errorCode: REFERENCE_REUSED,
            errorMessage: referenceReusedMessage(externalId, payment),
          },
          note: "found at recovery: reference already used",
        });
        if (result.outcome === "ok") rejected++;
      }),
    ),
  );

  // 3. The rest goes back to the queue under the same keys.
  const batch = await store.getBatch(batchId);
  if (options.gate && !(await options.gate.mayEnqueue(batchId))) {
    return { batchId, rows: rows.length, adopted, rejected, enqueued: 0 };
  }
  const enqueued = batch ? await enqueueQueuedRows(store, options.enqueuer, batch) : 0;
  await store.markEnqueueComplete(batchId);
  return { batchId, rows: rows.length, adopted, rejected, enqueued };
}

/**
 * Which of the ledger's payments for one row the rebuilt row takes. The archive knows only attempt 1,
 * but an operator retry may have paid a later attempt (`<reference>-r2`): a payment that is not
 * failed or canceled wins whatever its attempt (the latest first), so recovery never queues a row
 * that is already paid; else this attempt's own payment, else the latest.
 */
function paymentOfRow(candidates: readonly Payment[], externalId: string): Payment | undefined {
  const attemptOf = (p: Payment) => Number(p.metadata?.payouts_attempt ?? 1);
  const latestFirst = [...candidates].sort((a, b) => attemptOf(b) - attemptOf(a));
  return (
    latestFirst.find((p) => p.status !== "failed" && p.status !== "canceled") ??
    candidates.find((p) => p.externalId === externalId) ??
    latestFirst[0]
  );
}
