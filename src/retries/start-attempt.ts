/**
 * THE way a row gets a new attempt: `payouts retry`, a corrected result file
 * dropped back in, and any other front end call {@link startAttempt}, so each of them resolves a row
 * whose outcome is unknown before it pays it again.
 *
 * `error` means "we do not know whether it paid": a request of the last attempt may have created the
 * payment (its response lost), or may still be on its way (a stalled run, a slow network). So, for a
 * row in `error`:
 *
 *   1. while its last request may still reach the service (the `inDoubtUntil` the send fence
 *      recorded: the send time plus the sender's request time-outs and a margin), nothing is started;
 *      the operator is told until when;
 *   2. the ledger is asked about every earlier attempt, by `externalId` and by metadata; a live
 *      payment of the row (not failed or canceled) is adopted instead of paying again;
 *   3. only then the new attempt starts, and the Lua script checks the time again atomically (a run
 *      that sent meanwhile moved `inDoubtUntil`).
 *
 * Rows that are `failed`, `canceled` or `rejected` have a known outcome and start at once. A started
 * correction is appended to the batch's instruction archive, so `payouts recover` rebuilds the
 * corrected row.
 */
import {
  adoptPayment,
  appendCorrection,
  type BatchRecord,
  type BatchStore,
  isLivePayment,
  livePaymentOfAttempts,
  type RowRecord,
  type RowState,
  rowStateForPayment,
  type SourceValues,
} from "../batches/index.js";
import type { PayoutInstruction } from "../intake/index.js";
import type { Payment, PayoutsClient } from "../payouts-api/index.js";
import { externalIdFor, metadataNamesRow, rowMetadataValue } from "../row-identity/index.js";

/** What the retry needs of the Partner Payouts Service: payment look-ups (the ledger). */
export interface LedgerApi {
  payments: Pick<PayoutsClient["payments"], "list" | "listAll">;
}

export type AttemptStart =
  | { kind: "started"; attempt: number; externalId: string }
  /** An earlier attempt did pay after all: its payment is now the row's. */
  | { kind: "adopted"; paymentId: string; state: RowState }
  /** The outcome of the last attempt is not known yet: nothing was started (the reason says until when). */
  | { kind: "not-yet"; reason: string }
  /** The row changed since it was read (another retry, reconciliation): nothing was started. */
  | { kind: "changed"; reason: string };

export interface StartAttemptInput {
  store: BatchStore;
  /** The ledger; without it a row in `error` cannot be resolved and is not retried. */
  ledger: LedgerApi | undefined;
  batch: Pick<BatchRecord, "id" | "fileKey" | "archivePath">;
  row: RowRecord;
  /** Recorded in the row's history. */
  note: string;
  /** An operator's corrected inputs (re-validated by the caller). */
  correction?: { instruction: PayoutInstruction; source?: SourceValues | undefined } | undefined;
  now?: () => number;
}

export async function startAttempt(input: StartAttemptInput): Promise<AttemptStart> {
  const { store, batch, row } = input;
  const now = input.now ?? Date.now;
  if (row.state === "error") {
    const wait = inDoubt(row, now());
    if (wait) return { kind: "not-yet", reason: wait };
    if (!input.ledger) {
      return {
        kind: "not-yet",
        reason:
          "its last attempt ended without a known outcome (error) and the Payouts Service cannot be asked " +
          "whether it paid: set PAYOUTS_API_URL and PAYOUTS_API_KEY",
      };
    }
    const paid = await livePaymentOfRow(input.ledger, batch, row);
    if (paid) {
      const adopted = await adoptPayment(store, row, paid, "retry found the earlier attempt's payment");
      if (adopted.outcome !== "ok") return changed(adopted.previous, adopted.attempt);
      await store.reopenBatch(batch.id);
      return { kind: "adopted", paymentId: paid.id, state: rowStateForPayment(paid.status) };
    }
  }
  // A row's identity is fixed: a corrected row keeps the content key its first attempt was sent under.
  const correction = input.correction && {
    ...input.correction,
    instruction: { ...input.correction.instruction, contentKey: row.instruction.contentKey },
  };
  const result = correction
    ? await store.startNewAttemptWithCorrection(
        batch.id,
        row.rowKey,
        row.attempt,
        correction,
        input.note,
        now(),
      )
    : await store.startNewAttempt(batch.id, row.rowKey, row.attempt, input.note, now());
  if (result.outcome === "in-doubt") {
    const fresh = await store.getRow(batch.id, row.rowKey);
    return { kind: "not-yet", reason: (fresh && inDoubt(fresh, now())) ?? "a request of it was just sent" };
  }
  if (result.outcome !== "ok") return changed(result.previous, result.attempt);
  // A finished batch runs again: the sweep must look at this row, and the batch finish anew.
  await store.reopenBatch(batch.id);
  const attempt = result.attempt ?? row.attempt + 1;
  const instruction = correction?.instruction ?? row.instruction;
  if (correction && batch.archivePath) {
    await appendCorrection(batch.archivePath, { ...correction, attempt });
  }
  return {
    kind: "started",
    attempt,
    externalId: externalIdFor({
      batchId: batch.id,
      rowNumber: row.rowNumber,
      reference: instruction.reference,
      attempt,
      fileKey: batch.fileKey,
      contentKey: instruction.contentKey,
    }),
  };
}

function changed(previous: RowState | undefined, attempt: number | undefined): AttemptStart {
  return {
    kind: "changed",
    reason: `it changed meanwhile (now ${previous ?? "unknown"}, attempt ${attempt ?? "?"}); look again`,
  };
}

/** Why the row's last request may still pay, or undefined once it cannot any more. */
function inDoubt(row: Pick<RowRecord, "inDoubtUntil" | "lastSentAt">, nowMs: number): string | undefined {
  if (row.inDoubtUntil === undefined || row.inDoubtUntil <= nowMs) return undefined;
  const sent = row.lastSentAt === undefined ? "recently" : `at ${new Date(row.lastSentAt).toISOString()}`;
  return (
    `not retried yet: its last request (sent ${sent}) may still reach the Payouts Service and pay it; ` +
    `retry after ${new Date(row.inDoubtUntil).toISOString()} (the ledger is asked first)`
  );
}

/**
 * A live payment (not failed or canceled) of any attempt of the row, by each attempt's `externalId`
 * and by the row's metadata: whichever the ledger shows first.
 */
async function livePaymentOfRow(
  ledger: LedgerApi,
  batch: Pick<BatchRecord, "id" | "fileKey">,
  row: RowRecord,
): Promise<Payment | undefined> {
  const byExternalId = await livePaymentOfAttempts(ledger, batch, row, row.attempt);
  if (byExternalId) return byExternalId;
  const query = { metadata: { payouts_batch: batch.id, payouts_row: rowMetadataValue(row.rowKey) } };
  for await (const payment of ledger.payments.listAll(query)) {
    if (metadataNamesRow(payment.metadata, batch.id, row.rowKey) && isLivePayment(payment)) return payment;
  }
  return undefined;
}
