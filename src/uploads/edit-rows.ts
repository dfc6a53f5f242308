/**
 * Correcting rows of an upload in the console: the new cell values are kept as edits (the sheet file
 * is written with them when the upload is submitted, sheet-copy.ts) and each corrected row is checked
 * again at once by the same row checks as intake (src/intake's checkRow, the attachment file, the
 * eligibility tool, its reference against the other rows'), so the page shows the new verdict.
 * The cost is that of the corrected rows, never of the whole sheet; submitting validates the whole
 * corrected sheet again, as every submission does.
 */
import path from "node:path";
import { PayoutsError } from "../errors/index.js";
import {
  checkAttachmentFile,
  checkRow,
  eligibilityProblem,
  fetchLiveContext,
  type IntakeApi,
  type Problem,
} from "../intake/index.js";
import type { SheetRow } from "../sheets/types.js";
import { cellText, expandCell, type StoredRow, type UploadRecord, type UploadStore } from "./upload-store.js";

export interface RowEdit {
  row: number;
  /** New cell texts by column header (as the sheet heads it). */
  cells: Record<string, string>;
}

export class EditError extends PayoutsError {
  override readonly name = "EditError";
  constructor(message: string) {
    super("INVALID_REQUEST", message, { kind: "usage" });
  }
}

/** Longest text a corrected cell may hold. */
const MAX_CELL = 2000;

export async function editRows(
  store: UploadStore,
  upload: UploadRecord,
  edits: readonly RowEdit[],
  api: IntakeApi,
): Promise<{ record: UploadRecord; rows: Map<number, StoredRow> }> {
  const { header } = upload;
  const keyOf = new Map(header.columns.map((c) => [c.original, c.key]));
  for (const e of edits) {
    for (const [column, text] of Object.entries(e.cells)) {
      if (!keyOf.has(column)) throw new EditError(`row ${e.row}: the sheet has no column "${column}"`);
      if (text.length > MAX_CELL)
        throw new EditError(`row ${e.row}, ${column}: at most ${MAX_CELL} characters`);
    }
  }
  const stored = await store.rows(
    upload.id,
    edits.map((e) => String(e.row)),
  );
  const missing = edits.find((e) => !stored.has(e.row));
  if (missing) throw new EditError(`the sheet has no row ${missing.row}`);
  const live = await fetchLiveContext(api);
  const sheetDir = path.dirname(upload.path);
  const referenceKey = header.columns.find((c) => c.canonical === "reference")?.key;
  const record = { ...upload, totals: upload.totals.map((t) => ({ ...t })) };
  const out = new Map<number, StoredRow>();
  for (const e of edits) {
    const before = stored.get(e.row)!;
    const cells = before.c.slice();
    const changed: Record<string, string> = { ...(await store.editsOf(upload.id, e.row)) };
    for (const [column, text] of Object.entries(e.cells)) {
      const index = header.columns.findIndex((c) => c.original === column);
      cells[index] = text;
      changed[header.columns[index]!.key] = text;
    }
    const row: SheetRow = {
      rowNumber: e.row,
      cells: Object.fromEntries(header.columns.map((c, i) => [c.key, expandCell(cells[i])])),
    };
    const check = checkRow(row, { live, header, sheetDir });
    const problems: Problem[] = [...check.problems];
    let instruction = check.instruction;
    // The reference against the other rows: the first row to use one keeps it.
    const oldRef = referenceKey
      ? cellText(before.c[header.columns.findIndex((c) => c.key === referenceKey)]).trim()
      : "";
    const reference = instruction?.reference ?? (referenceKey ? row.cells[referenceKey]?.text.trim() : "");
    if (oldRef && oldRef !== reference) await store.releaseReference(upload.id, oldRef, e.row);
    if (reference) {
      const owner = await store.referenceOwner(upload.id, reference);
      if (owner !== undefined && owner !== e.row) {
        problems.push({
          row: e.row,
          column: header.columns.find((c) => c.key === referenceKey)?.original ?? "reference",
          code: "REFERENCE_DUPLICATE",
          message: `reference "${reference}" is already used on row ${owner}; every payout needs its own reference`,
        });
      } else {
        await store.claimReference(upload.id, reference, e.row);
      }
    }
    if (check.attachmentFile) {
      const verdict = await checkAttachmentFile(check.attachmentFile, sheetDir);
      if (!verdict.ok) {
        problems.push({
          row: e.row,
          column: header.columns.find((c) => c.canonical === "attachment")?.original ?? "attachment",
          code: verdict.code,
          message: verdict.message,
        });
      } else if (instruction) {
        instruction = { ...instruction, attachment: { kind: "file", path: verdict.realPath } };
      }
    }
    if (instruction && check.needsEligibilityCheck && problems.length === 0) {
      const refusal = await eligibilityProblem(api, instruction);
      if (refusal) {
        problems.push({
          row: e.row,
          column: header.columns.find((c) => c.canonical === "delivery")?.original ?? "delivery",
          ...refusal,
        });
      }
    }
    const valid = problems.length === 0 && instruction !== undefined && upload.sheetProblems.length === 0;
    const after: StoredRow = {
      c: cells,
      p: problems,
      ...(valid ? { m: [instruction!.amount, instruction!.currency] } : {}),
    };
    // Counts and totals follow the row from its old verdict to its new one.
    const wasValid = before.m !== undefined;
    if (wasValid) addTotal(record, before.m![1], -before.m![0], -1);
    if (valid) addTotal(record, after.m![1], after.m![0], 1);
    record.validRows += (valid ? 1 : 0) - (wasValid ? 1 : 0);
    record.invalidRows = record.rows - record.validRows;
    record.rowProblems += problems.length - before.p.length;
    const firstEdit = Object.keys(await store.editsOf(upload.id, e.row)).length === 0;
    if (firstEdit) record.editedRows += 1;
    await store.putEdits(upload.id, e.row, changed);
    await store.putRow(upload.id, e.row, after);
    out.set(e.row, after);
  }
  record.totals = record.totals
    .filter((t) => t.rows > 0)
    .sort((a, b) => a.currency.localeCompare(b.currency));
  await store.save(record);
  return { record, rows: out };
}

function addTotal(record: UploadRecord, currency: string, minor: number, rows: number): void {
  let t = record.totals.find((x) => x.currency === currency);
  if (!t) {
    t = { currency, rows: 0, minor: 0 };
    record.totals.push(t);
  }
  t.rows += rows;
  t.minor += minor;
}
