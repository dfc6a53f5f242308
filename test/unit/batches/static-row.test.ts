import { describe, expect, it } from "vitest";
import { decodeStaticRow, encodeStaticRow, staticRowNumber } from "../../../src/batches/index.js";
import type { PayoutInstruction } from "../../../src/intake/payout-instruction.js";

const instruction: PayoutInstruction = {
  rowNumber: 12,
  rowKey: "INV-12",
  reference: "INV-12",
  originatingAccountId: "acct_ops",
  receivingAccountId: "acct_vendor",
  amount: 12_345,
  currency: "EUR",
  deliveryPreference: "standard-ach",
  deliveryResolvedFromBlank: true,
  payerMemo: "March, services",
  recipientNote: undefined,
  purpose: "Consulting",
  attachment: { kind: "file", path: "/tmp/a b.pdf" },
  metadata: { cost_center: "CC-1" },
};

describe("static row records", () => {
  it("round-trip an instruction and its cells, in fewer bytes than the object form", () => {
    const row = { rowNumber: 12, instruction, source: { reference: "INV-12", amount: 123.45 } };
    const text = encodeStaticRow(row);
    expect(decodeStaticRow("INV-12", text)).toEqual(row);
    expect(text.length).toBeLessThan(JSON.stringify(row).length * 0.7);
    expect(staticRowNumber(text)).toBe(12);
  });

  it("round-trip a row without a reference or cells (its key is #<rowNumber>)", () => {
    const bare: PayoutInstruction = {
      ...instruction,
      rowKey: "#3",
      rowNumber: 3,
      reference: undefined,
      payerMemo: undefined,
      purpose: undefined,
      attachment: undefined,
      deliveryResolvedFromBlank: false,
      metadata: {},
    };
    const text = encodeStaticRow({ rowNumber: 3, instruction: bare });
    expect(decodeStaticRow("#3", text)).toEqual({ rowNumber: 3, instruction: bare });
  });

  it("read records an earlier version wrote as objects", () => {
    const older = JSON.stringify({ rowNumber: 12, instruction, source: { reference: "INV-12" } });
    expect(decodeStaticRow("INV-12", older)).toEqual({
      rowNumber: 12,
      instruction,
      source: { reference: "INV-12" },
    });
    expect(staticRowNumber(older)).toBe(12);
  });
});
