/**
 * Holding a batch's rows against the service's payments (pure: no I/O). The service is the ledger
 * (docs/design.md §3.3): every payment it holds for the batch (by the metadata naming its batch) is
 * matched to the row its metadata names, and every row that says it has a payment must find it there.
 * What may differ, one kind each:
 *
 *   missing-payment      the row records a payment the service does not hold for the batch
 *   unrecorded-payment   the service holds a payment of the row's attempt that the row does not record
 *   second-payment       a second live payment for one row: another of its attempt, or a live payment
 *                        of an earlier attempt beside the row's own (paid twice, or about to be)
 *   payment-without-row  a payment names this batch but no row of it (or an attempt the row never had)
 *   amount-differs       the payment's amount is not the row's
 *   currency-differs     the payment's currency is not the row's
 *   payee-differs        the payment pays another account than the row's
 *   state-differs        the payment's status and the row's state disagree
 */
import { normalisedPaymentTime, type RowRecord, type RowState } from "../batches/index.js";
import type { Payment } from "../payouts-api/index.js";

export const DIFFERENCE_KINDS = [
  "missing-payment",
  "unrecorded-payment",
  "second-payment",
  "payment-without-row",
  "amount-differs",
  "currency-differs",
  "payee-differs",
  "state-differs",
] as const;
export type DifferenceKind = (typeof DIFFERENCE_KINDS)[number];

export interface AuditDifference {
  kind: DifferenceKind;
  /** The row as the sheet numbers it, when a row is concerned. */
  rowNumber?: number | undefined;
  reference?: string | undefined;
  paymentId?: string | undefined;
  /** What the row says, and what the ledger says. */
  expected?: string | undefined;
  found?: string | undefined;
  message: string;
}

/** What the audit needs of a row. */
export type AuditRow = Pick<
  RowRecord,
  "rowKey" | "rowNumber" | "state" | "attempt" | "paymentId" | "paymentUpdatedAt" | "instruction"
>;

/** Not failed or canceled: a payment that paid, or still may. */
function isLive(payment: Pick<Payment, "status">): boolean {
  return payment.status !== "failed" && payment.status !== "canceled";
}

/** The row states that agree with a payment's status (a returned row: its payment failed or was canceled). */
const AGREEING: Readonly<Record<Payment["status"], readonly RowState[]>> = {
  scheduled: ["submitted"],
  "in-progress": ["in-progress"],
  completed: ["completed"],
  failed: ["failed", "returned"],
  canceled: ["canceled", "returned"],
};

function of(
  row: AuditRow,
  payment: Payment,
  kind: DifferenceKind,
  message: string,
  expected?: string,
  found?: string,
): AuditDifference {
  return {
    kind,
    rowNumber: row.rowNumber,
    reference: row.instruction.reference,
    paymentId: payment.id,
    ...(expected !== undefined ? { expected } : {}),
    ...(found !== undefined ? { found } : {}),
    message,
  };
}

/**
 * The row has not caught up with its own payment yet: the payment is of the row's attempt and is the
 * one the row records (or the row records none), and the service's snapshot disagrees with the row and
 * is newer than the one the row holds. Reconciliation makes such a row follow (a payment returned after
 * the row's last look, a create answer that never arrived): the audit hands these on before it compares.
 */
export function rowIsBehind(row: AuditRow, payment: Payment): boolean {
  if (paymentAttempt(payment) !== row.attempt) return false;
  if (row.paymentId === undefined) return true;
  if (row.paymentId !== payment.id || AGREEING[payment.status].includes(row.state)) return false;
  return (
    row.paymentUpdatedAt === undefined || normalisedPaymentTime(payment.updatedAt) > row.paymentUpdatedAt
  );
}

/** The attempt a payment's metadata names (0 when it names none). */
export function paymentAttempt(payment: Pick<Payment, "metadata">): number {
  const attempt = Number(payment.metadata?.payouts_attempt);
  return Number.isInteger(attempt) && attempt > 0 ? attempt : 0;
}

/** What a payment of the batch that names no row of it is reported as. */
export function paymentWithoutRow(payment: Payment): AuditDifference {
  return {
    kind: "payment-without-row",
    paymentId: payment.id,
    found: `${payment.status} ${payment.amount} ${payment.currency}`,
    message: `payment ${payment.id} names this batch but row "${payment.metadata?.payouts_row ?? ""}", which it does not hold`,
  };
}

/**
 * The differences between a row and one payment that names it. `alreadySeen`: a payment of the row's
 * attempt was met before on the ledger (for a row that records none, the second is a second payment).
 */
