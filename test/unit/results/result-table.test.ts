import { describe, expect, it } from "vitest";
import { achInstruction } from "../../../bench/lib/sample-rows.js";
import type { BatchRecord, InvalidRowRecord, RowRecord } from "../../../src/batches/index.js";
import { rowIdempotencyKey } from "../../../src/batches/index.js";
import {
  buildResultTable,
  RESULT_COLUMNS,
  resultColumns,
  resultTableRows,
  statusColumnIndex,
  usdFromMinor,
} from "../../../src/results/index.js";

const batch: BatchRecord = {
  id: "b20250101T000000-abcd1234",
  fileSha256: "0".repeat(64),
  sourceName: "payroll.xlsx",
  entityId: "me",
  createdAt: "2025-01-01T00:00:00.000Z",
  rowCount: 2,
  invalidCount: 1,
  rowsRecorded: true,
  enqueueComplete: true,
  archivePath: undefined,
  sheet: {
    // A user's own "Status" column and an unnamed extra column come before ours.
    columns: ["Reference", "Amount", "status", "Cost Centre"],
    keys: ["reference", "amount", "status", "Cost Centre"],
    format: "xlsx",
  },
};

function row(overrides: Partial<RowRecord>): RowRecord {
  return {
    batchId: batch.id,
    rowKey: "INV-1",
    rowNumber: 2,
    instruction: achInstruction(2, "INV-1", "INV-1", 125_000),
    source: { reference: "INV-1", amount: 1250, status: "approved", "Cost Centre": '=HYPERLINK("x")' },
    state: "completed",
    attempt: 1,
    requoteGeneration: 0,
    paymentId: "pay_1",
    paymentStatus: "completed",
    debitUsd: undefined,
    fxRate: undefined,
    quote: undefined,
    sentBodyHash: undefined,
    sentGeneration: undefined,
    errorCode: undefined,
    errorMessage: undefined,
    updatedAt: "2025-01-01T01:00:00.000Z",
    history: [],
    ...overrides,
  };
}

const invalid: InvalidRowRecord = {
  rowNumber: 3,
  source: { reference: "INV-2", amount: "12,34", status: "approved" },
  problems: [
    { column: "amount", message: "AMOUNT_AMBIGUOUS: amount 12,34 is ambiguous" },
    { column: "to_account", message: "ACCOUNT_NOT_FOUND: no account acct_x" },
  ],
};

describe("result table", () => {
  it("keeps every sheet column in order and appends the ten result columns", () => {
    expect(resultColumns(batch)).toEqual(["Reference", "Amount", "status", "Cost Centre", ...RESULT_COLUMNS]);
    expect(statusColumnIndex(batch)).toBe(4);
  });

  it("shows a paid row with its sheet cells as submitted (numbers stay numbers) and its payment", () => {
    const { rows } = buildResultTable(batch, [row({})], []);
    const r = row({});
    expect(rows).toEqual([
      [
        "INV-1",
        1250,
        "approved",
        '=HYPERLINK("x")',
        "completed",
        "pay_1",
        "completed",
        null,
        null,
        null,
        null,
        1,
        rowIdempotencyKey(batch, r),
        "2025-01-01T01:00:00.000Z",
      ],
    ]);
  });

  it("shows an FX row's USD debit in dollars (exactly) and its rate as numbers", () => {
    const fx = row({ debitUsd: 1_234_567, fxRate: 0.9231 });
    const [line] = buildResultTable(batch, [fx], []).rows;
    expect(line?.[4 + RESULT_COLUMNS.indexOf("debit_usd")]).toBe(12345.67);
    expect(line?.[4 + RESULT_COLUMNS.indexOf("fx_rate")]).toBe(0.9231);
    expect(usdFromMinor(29)).toBe(0.29);
    expect(usdFromMinor(-5)).toBe(-0.05);
  });

  it("shows an invalid row with its first problem's code and every problem, and no key", () => {
    const [line] = buildResultTable(batch, [], [invalid]).rows;
    const at = (c: (typeof RESULT_COLUMNS)[number]) => line?.[4 + RESULT_COLUMNS.indexOf(c)];
    expect(line?.slice(0, 4)).toEqual(["INV-2", "12,34", "approved", null]);
    expect(at("status")).toBe("invalid");
    expect(at("error_code")).toBe("AMOUNT_AMBIGUOUS");
    expect(at("error_message")).toBe(
      "AMOUNT_AMBIGUOUS: amount 12,34 is ambiguous; ACCOUNT_NOT_FOUND: no account acct_x",
    );
    expect(at("idempotency_key")).toBeNull();
    expect(at("attempt")).toBeNull();
    expect(at("updated_at")).toBe(batch.createdAt);
  });

  it("shows a rejected retry with its attempt, error and the key of that attempt", () => {
    const r = row({
      state: "rejected",
      attempt: 2,
      requoteGeneration: 1,
      paymentId: undefined,
      paymentStatus: undefined,
      errorCode: "REFERENCE_REUSED",
      errorMessage: "reference INV-1 was already used",
    });
    const [line] = buildResultTable(batch, [r], []).rows;
    expect(line?.slice(4)).toEqual([
      "rejected",
      null,
      null,
      null,
      null,
      "REFERENCE_REUSED",
      "This reference already paid another payout (an earlier batch or another system). (reference INV-1 was already used) Next: Nothing was paid for this row. If it is a new payout, give it a new reference in a new sheet.",
      2,
      rowIdempotencyKey(batch, r),
      "2025-01-01T01:00:00.000Z",
    ]);
    expect(rowIdempotencyKey(batch, r)).not.toBe(rowIdempotencyKey(batch, row({})));
  });

  it("interleaves valid and invalid rows in sheet order, streamed or at once", async () => {
    const valid = [row({ rowNumber: 2 }), row({ rowNumber: 5, rowKey: "INV-5" })];
    const bad = [{ ...invalid, rowNumber: 1 }, invalid, { ...invalid, rowNumber: 9 }];
    const statuses = (lines: readonly (readonly unknown[])[]) => lines.map((l) => l[4]);
    const atOnce = buildResultTable(batch, [...valid].reverse(), [...bad].reverse()).rows;
    expect(statuses(atOnce)).toEqual(["invalid", "completed", "invalid", "completed", "invalid"]);
    const streamed: unknown[][] = [];
    for await (const line of resultTableRows(batch, valid, bad)) streamed.push([...line]);
    expect(streamed).toEqual(atOnce);
  });

  it("without a sheet layout, shows the row number and reference so lines can be matched", () => {
    const bare = { ...batch, sheet: { columns: [], keys: [], format: "csv" as const } };
    const { columns, rows } = buildResultTable(bare, [row({ source: undefined })], []);
    expect(columns.slice(0, 3)).toEqual(["row", "reference", "status"]);
    expect(rows[0]?.slice(0, 3)).toEqual([2, "INV-1", "completed"]);
  });
});
