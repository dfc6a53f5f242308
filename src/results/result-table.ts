/**
 * The rows of a batch's result file (pure: no I/O). docs/operating.md "The result file": the result keeps
 * every original column of the sheet in order, with the cells as submitted (numbers stay numbers),
 * and appends the ten result columns. Rows come in sheet order, valid and invalid rows interleaved by
 * row number, so the result reads like the sheet it answers.
 *
 * Nothing here may carry a secret: the row records hold no API key, webhook secret or bank number of
 * ours, and the result shows only the sheet's own cells plus what the service said about the payment.
 */
import type { InvalidRowRecord } from "../batches/batch-store.js";
import {
  type BatchRecord,
  type ResultState,
  type RowOutcome,
  type RowRecord,
  resultStatusOf,
  rowIdempotencyKey,
} from "../batches/index.js";
import { plainErrorMessage } from "../error-codes/index.js";
import type { CellValue, TableRow } from "../files/index.js";
import { currencyExponent, formatMinor } from "../money/index.js";

/** The columns every result file appends after the sheet's own, in this order. */
export const RESULT_COLUMNS = [
  "status",
  "payment_id",
  "payment_status",
  "debit_usd",
  "fx_rate",
  "error_code",
  "error_message",
  "attempt",
  "idempotency_key",
  "updated_at",
] as const;
export type ResultColumn = (typeof RESULT_COLUMNS)[number];

/**
 * The column after {@link RESULT_COLUMNS} in the result file of a batch that needed approval: who
 * approved it and when (or who rejected it, or when it expired), the same on every row. A batch that
 * needed none has no such column, so its result file is as it always was.
 */
export const APPROVALS_COLUMN = "approvals";

/**
 * Columns shown when a batch carries no sheet layout (submitted by a program, not from a sheet): the
 * row number and reference, so every line of the result can still be matched to its payout.
 */
export const FALLBACK_SOURCE_COLUMNS = ["row", "reference"] as const;

export type ResultBatch = Pick<BatchRecord, "id" | "entityId" | "createdAt" | "sheet">;

/**
 * The header of the result file: the sheet's columns as written, then {@link RESULT_COLUMNS}, then
 * {@link APPROVALS_COLUMN} when the batch needed approval.
 */
export function resultColumns(batch: Pick<BatchRecord, "sheet">, withApprovals = false): string[] {
  return [...sourceColumns(batch), ...RESULT_COLUMNS, ...(withApprovals ? [APPROVALS_COLUMN] : [])];
}

/** 0-based index of our `status` column (the sheet may have a `status` column of its own before it). */
export function statusColumnIndex(batch: Pick<BatchRecord, "sheet">): number {
  return sourceColumns(batch).length;
}

function sourceColumns(batch: Pick<BatchRecord, "sheet">): readonly string[] {
  return hasLayout(batch) ? batch.sheet.columns : FALLBACK_SOURCE_COLUMNS;
}

function hasLayout(batch: Pick<BatchRecord, "sheet">): boolean {
  return batch.sheet.columns.length > 0;
}

/** The cells of the sheet's own columns for one row, in column order. */
function sourceCells(
  batch: Pick<BatchRecord, "sheet">,
  rowNumber: number,
  source: RowRecord["source"],
  reference: string | undefined,
): CellValue[] {
  if (!hasLayout(batch)) return [rowNumber, reference ?? null];
  // Keys are positional: a sheet may repeat a header, its keys are made unique (SheetLayout.keys).
  return batch.sheet.columns.map((_, c) => {
    const key = batch.sheet.keys[c];
    const value = key === undefined ? undefined : source?.[key];
    return value === undefined ? null : value;
  });
}

/** USD minor units as a number of dollars, exactly (via the decimal text, never `minor / 100`). */
export function usdFromMinor(minor: number | undefined): number | null {
  if (minor === undefined || !Number.isFinite(minor)) return null;
  return Number(formatMinor(minor, "USD"));
}

/** One result line for a row that went into the pipeline. */
export function resultRowOfRow(batch: ResultBatch, row: RowOutcome): TableRow {
  const status: ResultState = resultStatusOf(row.state);
  const result: Record<ResultColumn, CellValue> = {
    status,
    payment_id: row.paymentId ?? null,
    payment_status: row.paymentStatus ?? null,
    debit_usd: usdFromMinor(row.debitUsd),
    fx_rate: row.fxRate !== undefined && Number.isFinite(row.fxRate) ? row.fxRate : null,
    error_code: row.errorCode ?? null,
    // What happened and what to do, from the one error-code table (with the service's own words).
    error_message: row.errorCode
      ? plainErrorMessage(row.errorCode, row.errorMessage)
      : (row.errorMessage ?? null),
    attempt: row.attempt,
    idempotency_key: rowIdempotencyKey(batch, row),
    updated_at: row.updatedAt || null,
  };
  return [
    ...sourceCells(batch, row.rowNumber, row.source, row.instruction.reference),
    ...RESULT_COLUMNS.map((c) => result[c]),
  ];
}