export function comparePayment(row: AuditRow, payment: Payment, alreadySeen: boolean): AuditDifference[] {
  const attempt = paymentAttempt(payment);
  if (attempt > row.attempt || attempt === 0) {
    return [
      of(
        row,
        payment,
        "payment-without-row",
        `payment ${payment.id} names attempt ${attempt || "?"} of row ${row.rowNumber}, which is on attempt ${row.attempt}`,
      ),
    ];
  }
  if (attempt < row.attempt) {
    // An earlier attempt's payment: history, unless it still paid (or may) beside the row's own.
    if (!isLive(payment)) return [];
    return [
      of(
        row,
        payment,
        "second-payment",
        `payment ${payment.id} of attempt ${attempt} is ${payment.status}, beside the row's attempt ${row.attempt}: the row may be paid twice`,
      ),
    ];
  }
  if (row.paymentId !== undefined && row.paymentId !== payment.id) {
    return [
      of(
        row,
        payment,
        "second-payment",
        `a second payment ${payment.id} (${payment.status}) for row ${row.rowNumber}, which records ${row.paymentId}`,
        row.paymentId,
        payment.id,
      ),
    ];
  }
  if (row.paymentId === undefined) {
    if (alreadySeen) {
      return [
        of(
          row,
          payment,
          "second-payment",
          `a second payment ${payment.id} (${payment.status}) for row ${row.rowNumber}`,
        ),
      ];
    }
    return [
      of(
        row,
        payment,
        "unrecorded-payment",
        `payment ${payment.id} (${payment.status}) of row ${row.rowNumber} is not recorded on the row (${row.state})`,
        row.state,
        payment.status,
      ),
    ];
  }
  const out: AuditDifference[] = [];
  const { instruction } = row;
  if (payment.amount !== instruction.amount) {
    out.push(
      of(
        row,
        payment,
        "amount-differs",
        `payment ${payment.id} is for ${payment.amount}, the row for ${instruction.amount} (minor units)`,
        String(instruction.amount),
        String(payment.amount),
      ),
    );
  }
  if (payment.currency.toUpperCase() !== instruction.currency.toUpperCase()) {
    out.push(
      of(
        row,
        payment,
        "currency-differs",
        `payment ${payment.id} is in ${payment.currency}, the row in ${instruction.currency}`,
        instruction.currency,
        payment.currency,
      ),
    );
  }
  if (payment.receivingAccountId !== instruction.receivingAccountId) {
    out.push(
      of(
        row,
        payment,
        "payee-differs",
        `payment ${payment.id} pays ${payment.receivingAccountId}, the row ${instruction.receivingAccountId}`,
        instruction.receivingAccountId,
        payment.receivingAccountId,
      ),
    );
  }
  if (!AGREEING[payment.status].includes(row.state)) {
    out.push(
      of(
        row,
        payment,
        "state-differs",
        `payment ${payment.id} is ${payment.status}, the row says ${row.state}` +
          (rowIsBehind(row, payment)
            ? ` (the service's snapshot of ${payment.updatedAt} is newer: the row has not followed it yet)`
            : ""),
        row.state,
        payment.status,
      ),
    );
  }
  return out;
}

/** A row that records a payment the service did not show for the batch. */
export function missingPayment(row: AuditRow): AuditDifference {
  return {
    kind: "missing-payment",
    rowNumber: row.rowNumber,
    reference: row.instruction.reference,
    paymentId: row.paymentId,
    expected: row.paymentId,
    message: `row ${row.rowNumber} records payment ${row.paymentId} (${row.state}), which the service does not hold for this batch`,
  };
}

/** The one line people read: `ledger: 20,000 rows match, 0 differences`. */
export function ledgerSummary(
  rows: number,
  matched: number,
  byKind: Readonly<Record<string, number>>,
  /** Rows only behind their payment (rowIsBehind): said apart, as they need no one to chase them. */
  behind = 0,
): string {
  const fmt = (n: number) => n.toLocaleString("en-US");
  const differences = Object.values(byKind).reduce((a, b) => a + b, 0);
  if (differences === 0) return `ledger: ${fmt(rows)} rows match, 0 differences`;
  const kinds = Object.entries(byKind)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${fmt(n)} ${k}`)
    .join(", ");
  const waiting = behind > 0 ? `; ${fmt(behind)} only behind their payment` : "";
  return `ledger: ${fmt(matched)} of ${fmt(rows)} rows match, ${fmt(differences)} difference${differences === 1 ? "" : "s"} (${kinds}${waiting})`;
}
