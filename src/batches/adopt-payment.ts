/**
 * Recording a payment on its row: after creation, after a lost response (409 or replay), and when a
 * batch is rebuilt from the ledger. One function, so every path records the same fields. Also the
 * small derivations of a row that readers (result files, status) need.
 */

import { PayoutsError } from "../errors/index.js";
import type { PayoutsClient } from "../payouts-api/index.js";
import type { Payment } from "../payouts-api/wire-types.js";
import {
  externalIdFor,
  idempotencyKeyFor,
  metadataNamesRow,
  rowMetadataValue,
} from "../row-identity/index.js";
import type { BatchStore, RowChangeResult } from "./batch-store.js";
import { normalisedPaymentTime } from "./row-fields.js";
import { rowStateForPayment } from "./row-state.js";
import type { BatchRecord, RowRecord } from "./types.js";

export async function adoptPayment(
  store: BatchStore,
  row: { batchId: string; rowKey: string; attempt: number },
  payment: Payment,
  note: string,
): Promise<RowChangeResult> {
  return store.changeRow(row.batchId, row.rowKey, {
    expectedAttempt: row.attempt,
    to: rowStateForPayment(payment.status),
    fields: {
      paymentId: payment.id,
      paymentStatus: payment.status,
      debitUsd: payment.fx?.debitAmount ?? null,
      fxRate: payment.fx?.usdToForeignRate ?? null,
      // Where the payment sits in the service's lists: reconciliation reads it by pages of that time.
      // No `paymentUpdatedAt`: a delivery whose change bears the creation's millisecond would then
      // look like news the row already holds (look-plan.ts) and go unread.
      paymentCreatedAt: normalisedPaymentTime(payment.createdAt),
      errorCode: null,
      errorMessage: null,
    },
    note: `${note}: ${payment.id}`,
  });
}

/**
 * The code of a row rejected because its reference already names someone else's payment. Such a row
 * is never retried: a new attempt would pay that invoice again under `<reference>-r<n>`.
 */
export const REFERENCE_REUSED = "REFERENCE_REUSED";

/**
 * The code of an answer (a create's 201, a replayed response, a look-up by `externalId`) that names a
 * payment other than the one sent for the row: it is never recorded on the row.
 */
export const ANSWER_MISMATCH = "ANSWER_MISMATCH";

/** What was sent for a row's attempt: what an answer must name to be the row's own payment. */
export interface SentPayment {
  externalId: string;
  batchId: string;
  rowKey: string;
  attempt: number;
  amount: number;
  currency: string;
  originatingAccountId: string;
  receivingAccountId: string;
}

/**
 * The fields in which a payment differs from what was sent for the row (empty: it is the row's own).
 * A service that answers with someone else's payment (a proxy's cache, a replay under a colliding
 * key) must not make two rows share one payment while the real one is recorded nowhere.
 */
export function answerMismatches(payment: Payment, sent: SentPayment): string[] {
  const metadata = payment.metadata ?? {};
  const checks: [string, unknown, unknown][] = [
    ["externalId", payment.externalId, sent.externalId],
    ["metadata.payouts_batch", metadata.payouts_batch, sent.batchId],
    ["metadata.payouts_row", metadata.payouts_row, rowMetadataValue(sent.rowKey)],
    ["metadata.payouts_attempt", metadata.payouts_attempt, String(sent.attempt)],
    ["amount", payment.amount, sent.amount],
    ["currency", payment.currency?.toUpperCase(), sent.currency.toUpperCase()],
    ["originatingAccountId", payment.originatingAccountId, sent.originatingAccountId],
    ["receivingAccountId", payment.receivingAccountId, sent.receivingAccountId],
  ];
  return checks
    .filter(([, got, want]) => got !== want)
    .map(([field, got, want]) => `${field} ${JSON.stringify(got ?? null)} (sent ${JSON.stringify(want)})`);
}

/** An answer that is not the row's payment: the outcome of the send is unknown until the ledger says. */
export class AnswerMismatchError extends PayoutsError {
  override readonly name = "AnswerMismatchError";
  constructor(
    readonly paymentId: string,
    readonly mismatches: readonly string[],
    readonly answer: string,
  ) {
    super(
      ANSWER_MISMATCH,
      `${answer} named payment ${paymentId}, which is not this row's: ${mismatches.join(", ")}`,
      {
        kind: "unavailable",
      },
    );
  }
}

/** The message of a row rejected because its reference already paid something else. */
export function referenceReusedMessage(externalId: string, payment: Payment): string {
  const batch = payment.metadata?.payouts_batch;
  const origin = batch ? `batch ${batch}, row ${payment.metadata?.payouts_row ?? "?"}` : "outside this tool";
  return (
    `reference ${externalId} was already used by payment ${payment.id} (${origin}); ` +
    "a reused reference never marks a new row as paid: give this row a new reference"
  );
}

/** The Idempotency-Key a row's payment is (or was last) sent under: for the result file's column. */
export function rowIdempotencyKey(
  batch: Pick<BatchRecord, "id" | "entityId">,
  row: Pick<RowRecord, "rowKey" | "attempt" | "requoteGeneration">,
): string {
  return idempotencyKeyFor(
    { entityId: batch.entityId, batchId: batch.id, rowKey: row.rowKey, attempt: row.attempt },
    row.requoteGeneration,
  );
}

/** Not failed or canceled: a payment that paid, or still may. */
export function isLivePayment(payment: Pick<Payment, "status">): boolean {
  return payment.status !== "failed" && payment.status !== "canceled";
}

/**
 * A live payment of the row under the `externalId` of any of its attempts 1..`throughAttempt`, if the
 * ledger shows one (and its metadata names this batch and row: a reused reference is not ours).
 */
export async function livePaymentOfAttempts(
  ledger: { payments: Pick<PayoutsClient["payments"], "list"> },
  batch: Pick<BatchRecord, "id" | "fileKey">,
  row: Pick<RowRecord, "rowKey" | "rowNumber" | "instruction">,
  throughAttempt: number,
): Promise<Payment | undefined> {
  for (let attempt = 1; attempt <= throughAttempt; attempt++) {
    const externalId = externalIdFor({
      batchId: batch.id,
      rowNumber: row.rowNumber,
      reference: row.instruction.reference,
      attempt,
      fileKey: batch.fileKey,
      contentKey: row.instruction.contentKey,
    });
    const payment = (await ledger.payments.list({ externalId, limit: 1 })).data[0];
    if (
      payment?.externalId === externalId &&
      metadataNamesRow(payment.metadata, batch.id, row.rowKey) &&
      isLivePayment(payment)
    ) {
      return payment;
    }
  }
  return undefined;
}
