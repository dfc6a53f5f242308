/**
 * What a corrected result file dropped back into the inbox asks for (pure: no I/O). The file is the
 * batch's own result file: the sheet's columns, then the ten result columns. Each of its rows is
 * matched to the batch row it answers and compared with what the batch recorded:
 *
 *   row failed/rejected/error/canceled         → retried (with the corrections, once re-validated)
 *   row changed, but paid or in flight         → REFUSED: never paid again, never changed under a payment
 *   row unchanged and not retryable            → left alone
 *   row not in the batch, or there twice       → refused
 *   batch row missing from the file            → left alone
 *
 * Matching: by the row's `reference` (its key), else, for a row without one, by its
 * `idempotency_key` cell. Row numbers are not used: a result file numbers its rows from its own
 * header on line 1, while the batch numbered them as the original sheet showed them (title rows and
 * blank lines included), so the same number can name different rows.
 */
import {
  GENERATED_BATCH_ID_SOURCE,
  type RowRecord,
  type RowState,
  type SheetLayout,
  type SourceValues,
} from "../batches/index.js";
import { APPROVALS_COLUMN, RESULT_COLUMNS } from "../results/index.js";
import { BATCH_ID_SOURCE, idempotencyKeyFor } from "../row-identity/index.js";
import type { SheetCell, SheetHeader } from "../sheets/index.js";
import { whyNotRetryable } from "./row-selection.js";

/** A generated batch id (`newBatchId`): what a renamed result file's name is searched for. */
const GENERATED_BATCH_ID = new RegExp(GENERATED_BATCH_ID_SOURCE, "g");
/** `<sheet>.<batchId>.result[ (1)|.2].<ext>`: the name `payouts` gives a result file. */
const RESULT_FILE_NAME = new RegExp(
  `\\.(${BATCH_ID_SOURCE})\\.result(?:\\.\\d+| ?\\(\\d+\\))?\\.(?:csv|xlsx)$`,
  "i",
);

/**
 * How many of the header's last columns are ours: the ten result columns in order, followed by the
 * `approvals` column when the batch needed approval. Undefined when the header is not a result file's.
 */
export function resultColumnCount(header: Pick<SheetHeader, "columns">): number | undefined {
  const names = header.columns.map((c) => c.original.trim().toLowerCase());
  const approvals = names[names.length - 1] === APPROVALS_COLUMN ? 1 : 0;
  const tail = names.slice(names.length - approvals - RESULT_COLUMNS.length, names.length - approvals);
  const matches =
    tail.length === RESULT_COLUMNS.length && RESULT_COLUMNS.every((name, i) => tail[i] === name);
  return matches ? RESULT_COLUMNS.length + approvals : undefined;
}

/** True when the header ends with our result columns (and, for a batch that needed approval, `approvals`). */
export function isResultFileHeader(header: Pick<SheetHeader, "columns">): boolean {
  return resultColumnCount(header) !== undefined;
}

/**
 * Batch ids the file name may carry, most likely first: the id in `payouts`' own result file name,
 * then any generated batch id found in a renamed copy. The caller keeps the first one that exists.
 */
export function batchIdCandidates(fileName: string): string[] {
  const out: string[] = [];
  const named = RESULT_FILE_NAME.exec(fileName)?.[1];
  if (named) out.push(named);
  for (const m of fileName.matchAll(GENERATED_BATCH_ID)) if (!out.includes(m[0])) out.push(m[0]);
  return out;
}

/** Why the dropped file's own columns cannot be the batch's sheet columns, or undefined when they are. */
export function layoutMismatch(
  layout: Pick<SheetLayout, "columns">,
  header: Pick<SheetHeader, "columns">,
): string | undefined {
  const ours = resultColumnCount(header) ?? RESULT_COLUMNS.length;
  const own = header.columns.slice(0, header.columns.length - ours).map((c) => c.original);
  const expected = layout.columns;
  if (own.length === expected.length && own.every((c, i) => c.trim() === (expected[i] ?? "").trim())) {
    return undefined;
  }
  return (
    `its columns before "status" (${own.map((c) => `"${c}"`).join(", ")}) are not the batch's sheet ` +
    `columns (${expected.map((c) => `"${c}"`).join(", ")}); keep the columns as the result file has them`
  );
}

/** One data row of the dropped file, its cells already read back to what the operator typed. */
export interface DroppedRow {
  /** The row number in the dropped file. */
  fileRowNumber: number;
  /** The sheet's own columns, by position (`SheetLayout.columns`). */
  cells: readonly SheetCell[];
  /** The `idempotency_key` result cell (blank: undefined). */
  idempotencyKey: string | undefined;
}

/** What the plan needs of a batch row. */
export type PlannedBatchRow = Pick<
  RowRecord,
  "rowKey" | "rowNumber" | "source" | "state" | "attempt" | "requoteGeneration"
> & { reference: string | undefined; errorCode?: string | undefined };

export type RowDecision =
  /** A new attempt; `changedColumns` empty: as recorded, else re-validated with the corrections first. */
  | { kind: "retry"; row: DroppedRow; batchRow: PlannedBatchRow; changedColumns: string[] }
  | { kind: "refused"; row: DroppedRow; batchRow?: PlannedBatchRow; reason: string }
  | { kind: "left-alone"; row: DroppedRow; batchRow: PlannedBatchRow; reason: string }
  /** A batch row the dropped file does not contain. */
  | { kind: "not-in-file"; batchRow: PlannedBatchRow; reason: string };

export interface PlanInput {
  batch: { id: string; entityId: string; sheet: Pick<SheetLayout, "columns" | "keys"> };
  rows: readonly PlannedBatchRow[];
  /** References of the batch's invalid rows (never submitted), for a clearer refusal. */
  invalidReferences: ReadonlySet<string>;
  dropped: readonly DroppedRow[];
}