/** Stored problem messages read "CODE: message" (see submit-sheet.ts); the code is the part before. */
const CODED_MESSAGE = /^([A-Z][A-Z0-9_]*):\s/;

/** One result line for a row that failed validation: `invalid`, its first problem's code, all messages. */
export function resultRowOfInvalid(batch: ResultBatch, row: InvalidRowRecord): TableRow {
  const first = row.problems[0]?.message;
  const result: Record<ResultColumn, CellValue> = {
    status: "invalid" satisfies ResultState,
    payment_id: null,
    payment_status: null,
    debit_usd: null,
    fx_rate: null,
    error_code: (first === undefined ? undefined : CODED_MESSAGE.exec(first)?.[1]) ?? "INVALID_ROW",
    error_message: row.problems.map((p) => p.message).join("; ") || null,
    attempt: null,
    // Never sent, so no key: a blank cell says so more plainly than a key nobody used.
    idempotency_key: null,
    // Invalid rows were recorded with the batch and never change.
    updated_at: batch.createdAt || null,
  };
  const reference = row.source?.reference;
  return [
    ...sourceCells(batch, row.rowNumber, row.source, typeof reference === "string" ? reference : undefined),
    ...RESULT_COLUMNS.map((c) => result[c]),
  ];
}

/** Emits the invalid rows that come before each valid row, so the two sorted lists merge in one pass. */
function invalidInterleaver(batch: ResultBatch, invalid: readonly InvalidRowRecord[]) {
  let next = 0;
  return {
    before(rowNumber: number): TableRow[] {
      const out: TableRow[] = [];
      while (next < invalid.length && invalid[next]!.rowNumber < rowNumber) {
        out.push(resultRowOfInvalid(batch, invalid[next++]!));
      }
      return out;
    },
    rest(): TableRow[] {
      return this.before(Number.POSITIVE_INFINITY);
    },
  };
}

/**
 * The result lines in sheet order: `rows` (valid rows, ascending row number, possibly streamed in
 * chunks) merged with `invalid` (ascending row number). Holds one row at a time beyond `invalid`.
 * With `approvals` (the batch needed approval), each line ends with that cell.
 */
export async function* resultTableRows(
  batch: ResultBatch,
  rows: Iterable<RowOutcome> | AsyncIterable<RowOutcome>,
  invalid: readonly InvalidRowRecord[],
  approvals?: string,
): AsyncGenerator<TableRow> {
  const interleave = invalidInterleaver(batch, invalid);
  const end = (line: TableRow): TableRow => (approvals === undefined ? line : [...line, approvals]);
  for await (const row of rows) {
    for (const line of interleave.before(row.rowNumber)) yield end(line);
    yield end(resultRowOfRow(batch, row));
  }
  for (const line of interleave.rest()) yield end(line);
}

/** The whole table at once (rows in any order), for small batches and tests. */
export function buildResultTable(
  batch: ResultBatch,
  rows: readonly RowOutcome[],
  invalid: readonly InvalidRowRecord[],
): { columns: string[]; rows: TableRow[] } {
  const byNumber = (a: { rowNumber: number }, b: { rowNumber: number }) => a.rowNumber - b.rowNumber;
  const interleave = invalidInterleaver(batch, [...invalid].sort(byNumber));
  const out: TableRow[] = [];
  for (const row of [...rows].sort(byNumber)) {
    out.push(...interleave.before(row.rowNumber), resultRowOfRow(batch, row));
  }
  out.push(...interleave.rest());
  return { columns: resultColumns(batch), rows: out };
}

/**
 * The number formats of a result file's numeric cells, so an XLSX shows amounts as the sheet meant
 * them: the sheet's `amount` column in its row's currency's decimals (`150.00`, JPY `5000`), and
 * `debit_usd` in cents. Other numbers keep Excel's General format.
 */
export function resultNumberFormats(
  batch: Pick<BatchRecord, "sheet">,
): (row: TableRow, column: number) => string | undefined {
  const source = sourceColumns(batch);
  const keys = hasLayout(batch) ? batch.sheet.keys : [];
  const amountAt = keys.indexOf("amount");
  const currencyAt = keys.indexOf("currency");
  const debitAt = source.length + RESULT_COLUMNS.indexOf("debit_usd");
  const decimals = (exponent: number) => (exponent > 0 ? `0.${"0".repeat(exponent)}` : "0");
  return (row, column) => {
    if (column === debitAt) return "0.00";
    if (column !== amountAt || amountAt < 0) return undefined;
    const cell = currencyAt >= 0 ? row[currencyAt] : undefined;
    const currency = typeof cell === "string" && cell.trim() !== "" ? cell.trim().toUpperCase() : "USD";
    const exponent = currencyExponent(currency);
    return exponent === undefined ? undefined : decimals(exponent);
  };
}
