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

  it("round-trip the content key of a row without a reference, with positional cells", () => {
    const keyed: PayoutInstruction = {
      ...instruction,
      rowKey: "#4",
      rowNumber: 4,
      reference: undefined,
      contentKey: "c0123456789abcdef0123-2",
    };
    const row = { rowNumber: 4, instruction: keyed, source: { amount: 123.45, currency: "EUR" } };
    const keys = ["amount", "currency"];
    expect(decodeStaticRow("#4", encodeStaticRow(row, keys), keys)).toEqual(row);
    expect(decodeStaticRow("#4", encodeStaticRow({ rowNumber: 4, instruction: keyed }))).toEqual({
      rowNumber: 4,
      instruction: keyed,
    });
  });

  it("refuse a record that is not in this layout's form rather than misread it", () => {
    const objectForm = JSON.stringify({ rowNumber: 12, instruction, source: { reference: "INV-12" } });
    expect(() => decodeStaticRow("INV-12", objectForm)).toThrow(/not in this layout's form/);
  });

  it("write a row's cells positionally against the batch's column keys, pointing at the instruction's strings", () => {
    const keys = [
      "reference",
      "from_account",
      "amount",
      "currency",
      "payer_memo",
      "metadata.cost_center",
      "note",
    ];
    const source = {
      reference: "INV-12",
      from_account: "ops",
      amount: 123.45,
      currency: "EUR",
      payer_memo: "March, services",
      "metadata.cost_center": "CC-1",
    };
    const row = { rowNumber: 12, instruction, source };
    const text = encodeStaticRow(row, keys);
    expect(decodeStaticRow("INV-12", text, keys)).toEqual(row);
    // No column name is repeated, and the memo and reference are not written twice.
    expect(text).not.toContain("from_account");
    expect(text.split("March, services")).toHaveLength(2);
    expect(text.split("INV-12")).toHaveLength(2);
    expect(text.length).toBeLessThan(encodeStaticRow(row).length * 0.75);
    expect(staticRowNumber(text)).toBe(12);
    // Without the keys a positional record cannot be read: an error, never a row without its cells.
    expect(() => decodeStaticRow("INV-12", text)).toThrow(/column keys/);
  });

  it("keep the object form for cells the column keys do not name (an operator's correction)", () => {
    const row = { rowNumber: 12, instruction, source: { reference: "INV-12", extra: "x" } };
    const text = encodeStaticRow(row, ["reference"]);
    expect(decodeStaticRow("INV-12", text, ["reference"])).toEqual(row);
    expect(text).toContain('"extra":"x"');
  });
});
