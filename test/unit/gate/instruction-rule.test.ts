/** The gate's rule (docs/design.md §3.14): what is a new instruction, and when it needs approval. */
import { describe, expect, it } from "vitest";
import { parseApprovalThresholds } from "../../../src/approvals/index.js";
import { auditedChanges, cellChanges, instructionChanges, judgeCorrection } from "../../../src/gate/index.js";
import type { PayoutInstruction } from "../../../src/intake/index.js";

const policy = { thresholds: parseApprovalThresholds("USD:1000"), required: 1, expiresHours: 72 };

function instruction(over: Partial<PayoutInstruction> = {}): PayoutInstruction {
  return {
    rowNumber: 2,
    rowKey: "R1",
    reference: "R1",
    originatingAccountId: "acct_ops",
    receivingAccountId: "acct_vendor",
    amount: 513,
    currency: "USD",
    deliveryPreference: "standard-ach",
    deliveryResolvedFromBlank: false,
    payerMemo: "memo",
    recipientNote: undefined,
    purpose: undefined,
    attachment: undefined,
    metadata: {},
    ...over,
  };
}

describe("instructionChanges", () => {
  it("names every change of what is paid, as the sheet wrote it, and nothing for words", () => {
    const before = { instruction: instruction(), source: { to_account: "vendor-ach", amount: 5.13 } };
    const after = {
      instruction: instruction({
        amount: 90_000_000,
        receivingAccountId: "acct_v2",
        deliveryPreference: "same-day-ach",
      }),
      source: { to_account: "vendor-ach-2", amount: "900000.00" },
    };
    expect(instructionChanges(before, after)).toEqual([
      { field: "amount", old: "5.13", new: "900000.00" },
      { field: "to_account", old: "vendor-ach", new: "vendor-ach-2" },
      { field: "delivery", old: "standard-ach", new: "same-day-ach" },
    ]);
    const memoOnly = {
      instruction: instruction({ payerMemo: "another memo" }),
      source: { to_account: "vendor-ach" },
    };
    expect(instructionChanges(before, memoOnly)).toEqual([]);
  });

  it("sees the same account under another alias as no change", () => {
    const before = { instruction: instruction(), source: { to_account: "vendor-ach" } };
    const after = { instruction: instruction(), source: { to_account: "acct_vendor" } };
    expect(instructionChanges(before, after)).toEqual([]);
    expect(cellChanges(before.source, after.source)).toEqual([
      { field: "to_account", old: "vendor-ach", new: "acct_vendor" },
    ]);
  });
});

describe("judgeCorrection", () => {
  const changed = (amount: number) => ({
    rowKey: "R1",
    before: instruction(),
    after: instruction({ amount }),
    changes: [{ field: "amount", old: "5.13", new: String(amount / 100) }],
  });

  it("holds a new instruction that reaches a threshold on a batch that never needed approval", () => {
    const j = judgeCorrection({
      policy,
      heldBefore: false,
      batchTotals: { USD: 513 },
      rows: [changed(90_000_000)],
    });
    expect(j.hold).toBe(true);
    expect(j.reasons).toMatchObject([{ currency: "USD", total: 90_000_000, threshold: 100_000 }]);
  });

  it("judges the batch's total with the correction: small corrections that tip the batch over are held", () => {
    const j = judgeCorrection({
      policy,
      heldBefore: false,
      batchTotals: { USD: 99_000 },
      rows: [changed(1_513)],
    });
    expect(j).toMatchObject({ hold: true, reasons: [{ currency: "USD", total: 100_000 }] });
    const under = judgeCorrection({
      policy,
      heldBefore: false,
      batchTotals: { USD: 50_000 },
      rows: [changed(1_513)],
    });
    expect(under.hold).toBe(false);
  });

  it("holds any new instruction on a batch that needed approval, and never an unchanged one", () => {
    expect(
      judgeCorrection({ policy, heldBefore: true, batchTotals: { USD: 513 }, rows: [changed(600)] }).hold,
    ).toBe(true);
    const unchanged = { ...changed(513), changes: [] };
    expect(
      judgeCorrection({ policy, heldBefore: true, batchTotals: { USD: 513 }, rows: [unchanged] }).hold,
    ).toBe(false);
  });
});

describe("auditedChanges", () => {
  it("keeps at most 50 changes in an entry and counts the rest", () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({
      rowNumber: i + 2,
      changes: [
        { field: "amount", old: "1", new: "2" },
        { field: "to_account", old: "a", new: "b" },
      ],
    }));
    const { changes, more } = auditedChanges(rows);
    expect(changes).toHaveLength(50);
    expect(changes[0]).toEqual({ row: 2, field: "amount", old: "1", new: "2" });
    expect(more).toBe(10);
  });
});
