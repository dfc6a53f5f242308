/**
 * Validating an uploaded sheet as a whole (when it comes, and again after its columns were mapped):
 * every row against the live accounts, stored for paging (upload-store.ts), with counts, totals per
 * currency and, when it has problems, the validation report files.
 */
import path from "node:path";
import {
  type DeclaredTotals,
  type IntakeApi,
  type Problem,
  validateSheet,
  writeValidationReport,
} from "../intake/index.js";
import { readSheetIsolated } from "../sheets/index.js";
import { type CurrencyTotal, compactCell, type StoredRow, type UploadStore } from "./upload-store.js";

/** Rows written to Redis at a time. */
const CHUNK = 1000;

export interface ValidatedUpload {
  format: "csv" | "xlsx";
  rows: number;
  validRows: number;
  invalidRows: number;
  totals: CurrencyTotal[];
  sheetProblems: Problem[];
  /** A total row or declared totals that do not match the valid rows: the sheet is refused on submit. */
  controlProblems: Problem[];
  rowProblems: number;
  header: Awaited<ReturnType<typeof validateSheet>>["header"];
  reportPaths: { csv: string; xlsx: string } | undefined;
}

/** Validates the sheet at `filePath` and stores its rows under upload `id` (replacing any). */
export async function validateUpload(
  store: UploadStore,
  id: string,
  filePath: string,
  options: { api: IntakeApi; sheet: string | undefined; declared?: DeclaredTotals | undefined },
): Promise<ValidatedUpload> {
  // Read first in a thread with a bounded heap and time (as the watched folder does): an uploaded
  // file past the readers' own limits costs that thread and is refused (SheetReadError, 422), while
  // the server, which also receives webhooks, goes on. Validation then reads a file known to be sane.
  await readSheetIsolated(filePath, options.sheet ? { sheet: options.sheet } : {});
  const validation = await validateSheet(filePath, {
    api: options.api,
    ...(options.sheet ? { sheet: options.sheet } : {}),
    ...(options.declared ? { declared: options.declared } : {}),
  });
  await store.clearRows(id);
  const { header } = validation;
  const referenceKey = header.columns.find((c) => c.canonical === "reference")?.key;
  const problems: Problem[] = [...validation.sheetProblems];
  const money = new Map<string, { rows: number; minor: number }>();
  let rows = 0;
  let validRows = 0;
  let rowProblems = 0;
  let chunk: Parameters<UploadStore["appendRows"]>[1][number][] = [];
  for await (const v of validation.rows) {
    rows++;
    const stored: StoredRow = {
      c: header.columns.map((c) => compactCell(v.row.cells[c.key])),
      p: v.problems,
    };
    if (v.instruction) {
      validRows++;
      const t = money.get(v.instruction.currency) ?? { rows: 0, minor: 0 };
      t.rows++;
      t.minor += v.instruction.amount;
      money.set(v.instruction.currency, t);
      stored.m = [v.instruction.amount, v.instruction.currency];
    } else {
      problems.push(...v.problems);
      rowProblems += v.problems.length;
    }
    const reference =
      v.instruction?.reference ?? (referenceKey ? v.row.cells[referenceKey]?.text.trim() : undefined);
    chunk.push({ rowNumber: v.row.rowNumber, row: stored, reference: reference || undefined });
    if (chunk.length >= CHUNK) {
      await store.appendRows(id, chunk);
      chunk = [];
    }
  }
  await store.appendRows(id, chunk);
  problems.unshift(...validation.endProblems);
  let reportPaths: ValidatedUpload["reportPaths"];
  if (problems.length > 0) {
    const dir = path.dirname(filePath);
    reportPaths = {
      csv: path.join(dir, ".validation-report.csv"),
      xlsx: path.join(dir, ".validation-report.xlsx"),
    };
    await writeValidationReport(reportPaths.csv, problems);
    await writeValidationReport(reportPaths.xlsx, problems);
  }
  const sheetInvalid = validation.sheetProblems.length > 0;
  return {
    format: header.format,
    rows,
    validRows: sheetInvalid ? 0 : validRows,
    invalidRows: sheetInvalid ? rows : rows - validRows,
    totals: [...money.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([currency, t]) => ({ currency, rows: t.rows, minor: t.minor })),
    sheetProblems: validation.sheetProblems,
    controlProblems: validation.endProblems,
    rowProblems,
    header,
    reportPaths,
  };
}