/** Decides every dropped row and every batch row left out (see the module comment). */
export function planResultFileRetry(input: PlanInput): RowDecision[] {
  const { batch } = input;
  const referenceIndex = batch.sheet.columns.findIndex((_, i) => batch.sheet.keys[i] === "reference");
  const byReference = new Map<string, PlannedBatchRow>();
  const byKey = new Map<string, PlannedBatchRow>();
  for (const row of input.rows) {
    if (row.reference) byReference.set(row.reference, row);
    // Every key this row was ever sent under that a result file can show (attempts × requotes so far).
    for (let attempt = 1; attempt <= row.attempt; attempt++) {
      for (let generation = 0; generation <= row.requoteGeneration; generation++) {
        byKey.set(
          idempotencyKeyFor(
            { entityId: batch.entityId, batchId: batch.id, rowKey: row.rowKey, attempt },
            generation,
          ),
          row,
        );
      }
    }
  }

  const decisions: RowDecision[] = [];
  const seen = new Map<string, number>();
  for (const row of input.dropped) {
    const reference =
      referenceIndex < 0 ? undefined : cellText(row.cells[referenceIndex]).trim() || undefined;
    const batchRow = reference
      ? byReference.get(reference)
      : row.idempotencyKey
        ? byKey.get(row.idempotencyKey)
        : undefined;
    if (!batchRow) {
      decisions.push({ kind: "refused", row, reason: unmatchedReason(reference, input.invalidReferences) });
      continue;
    }
    const earlier = seen.get(batchRow.rowKey);
    if (earlier !== undefined) {
      decisions.push({
        kind: "refused",
        row,
        batchRow,
        reason: `the same batch row as file row ${earlier}; each row may appear once`,
      });
      continue;
    }
    seen.set(batchRow.rowKey, row.fileRowNumber);
    if ((reference ?? undefined) !== (batchRow.reference ?? undefined)) {
      decisions.push({
        kind: "refused",
        row,
        batchRow,
        reason:
          "its reference was changed: the reference is the row's identity and cannot change within a batch; " +
          "to pay it under another reference, put it in a new sheet",
      });
      continue;
    }
    const changedColumns = changedColumnsOf(batch.sheet, batchRow.source, row.cells);
    const why = whyNotRetryable(batchRow.state, batchRow.errorCode);
    if (why === undefined) {
      decisions.push({ kind: "retry", row, batchRow, changedColumns });
    } else if (changedColumns.length > 0) {
      decisions.push({
        kind: "refused",
        row,
        batchRow,
        reason: `${changedColumns.map((c) => `"${c}"`).join(", ")} changed, but the row is ${refusalOf(batchRow.state)}`,
      });
    } else {
      decisions.push({ kind: "left-alone", row, batchRow, reason: `unchanged; ${why}` });
    }
  }
  for (const batchRow of input.rows) {
    if (!seen.has(batchRow.rowKey)) {
      decisions.push({
        kind: "not-in-file",
        batchRow,
        reason: "not in the dropped file: left as it is",
      });
    }
  }
  return decisions;
}

function refusalOf(state: RowState): string {
  if (state === "completed")
    return "already paid (completed): the change is refused and it is not paid again";
  return (
    `in flight (${state}): its payment may still complete, so the change is refused; ` +
    "drop the file again once the row has failed"
  );
}

function unmatchedReason(reference: string | undefined, invalidReferences: ReadonlySet<string>): string {
  if (reference && invalidReferences.has(reference)) {
    return "invalid in the original sheet (never submitted): fix it and submit it in a new sheet";
  }
  if (reference) return `no row of this batch has reference "${reference}": rows cannot be added to a batch`;
  return (
    "no reference and no idempotency_key of this batch: it cannot be matched to a batch row " +
    "(rows cannot be added to a batch; keep the idempotency_key cell of rows without a reference)"
  );
}

/** The sheet columns whose dropped cell differs from what the batch recorded for the row. */
export function changedColumnsOf(
  layout: Pick<SheetLayout, "columns" | "keys">,
  recorded: SourceValues | undefined,
  cells: readonly SheetCell[],
): string[] {
  const changed: string[] = [];
  layout.columns.forEach((title, i) => {
    const key = layout.keys[i];
    const before = key === undefined ? undefined : recorded?.[key];
    if (!sameValue(before, cells[i], key === "amount")) changed.push(title);
  });
  return changed;
}

/**
 * Whether a cell still says what was recorded. Text compares trimmed and exactly (a lost leading zero
 * in an account id is a change). Numbers compare as numbers, and so do amounts written as text: a
 * spreadsheet that saves `1250.00` back as `1250` made no correction, and a paid row must not be
 * refused (nor a failed one re-validated) for a formatting change nobody made.
 */
function sameValue(
  recorded: string | number | undefined,
  cell: SheetCell | undefined,
  isAmount: boolean,
): boolean {
  const text = cellText(cell).trim();
  if (recorded === undefined) return text === "";
  if (typeof recorded === "number") {
    return (
      (cell?.kind === "number" && cell.number === recorded) || (text !== "" && Number(text) === recorded)
    );
  }
  const before = recorded.trim();
  if (text === before) return true;
  if (isAmount || cell?.kind === "number") {
    const a = Number(before);
    const b = cell?.kind === "number" && cell.number !== undefined ? cell.number : Number(text);
    return before !== "" && text !== "" && Number.isFinite(a) && a === b;
  }
  return false;
}

function cellText(cell: SheetCell | undefined): string {
  return cell?.text ?? "";
}
