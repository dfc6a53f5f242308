import { describe, expect, it } from "vitest";
import { answerMismatches, type SentPayment } from "../../../src/batches/index.js";
import { paymentKeyOf, SheetDuplicates } from "../../../src/duplicates/index.js";
import type { PayoutInstruction } from "../../../src/intake/payout-instruction.js";
import type { Payment } from "../../../src/payouts-api/wire-types.js";
import { contentKeyFor, externalIdFor } from "../../../src/row-identity/index.js";

function row(rowNumber: number, overrides: Partial<PayoutInstruction> = {}): PayoutInstruction {
  return {
    rowNumber,
    rowKey: `#${rowNumber}`,
    reference: undefined,
    originatingAccountId: "acct_ops",
    receivingAccountId: "acct_vendor",
    amount: 12_345,
    currency: "USD",
    deliveryPreference: "standard-ach",
    deliveryResolvedFromBlank: true,
    payerMemo: "rent",
    recipientNote: undefined,
    purpose: undefined,
    attachment: undefined,
    metadata: { b: "2", a: "1" },
    ...overrides,
  };
}

describe("the content key of a row without a reference", () => {
  it("comes from what the row pays, not where it sits or how its file was written", () => {
    const key = contentKeyFor(row(2), 1);
    expect(key).toMatch(/^c[0-9a-f]{20}-1$/);
    expect(contentKeyFor(row(900, { payerMemo: "  rent ", metadata: { a: "1", b: "2" } }), 1)).toBe(key);
    expect(contentKeyFor(row(2, { attachment: { kind: "file", path: "/a/inv.pdf" } }), 1)).toBe(
      contentKeyFor(row(2, { attachment: { kind: "file", path: "/elsewhere/inv.pdf" } }), 1),
    );
    for (const other of [
      { amount: 12_346 },
      { receivingAccountId: "acct_other" },
      { currency: "EUR" },
      { payerMemo: "fees" },
    ]) {
      expect(contentKeyFor(row(2, other), 1)).not.toBe(key);
    }
    expect(contentKeyFor(row(2), 2)).toBe(key.replace(/-1$/, "-2"));
  });

  it("is the base of the row's externalId on every attempt", () => {
    const identity = {
      batchId: "b1",
      rowNumber: 2,
      reference: undefined,
      fileKey: "fabc",
      contentKey: "c01-1",
    };
    expect(externalIdFor({ ...identity, attempt: 1 })).toBe("c01-1");
    expect(externalIdFor({ ...identity, attempt: 2 })).toBe("c01-1-r2");
    expect(externalIdFor({ ...identity, contentKey: undefined, attempt: 1 })).toBe("fabc-row2");
  });
});

describe("SheetDuplicates", () => {
  it("names the first row that pays the same and counts identical rows for their content keys", () => {
    const sheet = new SheetDuplicates();
    const first = sheet.check(row(2, { reference: "INV-1" }));
    expect(first).toEqual({
      paymentKey: paymentKeyOf(row(2, { reference: "INV-1" })),
      contentKey: undefined,
      earlier: undefined,
    });
    const plain = sheet.check(row(3));
    expect(plain.earlier).toEqual({ rowNumber: 2, reference: "INV-1" });
    const again = sheet.check(row(4));
    expect(again.earlier).toEqual({ rowNumber: 2, reference: "INV-1" });
    expect(plain.contentKey).toMatch(/-1$/);
    expect(again.contentKey).toBe(plain.contentKey!.replace(/-1$/, "-2"));
    expect(sheet.check(row(5, { amount: 1 })).earlier).toBeUndefined();
    expect(paymentKeyOf(row(2))).toBe(paymentKeyOf(row(9, { payerMemo: "other", currency: "usd" })));
  });
});

describe("answerMismatches", () => {
  const sent: SentPayment = {
    externalId: "INV-1",
    batchId: "b1",
    rowKey: "INV-1",
    attempt: 1,
    amount: 500,
    currency: "USD",
    originatingAccountId: "acct_ops",
    receivingAccountId: "acct_vendor",
  };
  const payment = {
    id: "pay_1",
    externalId: "INV-1",
    metadata: { payouts_batch: "b1", payouts_row: "INV-1", payouts_attempt: "1" },
    amount: 500,
    currency: "USD",
    originatingAccountId: "acct_ops",
    receivingAccountId: "acct_vendor",
  } as unknown as Payment;

  it("is empty for the payment that was sent, and names every field of another", () => {
    expect(answerMismatches(payment, sent)).toEqual([]);
    const foreign = {
      ...payment,
      externalId: "INV-2",
      metadata: { payouts_batch: "b1", payouts_row: "INV-2", payouts_attempt: "1" },
      amount: 700,
    } as Payment;
    expect(answerMismatches(foreign, sent)).toEqual([
      'externalId "INV-2" (sent "INV-1")',
      'metadata.payouts_row "INV-2" (sent "INV-1")',
      "amount 700 (sent 500)",
    ]);
  });
});
