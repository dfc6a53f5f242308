import { describe, expect, it } from "vitest";
import {
  type AuditRow,
  comparePayment,
  ledgerSummary,
  missingPayment,
  paymentWithoutRow,
  rowIsBehind,
} from "../../../src/ledger-audit/index.js";
import type { Payment } from "../../../src/payouts-api/index.js";

const row: AuditRow = {
  rowKey: "INV-1",
  rowNumber: 2,
  state: "completed",
  attempt: 2,
  paymentId: "pay_2",
  instruction: {
    rowNumber: 2,
    rowKey: "INV-1",
    reference: "INV-1",
    originatingAccountId: "acct_ops_checking",
    receivingAccountId: "acct_vendor_ach",
    amount: 12_500,
    currency: "USD",
    deliveryPreference: "standard-ach",
    deliveryResolvedFromBlank: false,
    metadata: {},
  } as AuditRow["instruction"],
};

function payment(overrides: Partial<Payment> & { attempt?: number } = {}): Payment {
  const { attempt = 2, ...rest } = overrides;
  return {
    id: "pay_2",
    status: "completed",
    deliveryPreference: "standard-ach",
    amount: 12_500,
    currency: "USD",
    originatingAccountId: "acct_ops_checking",
    receivingAccountId: "acct_vendor_ach",
    fees: [],
    metadata: { payouts_batch: "b1", payouts_row: "INV-1", payouts_attempt: String(attempt) },
    createdAt: "2026-03-01T10:00:00.000Z",
    updatedAt: "2026-03-01T10:00:05.000Z",
    ...rest,
  } as Payment;
}

const kinds = (list: { kind: string }[]) => list.map((d) => d.kind);

describe("holding a row against a payment", () => {
  it("finds nothing when they agree, a returned row included", () => {
    expect(comparePayment(row, payment(), false)).toEqual([]);
    expect(comparePayment({ ...row, state: "returned" }, payment({ status: "failed" }), false)).toEqual([]);
  });

  it("names each field that differs: amount, currency, payee, state", () => {
    const differences = comparePayment(
      { ...row, state: "failed" },
      payment({ amount: 12_600, currency: "EUR", receivingAccountId: "acct_other" }),
      false,
    );
    expect(kinds(differences)).toEqual([
      "amount-differs",
      "currency-differs",
      "payee-differs",
      "state-differs",
    ]);
    expect(differences[0]).toMatchObject({
      rowNumber: 2,
      reference: "INV-1",
      expected: "12500",
      found: "12600",
    });
  });

  it("a second payment of the row's attempt, and a live payment of an earlier attempt, are second payments", () => {
    expect(kinds(comparePayment(row, payment({ id: "pay_x" }), true))).toEqual(["second-payment"]);
    expect(kinds(comparePayment(row, payment({ id: "pay_1", attempt: 1 }), false))).toEqual([
      "second-payment",
    ]);
    // An earlier attempt that failed is history.
    expect(comparePayment(row, payment({ id: "pay_1", attempt: 1, status: "failed" }), false)).toEqual([]);
  });

  it("a payment the row does not record is unrecorded the first time, a second payment after", () => {
    const unpaid: AuditRow = { ...row, state: "error", paymentId: undefined };
    expect(kinds(comparePayment(unpaid, payment(), false))).toEqual(["unrecorded-payment"]);
    expect(kinds(comparePayment(unpaid, payment({ id: "pay_3" }), true))).toEqual(["second-payment"]);
  });

  it("a payment naming an attempt the row never had, or no row, has no row", () => {
    expect(kinds(comparePayment(row, payment({ attempt: 3 }), false))).toEqual(["payment-without-row"]);
    expect(paymentWithoutRow(payment()).kind).toBe("payment-without-row");
    expect(missingPayment(row)).toMatchObject({ kind: "missing-payment", rowNumber: 2, paymentId: "pay_2" });
  });

  it("says it in one line", () => {
    expect(ledgerSummary(20_000, 20_000, {})).toBe("ledger: 20,000 rows match, 0 differences");
    expect(ledgerSummary(5, 3, { "state-differs": 2 }, 2)).toBe(
      "ledger: 3 of 5 rows match, 2 differences (2 state-differs; 2 only behind their payment)",
    );
    expect(ledgerSummary(10, 9, { "amount-differs": 1, "second-payment": 0 })).toBe(
      "ledger: 9 of 10 rows match, 1 difference (1 amount-differs)",
    );
  });
});

describe("a row behind its payment (rowIsBehind)", () => {
  const held = { ...row, paymentUpdatedAt: "2026-03-01T10:00:05.000Z" };

  it("is a disagreeing snapshot of the row's own payment, newer than the row's", () => {
    const returned = payment({ status: "failed", updatedAt: "2026-03-03T09:00:00Z" });
    expect(rowIsBehind(held, returned)).toBe(true);
    expect(comparePayment(held, returned, false)[0]?.message).toContain("has not followed it yet");
  });

  it("is not a snapshot the row already holds, or an older one, or one that agrees", () => {
    expect(rowIsBehind(held, payment({ status: "failed", updatedAt: "2026-03-01T10:00:05Z" }))).toBe(false);
    expect(rowIsBehind(held, payment({ status: "failed", updatedAt: "2026-03-01T09:00:00Z" }))).toBe(false);
    expect(rowIsBehind(held, payment({ updatedAt: "2026-03-09T00:00:00Z" }))).toBe(false);
    const stale = comparePayment(
      held,
      payment({ status: "failed", updatedAt: "2026-03-01T09:00:00Z" }),
      false,
    );
    expect(stale[0]?.message).not.toContain("has not followed");
  });

  it("is not another attempt's payment or a payment the row does not record; a row that records none adopts its attempt's", () => {
    const later = "2026-03-04T00:00:00Z";
    expect(rowIsBehind(held, payment({ status: "failed", updatedAt: later, attempt: 1 }))).toBe(false);
    expect(rowIsBehind(held, payment({ id: "pay_9", status: "failed", updatedAt: later }))).toBe(false);
    expect(rowIsBehind({ ...held, paymentId: undefined, state: "queued" }, payment())).toBe(true);
  });
});
