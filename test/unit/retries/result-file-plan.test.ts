/**
 * Which rows a corrected result file retries (the pure plan): failed rows and corrected retryable
 * rows are retried, corrections of paid or in-flight rows are refused, rows that are not the batch's
 * are refused, and batch rows left out of the file are left alone.
 */
import { describe, expect, it } from "vitest";
import type { RowState } from "../../../src/batches/index.js";
import { APPROVALS_COLUMN, RESULT_COLUMNS } from "../../../src/results/index.js";
import {
  batchIdCandidates,
  type DroppedRow,
  isResultFileHeader,
  layoutMismatch,
  type PlannedBatchRow,
  planResultFileRetry,
  resultColumnCount,
} from "../../../src/retries/index.js";
import { idempotencyKeyFor } from "../../../src/row-identity/index.js";
import type { SheetCell, SheetColumn } from "../../../src/sheets/index.js";

const BATCH = {
  id: "b20261122T033745-1a2b3c4d",
  entityId: "me",
  sheet: { columns: ["Reference", "Amount", "Memo"], keys: ["reference", "amount", "payer_memo"] },
};

function column(original: string, index: number): SheetColumn {
  return { index, letter: String.fromCharCode(65 + index), original, canonical: null, key: original };
}

function text(value: string): SheetCell {
  return value === "" ? { text: "", kind: "empty" } : { text: value, kind: "string" };
}

function batchRow(
  rowNumber: number,
  reference: string | undefined,
  state: RowState,
  source: Record<string, string | number>,
): PlannedBatchRow {
  return {
    rowKey: reference ?? `#${rowNumber}`,
    rowNumber,
    reference,
    source: { ...(reference ? { reference } : {}), ...source },
    state,
    attempt: 1,
    requoteGeneration: 0,
  };
}

function dropped(fileRowNumber: number, cells: string[], idempotencyKey?: string): DroppedRow {
  return { fileRowNumber, cells: cells.map(text), idempotencyKey };
}

function plan(rows: PlannedBatchRow[], file: DroppedRow[], invalid: string[] = []) {
  return planResultFileRetry({ batch: BATCH, rows, invalidReferences: new Set(invalid), dropped: file });
}

describe("recognising a result file", () => {
  it("is a result file only when the header ends in the ten result columns, in order", () => {
    const own = ["reference", "amount"].map(column);
    const result = [...own, ...RESULT_COLUMNS.map((c, i) => column(c, i + 2))];
    expect(isResultFileHeader({ columns: result })).toBe(true);
    expect(isResultFileHeader({ columns: own })).toBe(false);
    const swapped = [...result];
    [swapped[2], swapped[3]] = [swapped[3]!, swapped[2]!];
    expect(isResultFileHeader({ columns: swapped })).toBe(false);
  });

  it("recognises a result file with and without the approvals column, and its sheet columns either way", () => {
    const own = ["Reference", "Amount", "Memo"].map(column);
    const result = [...own, ...RESULT_COLUMNS.map((c, i) => column(c, i + 3))];
    const withApprovals = [...result, column(APPROVALS_COLUMN, result.length)];
    expect(resultColumnCount({ columns: result })).toBe(RESULT_COLUMNS.length);
    expect(resultColumnCount({ columns: withApprovals })).toBe(RESULT_COLUMNS.length + 1);
    expect(isResultFileHeader({ columns: withApprovals })).toBe(true);
    expect(layoutMismatch(BATCH.sheet, { columns: result })).toBeUndefined();
    expect(layoutMismatch(BATCH.sheet, { columns: withApprovals })).toBeUndefined();
    // `approvals` anywhere but last is not ours.
    const misplaced = [
      ...own,
      column(APPROVALS_COLUMN, 3),
      ...RESULT_COLUMNS.map((c, i) => column(c, i + 4)),
    ];
    expect(layoutMismatch(BATCH.sheet, { columns: misplaced })).toMatch(/not the batch's sheet columns/);
    expect(isResultFileHeader({ columns: [...own, column(APPROVALS_COLUMN, 3)] })).toBe(false);
  });

  it("reads the batch id from the name payouts gives a result file, and from renamed copies", () => {
    expect(batchIdCandidates(`payroll.${BATCH.id}.result.csv`)).toEqual([BATCH.id]);
    expect(batchIdCandidates(`payroll.${BATCH.id}.result (1).xlsx`)).toEqual([BATCH.id]);
    expect(batchIdCandidates(`payroll.my-batch.result.2.csv`)).toEqual(["my-batch"]);
    expect(batchIdCandidates(`fixed ${BATCH.id} april.csv`)).toEqual([BATCH.id]);
    expect(batchIdCandidates("payroll.csv")).toEqual([]);
  });
});

describe("planning a result file retry", () => {
  it("retries a failed row as it was, and with its corrections once they changed", () => {
    const decisions = plan(
      [
        batchRow(2, "A", "failed", { amount: "100.13", payer_memo: "m" }),
        batchRow(3, "B", "rejected", { amount: "200.00", payer_memo: "m" }),
      ],
      [dropped(2, ["A", "100.13", "m"]), dropped(3, ["B", "250.00", "m"])],
    );
    expect(decisions).toMatchObject([
      { kind: "retry", batchRow: { rowKey: "A" }, changedColumns: [] },
      { kind: "retry", batchRow: { rowKey: "B" }, changedColumns: ["Amount"] },
    ]);
  });

  it("refuses a changed row that is paid or in flight, and leaves unchanged ones alone", () => {
    const decisions = plan(
      [
        batchRow(2, "PAID", "completed", { amount: "100.00", payer_memo: "m" }),
        batchRow(3, "FLYING", "in-progress", { amount: "100.00", payer_memo: "m" }),
        batchRow(4, "DONE", "completed", { amount: "100.00", payer_memo: "m" }),
      ],
      [
        dropped(2, ["PAID", "100.00", "new memo"]),
        dropped(3, ["FLYING", "999.00", "m"]),
        dropped(4, ["DONE", "100.00", "m"]),
      ],
    );
    expect(decisions[0]).toMatchObject({
      kind: "refused",
      reason: expect.stringMatching(/"Memo" changed.*already paid/),
    });
    expect(decisions[1]).toMatchObject({
      kind: "refused",
      reason: expect.stringMatching(/"Amount" changed.*in flight/),
    });
    expect(decisions[2]).toMatchObject({
      kind: "left-alone",
      reason: expect.stringMatching(/unchanged; already paid/),
    });
  });

  it("does not count a reformatted amount as a correction", () => {
    const [decision] = plan(
      [batchRow(2, "PAID", "completed", { amount: "1250.00", payer_memo: "m" })],
      [
        {
          fileRowNumber: 2,
          cells: [text("PAID"), { text: "1250", kind: "number", number: 1250 }, text("m")],
          idempotencyKey: undefined,
        },
      ],
    );
    expect(decision).toMatchObject({ kind: "left-alone" });
  });

  it("refuses rows that are not the batch's or appear twice, and leaves out-of-file rows alone", () => {
    const decisions = plan(
      [batchRow(2, "A", "failed", { amount: "1.00" }), batchRow(3, "B", "failed", { amount: "1.00" })],
      [
        dropped(2, ["A", "1.00", ""]),
        dropped(3, ["A", "2.00", ""]),
        dropped(4, ["NEW", "1.00", ""]),
        dropped(5, ["BAD", "x", ""]),
      ],
      ["BAD"],
    );
    expect(decisions).toMatchObject([
      { kind: "retry", row: { fileRowNumber: 2 } },
      { kind: "refused", row: { fileRowNumber: 3 }, reason: expect.stringContaining("file row 2") },
      { kind: "refused", row: { fileRowNumber: 4 }, reason: expect.stringContaining("rows cannot be added") },
      {
        kind: "refused",
        row: { fileRowNumber: 5 },
        reason: expect.stringContaining("invalid in the original sheet"),
      },
      { kind: "not-in-file", batchRow: { rowKey: "B" } },
    ]);
  });

  it("matches a row without a reference by its idempotency_key, and refuses a reference added to it", () => {
    const noRef = batchRow(7, undefined, "failed", { amount: "5.00" });
    const key = idempotencyKeyFor({ entityId: "me", batchId: BATCH.id, rowKey: "#7", attempt: 1 });
    expect(plan([noRef], [dropped(2, ["", "6.00", ""], key)])).toMatchObject([
      { kind: "retry", batchRow: { rowKey: "#7" }, changedColumns: ["Amount"] },
    ]);
    expect(plan([noRef], [dropped(2, ["NEWREF", "5.00", ""], key)])[0]).toMatchObject({ kind: "refused" });
    expect(plan([noRef], [dropped(2, ["", "5.00", ""], "not-a-key")])[0]).toMatchObject({
      kind: "refused",
      reason: expect.stringContaining("cannot be matched"),
    });
  });
});
